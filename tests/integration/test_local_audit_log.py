"""What only the SQLite audit adapter does: an audit table that SQLite itself keeps append-only. The TurnLog and AuditLog ports are checked
on every implementation in ``contracts/test_contract_turn_log.py`` / ``test_contract_audit_log.py`` (runtime state in
``test_contract_runtime_state.py``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentmem.adapters.embedded.audit_log import SqliteAuditLog
from agentmem.domain.models import AuditEvent, Scope

S1 = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def test_audit_rows_cannot_be_updated_or_deleted(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "audit.sqlite3"
    SqliteAuditLog(path).append(AuditEvent(S1, "written", T0, event_id="e1"))
    conn = sqlite3.connect(path)
    for statement in ("UPDATE audit_events SET action = 'x'", "DELETE FROM audit_events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(statement)
    conn.close()
    assert [e.action for e in SqliteAuditLog(path).list(S1)] == ["written"]
