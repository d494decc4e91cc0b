"""Local L0 turn log, runtime state and audit trail over SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.embedded.audit_log import SqliteAuditLog
from agentmem.adapters.embedded.turn_log import SqliteRuntimeState, SqliteTurnLog
from agentmem.domain.models import AuditEvent, Scope
from agentmem.ports import AuditLog, RawTurnRecord, RuntimeStateStore, TurnLog

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def log(tmp_path: Path) -> TurnLog:
    return SqliteTurnLog(tmp_path / "turns.sqlite3")


def raw(message_id: str, minute: int, session: str = "s1", **extra: object) -> RawTurnRecord:
    return RawTurnRecord(
        message_id=message_id,
        session_id=session,
        at=T0 + timedelta(minutes=minute),
        user=f"user {message_id}",
        assistant=f"assistant {message_id}",
        trace_id=f"tr-{message_id}",
        extra=dict(extra),
    )


def test_append_is_idempotent_per_message(log: TurnLog) -> None:
    assert log.append_raw(S1, raw("m1", 0, lang="zh")) is True
    assert log.append_raw(S1, raw("m1", 0)) is False  # replayed delivery
    assert log.append_raw(S2, raw("m1", 0)) is True  # another scope, same id
    assert log.recent_turns(S1, "s1", 10) == [raw("m1", 0, lang="zh")]


def test_session_window_is_the_last_turns_oldest_first(log: TurnLog) -> None:
    for i in (3, 0, 2, 1, 4):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S1, raw("x", 10, session="s2"))
    log.append_raw(S2, raw("y", 10))
    assert [t.message_id for t in log.recent_turns(S1, "s1", 3)] == ["m2", "m3", "m4"]
    assert [t.message_id for t in log.recent_turns(S1, "s1", 10)] == ["m0", "m1", "m2", "m3", "m4"]
    assert [t.message_id for t in log.recent_turns(S1, "s2", 10)] == ["x"]
    assert [t.message_id for t in log.recent_turns(S2, "s1", 10)] == ["y"]
    assert log.recent_turns(S1, "s1", 0) == []
    assert log.recent_turns(S1, "unknown", 5) == []


def test_same_timestamp_keeps_arrival_order(log: TurnLog) -> None:
    for name in ("b", "a", "c"):
        log.append_raw(S1, raw(name, 0))
    assert [t.message_id for t in log.recent_turns(S1, "s1", 2)] == ["a", "c"]


def test_processed_marks(log: TurnLog) -> None:
    assert log.is_processed(S1, "m1") is False
    log.mark_processed(S1, "m1", T0, {"created": ["mem-1"], "rejected": 0})
    log.mark_processed(S1, "m1", T0, {"created": ["mem-1"], "rejected": 0})  # idempotent
    assert log.is_processed(S1, "m1") is True
    assert log.is_processed(S2, "m1") is False
    assert isinstance(log, SqliteTurnLog)
    assert log.processed_outcome(S1, "m1") == {"created": ["mem-1"], "rejected": 0}


def test_erase_scope_removes_turns_and_marks(log: TurnLog) -> None:
    for i in range(3):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S2, raw("m0", 0))
    log.mark_processed(S1, "m0", T0, {})
    assert log.erase_scope(S1) == 3
    assert log.recent_turns(S1, "s1", 10) == []
    assert log.is_processed(S1, "m0") is False
    assert [t.message_id for t in log.recent_turns(S2, "s1", 10)] == ["m0"]
    assert log.append_raw(S1, raw("m0", 0)) is True


# ------------------------------------------------------------------ runtime state






# ------------------------------------------------------------------ audit trail


def test_audit_log_is_append_only_newest_first(tmp_path: Path) -> None:
    audit: AuditLog = SqliteAuditLog(tmp_path / "audit.sqlite3")
    for i, action in enumerate(["write", "supersede", "write", "erase"]):
        audit.append(AuditEvent(S1, action, T0 + timedelta(minutes=i), memory_id=f"m{i}", details={"n": i}))
    audit.append(AuditEvent(S2, "write", T0))
    events = audit.list(S1)
    assert [e.action for e in events] == ["erase", "write", "supersede", "write"]
    assert events[0].details == {"n": 3} and events[0].memory_id == "m3"
    assert all(e.event_id and e.event_id[:13].isdigit() for e in events)
    assert [e.memory_id for e in audit.list(S1, action="write")] == ["m2", "m0"]
    assert len(audit.list(S1, limit=2)) == 2
    assert [e.scope for e in audit.list(S2)] == [S2]


def test_audit_append_with_an_existing_id_changes_nothing(tmp_path: Path) -> None:
    audit = SqliteAuditLog(":memory:")
    audit.append(AuditEvent(S1, "write", T0, reason="first", event_id="e1"))
    audit.append(AuditEvent(S1, "delete", T0, reason="second", event_id="e1"))
    assert [(e.action, e.reason) for e in audit.list(S1)] == [("write", "first")]


def test_audit_rows_cannot_be_updated_or_deleted(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "audit.sqlite3"
    SqliteAuditLog(path).append(AuditEvent(S1, "write", T0, event_id="e1"))
    conn = sqlite3.connect(path)
    for statement in ("UPDATE audit_events SET action = 'x'", "DELETE FROM audit_events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(statement)
    conn.close()
    assert [e.action for e in SqliteAuditLog(path).list(S1)] == ["write"]
