"""What only the SQLite adapters of the session data do: runtime state by the injected clock, and
an audit table that SQLite itself keeps append-only. The TurnLog and AuditLog ports are checked
on every implementation in ``contracts/test_contract_turn_log.py`` / ``test_contract_audit_log.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.embedded.audit_log import SqliteAuditLog
from agentmem.adapters.embedded.turn_log import SqliteRuntimeState
from agentmem.domain.models import AuditEvent, Scope
from agentmem.ports import RuntimeStateStore

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


# ------------------------------------------------------------------ runtime state


def test_runtime_state_expires_by_the_injected_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    state: RuntimeStateStore = SqliteRuntimeState(tmp_path / "state.sqlite3", clock=clock)
    slot = {"plan": ["a", "b"], "step": 1, "pending": {"x": "我"}}
    state.put(S1, "s1", slot, T0 + timedelta(minutes=10))
    assert state.get(S1, "s1") == slot
    assert state.get(S2, "s1") is None
    assert state.get(S1, "s2") is None
    state.put(S1, "s1", {"step": 2}, T0 + timedelta(minutes=10))
    assert state.get(S1, "s1") == {"step": 2}
    clock.now = T0 + timedelta(minutes=10)
    assert state.get(S1, "s1") is None


def test_runtime_state_erase_counts_sessions(tmp_path: Path) -> None:
    clock = FakeClock()
    state = SqliteRuntimeState(":memory:", clock=clock)
    for session in ("a", "b", "c"):
        state.put(S1, session, {"s": session}, T0 + timedelta(hours=1))
    state.put(S2, "a", {"s": "a"}, T0 + timedelta(hours=1))
    assert state.erase_scope(S1) == 3
    assert state.get(S1, "a") is None
    assert state.get(S2, "a") == {"s": "a"}
    clock.now = T0 + timedelta(hours=2)
    assert state.purge_expired() == 1


# ------------------------------------------------------------------ audit trail


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
