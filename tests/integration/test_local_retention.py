"""The embedded stores keep their disk bounded (docs/data-at-rest.md): the outbox pruned behind
the projector (and past its maximum age whatever the projector did), L0 turns and processed marks
past their retention, audit lines past their action's retention (``context_injected`` compacted
into a line per user and day first), expired idempotency keys; a file mostly free is vacuumed.
The audit trail lives in ``memory.db``, so a write and its audit line commit together, and a
trail kept in ``audit.db`` by an older version is imported."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.embedded.audit_log import SqliteAuditLog
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.bootstrap import bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import AuditAction, AuditEvent, Category, MemoryRecord, Scope
from agentmem.errors import VersionConflict
from agentmem.ports import RawTurnRecord
from agentmem.settings import load_settings

S1, S2 = Scope("t1", "u1"), Scope("t1", "u2")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def rec(memory_id: str, content: str = "") -> MemoryRecord:
    return MemoryRecord(
        scope=S1,
        memory_id=memory_id,
        content=content or f"content of {memory_id}",
        category=Category.FACT,
        embedding=(0.5, 0.5, 0.5, 0.5),
        embedding_model="hash-test",
        created_at=T0,
    )


def container_at(tmp_path: Path, clock: ManualClock, **settings: object):  # type: ignore[no-untyped-def]
    return bootstrap(load_settings(data_dir=tmp_path / "data", embedder="hash", **settings), clock=clock)


def test_the_outbox_is_pruned_behind_the_projector_and_past_its_maximum_age(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    c = container_at(tmp_path, clock, outbox_max_age_hours=1)
    store = c.store
    assert isinstance(store, SqliteMemoryStore)
    for i in range(6):
        store.create(rec(f"m{i}"))
    rows = store.outbox.read_outbox(0, 10)
    store.outbox.set_outbox_checkpoint("projector", rows[3].seq)  # the projector applied four
    report = c.retention.run(clock.now())
    assert report.deleted.get("outbox_applied") == 4
    assert [r.memory_id for r in store.outbox.read_outbox(0, 10)] == ["m4", "m5"]  # not applied: kept
    later = datetime.now(UTC) + timedelta(hours=2)  # the outbox stamps rows with the wall clock
    report = c.retention.run(later)
    assert report.deleted.get("outbox_expired_unapplied") == 2
    assert store.outbox.read_outbox(0, 10) == []
    assert store.outbox.read_outbox(rows[3].seq, 10) == []  # the reader resumes after the gap


def test_turns_and_audit_lines_past_their_retention_go_and_context_lines_are_compacted(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    c = container_at(tmp_path, clock, turn_retention_days=30, audit_retention_days={"context_injected": 7})
    turns = c.turn_log
    assert isinstance(turns, SqliteTurnLog)
    for day in (0, 10, 40):
        turns.append_raw(S1, RawTurnRecord(f"msg-{day}", "s1", T0 + timedelta(days=day), "hi", "hello"))
    for hour in range(3):  # three contexts on the first day, one on the tenth
        c.audit.append(
            AuditEvent(
                S1,
                AuditAction.CONTEXT_INJECTED,
                T0 + timedelta(hours=hour),
                details={"mode": "chat", "memory_ids": ["a", "b"]},
            )
        )
    c.audit.append(AuditEvent(S1, AuditAction.CONTEXT_INJECTED, T0 + timedelta(days=10), details={}))
    c.audit.append(AuditEvent(S1, AuditAction.WRITTEN, T0, memory_id="m1"))
    c.audit.append(AuditEvent(S2, AuditAction.CONTEXT_INJECTED, T0, details={"memory_ids": ["z"]}))

    now = T0 + timedelta(days=45)
    report = c.retention.run(now)
    assert report.deleted["raw_turns"] == 2  # days 0 and 10 are older than 30 days at day 45
    assert [t.message_id for t in turns.recent_turns(S1, "s1", 10)] == ["msg-40"]
    assert report.deleted["audit_context_injected"] == 5
    lines = c.audit.list(S1, 50, action=AuditAction.CONTEXT_INJECTED)
    assert [(e.reason, e.details.get("contexts"), e.details.get("memories_used")) for e in lines] == [
        ("compacted", 1, 0),  # the tenth day
        ("compacted", 3, 6),  # the first day
    ]
    assert [e.memory_id for e in c.audit.list(S1, 50, action=AuditAction.WRITTEN)] == ["m1"]  # kept
    assert c.audit.list(S2, 50)[0].details == {"day": "2026-03-01", "contexts": 1, "memories_used": 1}
    again = c.retention.run(now)  # a second pass finds nothing more to do
    assert "audit_context_injected" not in again.deleted


def test_the_trail_stays_append_only_outside_retention(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    log = SqliteAuditLog(path)
    log.append(AuditEvent(S1, AuditAction.CONTEXT_INJECTED, T0, event_id="e1"))
    log.append(AuditEvent(S1, AuditAction.WRITTEN, T0, event_id="e2"))
    log.expire({"context_injected": 1}, T0 + timedelta(hours=1))  # e1 is not a day old yet
    conn = sqlite3.connect(path)
    for statement in ("DELETE FROM audit_events", "UPDATE audit_events SET action = 'x'"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(statement)
    conn.close()
    assert {e.event_id for e in log.list(S1)} == {"e1", "e2"}


def test_a_write_and_its_audit_line_commit_together(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    log = SqliteAuditLog(tmp_path / "memory.db")
    line = AuditEvent(S1, AuditAction.WRITTEN, T0, memory_id="m1", event_id="w1")
    store.create_audited(rec("m1"), [line])
    with pytest.raises(VersionConflict):  # the write fails: its line is not appended either
        store.create_audited(
            rec("m1"), [AuditEvent(S1, AuditAction.WRITTEN, T0, memory_id="m1", event_id="w2")]
        )
    assert [e.event_id for e in log.list(S1)] == ["w1"]


def test_a_trail_kept_in_audit_db_by_an_older_version_is_imported_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    old = sqlite3.connect(data / "audit.db")
    old.execute(
        "CREATE TABLE audit_events (event_id TEXT PRIMARY KEY, pk TEXT, tenant_id TEXT, user_id TEXT,"
        " action TEXT, at TEXT, memory_id TEXT, reason TEXT, details TEXT)"
    )
    old.execute(
        "INSERT INTO audit_events VALUES ('e-old', ?, 't1', 'u1', 'written', '2026-01-01T00:00:00.000000Z',"
        " 'm-old', NULL, '{}')",
        (S1.key,),
    )
    old.commit()
    old.close()
    c = bootstrap(load_settings(data_dir=data, embedder="hash"))
    assert [e.event_id for e in c.audit.list(S1)] == ["e-old"]
    assert not (data / "audit.db").exists() and (data / "audit.db.imported").exists()
    assert [e.event_id for e in bootstrap(load_settings(data_dir=data, embedder="hash")).audit.list(S1)] == [
        "e-old"
    ]


def test_a_mostly_free_file_is_vacuumed_and_shrinks(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    c = container_at(tmp_path, clock, turn_retention_days=1, vacuum_free_fraction=0.25)
    turns = c.turn_log
    for i in range(400):
        turns.append_raw(S1, RawTurnRecord(f"msg-{i}", "s1", T0, "x" * 2000, "y" * 2000))
    path = tmp_path / "data" / "memory.db"
    c.retention.run(T0)  # nothing to delete: nothing vacuumed either
    before = path.stat().st_size
    report = c.retention.run(T0 + timedelta(days=2))
    assert report.deleted["raw_turns"] == 400 and report.vacuumed >= 1
    assert path.stat().st_size < before / 2


def test_scene_logs_expire_with_their_last_turn_and_summaries_stay(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    c = container_at(tmp_path, clock, turn_retention_days=30)
    summaries = c.adapters.summaries
    assert summaries is not None
    summaries.record_turn(S1, "old", "m1", T0, ("mem-1",))
    summaries.record_turn(S1, "live", "m2", T0, ("mem-2",))
    summaries.record_turn(S1, "live", "m3", T0 + timedelta(days=20), ("mem-3",))
    report = c.retention.run(T0 + timedelta(days=31))
    assert report.deleted["scene_turns"] == 1
    assert summaries.scene(S1, "old") is None
    live = summaries.scene(S1, "live")
    assert live is not None
