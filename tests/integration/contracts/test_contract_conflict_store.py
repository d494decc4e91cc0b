"""ConflictStore contract, parametrised over implementations: ``embedded`` (SQLite, the file the
embedded wiring shares with the memory store), ``aws`` (DynamoDB on moto in-process, the session
table shared with the turn log and runtime state) and ``engine`` (the same on the DynamoDB engine
over HTTP, :mod:`support.engines`).

Every adapter must: give back the conflict it was given (the proposal record exactly, Chinese and
English text); store a conflict id once; resolve a pending conflict once (a second resolution is
a VersionConflict, an unknown one NotFound); list newest first, by status, in pages; keep scopes
apart; erase a scope's conflicts without touching another scope's or the turn log beside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_conflicts import DynamoConflictStore
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.embedded.conflict_store import SqliteConflictStore
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.domain.models import Category, Layer, MemoryRecord, Scope, SourceRefs
from agentmem.domain.pending import ConflictStatus, Decision, PendingConflict, propose
from agentmem.errors import NotFound, ValidationFailed, VersionConflict
from agentmem.ports import ConflictStore, RawTurnRecord, TurnLog
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.conflicts import InMemoryConflictStore
from support.fakes.memory import InMemoryTurnLog

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass
class Harness:
    conflicts: ConflictStore
    turns: TurnLog


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "fake":
        yield Harness(InMemoryConflictStore(), InMemoryTurnLog())
        return
    if request.param == "embedded":
        store, turns = SqliteConflictStore(tmp_path / "memory.db"), SqliteTurnLog(tmp_path / "memory.db")
        yield Harness(store, turns)
        store.close()
        turns.close()
        return
    with dynamodb_tables(request.param) as tables:
        lazy = tables.lazy()
        yield Harness(
            DynamoConflictStore(tables.session_table, client=lazy),
            DynamoTurnLog(tables.session_table, client=lazy, retention=timedelta(days=30)),
        )


def record(scope: Scope, memory_id: str, content: str, **extra: object) -> MemoryRecord:
    return MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=content,
        category=Category.IDENTITY,
        key="residence",
        value=content.split()[-1],
        source_refs=SourceRefs("s1", (f"msg-{memory_id}",), "trace-1"),
        embedding=(0.25, -0.5, 0.125),
        embedding_model="hash/ngram-256",
        created_at=T0,
        updated_at=T0,
        valid_from=T0,
        **extra,  # type: ignore[arg-type]
    )


def conflict(scope: Scope, n: int, *, at: datetime = T0, zh: bool = False) -> PendingConflict:
    old = record(scope, f"01OLD{n:04d}", "我住在北京" if zh else "I live in Berlin", layer=Layer.PERMANENT)
    new = record(scope, f"01NEW{n:04d}", "我搬到上海了" if zh else "I moved to Lisbon")
    return propose(old, new, at + timedelta(minutes=n))


@pytest.mark.parametrize("zh", [False, True])
def test_a_conflict_round_trips_exactly(harness: Harness, zh: bool) -> None:
    c = conflict(S1, 1, zh=zh)
    assert harness.conflicts.put(c) is True
    assert harness.conflicts.get(S1, c.conflict_id) == c
    assert harness.conflicts.get(S2, c.conflict_id) is None
    assert harness.conflicts.get(S1, "cf_unknown") is None


def test_a_conflict_is_stored_once(harness: Harness) -> None:
    c = conflict(S1, 1)
    assert harness.conflicts.put(c) is True
    assert harness.conflicts.put(replace(c, existing="changed")) is False
    assert harness.conflicts.get(S1, c.conflict_id) == c


@pytest.mark.parametrize("decision", list(Decision))
def test_a_pending_conflict_resolves_once(harness: Harness, decision: Decision) -> None:
    c = conflict(S1, 1)
    harness.conflicts.put(c)
    resolved = c.resolve(decision, T0 + timedelta(days=1))
    harness.conflicts.resolve(resolved)
    assert harness.conflicts.get(S1, c.conflict_id) == resolved
    with pytest.raises(VersionConflict):
        harness.conflicts.resolve(c.resolve(Decision.CONFIRM, T0 + timedelta(days=2)))
    with pytest.raises(NotFound):
        harness.conflicts.resolve(conflict(S1, 9).resolve(decision, T0))
    with pytest.raises(NotFound):  # another scope's conflict is unknown here
        harness.conflicts.resolve(replace(resolved, scope=S2))


def test_listing_is_newest_first_by_status_in_pages(harness: Harness) -> None:
    made = [conflict(S1, n) for n in range(5)]
    for c in made:
        harness.conflicts.put(c)
    harness.conflicts.put(conflict(S2, 7))
    harness.conflicts.resolve(made[1].resolve(Decision.REJECT, T0 + timedelta(days=1)))
    items, cursor = harness.conflicts.list(S1)
    assert [c.conflict_id for c in items] == [c.conflict_id for c in reversed(made)] and cursor is None
    pending, _ = harness.conflicts.list(S1, status=ConflictStatus.PENDING)
    assert [c.conflict_id for c in pending] == [made[i].conflict_id for i in (4, 3, 2, 0)]
    rejected, _ = harness.conflicts.list(S1, status=ConflictStatus.REJECTED)
    assert [c.status for c in rejected] == [ConflictStatus.REJECTED]
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = harness.conflicts.list(S1, limit=2, cursor=cursor)
        assert len(page) <= 2
        seen += [c.conflict_id for c in page]
        if cursor is None:
            break
    assert seen == [c.conflict_id for c in reversed(made)]
    with pytest.raises(ValidationFailed):
        harness.conflicts.list(S1, cursor="not-a-cursor!")


def test_erase_scope_removes_only_that_scopes_conflicts(harness: Harness) -> None:
    for n in range(3):
        harness.conflicts.put(conflict(S1, n))
    kept = conflict(S2, 5)
    harness.conflicts.put(kept)
    harness.turns.append_raw(S1, RawTurnRecord("m1", "s1", T0, "hello", "hi"))
    assert harness.conflicts.erase_scope(S1) == 3
    assert harness.conflicts.list(S1) == ([], None)
    assert harness.conflicts.get(S2, kept.conflict_id) == kept
    assert [t.message_id for t in harness.turns.recent_turns(S1, "s1", 5)] == ["m1"]
    assert harness.conflicts.erase_scope(S1) == 0
