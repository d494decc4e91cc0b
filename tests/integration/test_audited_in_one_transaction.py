"""On the embedded store a change and its audit line commit in one SQLite transaction, on every
write path that changes a memory: a turn's supersede, a quarantine, a patch, a delete, a layer
change (explicit writes: tests/integration/test_idempotent_writes.py). A failure between the two
leaves neither, so the trail never misses a change and never names one that did not happen."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.embedded import audit_log
from agentmem.bootstrap import Container, bootstrap
from agentmem.domain.models import AuditAction, Layer, Scope, Status, Turn
from agentmem.services.admin import MemoryPatch
from agentmem.settings import load_settings

ALICE = Scope("acme", "alice")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Boom(RuntimeError):
    pass


@pytest.fixture
def container(tmp_path: Path) -> Container:
    return bootstrap(load_settings(backend="local", data_dir=tmp_path, embedder="hash"))


@pytest.fixture
def failing_audit(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def boom(conn: Any, event: Any) -> None:
        raise Boom("the audit line could not be written")

    monkeypatch.setattr(audit_log, "insert_event", boom)
    yield


def turn(message_id: str, text: str, minutes: int) -> Turn:
    return Turn(ALICE, "s-1", text, "", T0 + timedelta(minutes=minutes), message_id)


def actions(container: Container) -> list[AuditAction]:
    return [e.action for e in container.audit.list(ALICE, 200)]


def test_a_supersede_and_its_line_commit_together(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    container.pipeline.ingest(turn("m-1", "I live in Lisbon.", 0))
    (old,) = container.store.scan_active(ALICE, 10)
    outcome = container.pipeline.ingest(turn("m-2", "I moved to Porto last month.", 5))
    assert outcome.superseded == [old.memory_id]
    assert AuditAction.SUPERSEDED in actions(container)

    monkeypatch.setattr(audit_log, "insert_event", lambda conn, event: (_ for _ in ()).throw(Boom("x")))
    current = container.store.scan_active(ALICE, 10)
    with pytest.raises(Boom):
        container.pipeline.ingest(turn("m-3", "I moved to Braga this week.", 10))
    assert [r.memory_id for r in container.store.scan_active(ALICE, 10)] == [r.memory_id for r in current]


def test_a_patch_a_layer_change_and_a_delete_leave_nothing_without_their_line(
    container: Container, failing_audit: None
) -> None:
    record = container.pipeline.ingest(turn("m-1", "I keep bees in my garden.", 0))
    (memory_id,) = record.written
    before = container.store.get(ALICE, memory_id)
    assert before is not None
    admin = container.admin
    with pytest.raises(Boom):
        admin.patch(
            ALICE, memory_id, MemoryPatch(content="I keep two hives in my garden."), now=T0, actor="alice"
        )
    with pytest.raises(Boom):
        admin.set_layer(ALICE, memory_id, Layer.LONG_TERM, now=T0, actor="alice")
    with pytest.raises(Boom):
        admin.delete(ALICE, memory_id, now=T0, actor="alice")
    after = container.store.get(ALICE, memory_id)
    assert after is not None and after.version == before.version and after.status is Status.ACTIVE


def test_the_lines_are_there_when_the_changes_are(container: Container) -> None:
    record = container.pipeline.ingest(turn("m-1", "I keep bees in my garden.", 0))
    (memory_id,) = record.written
    admin = container.admin
    admin.patch(
        ALICE, memory_id, MemoryPatch(content="I keep two hives in my garden."), now=T0, actor="alice"
    )
    admin.delete(ALICE, memory_id, now=T0, actor="alice")
    assert {AuditAction.PATCHED, AuditAction.DELETED} <= set(actions(container))
