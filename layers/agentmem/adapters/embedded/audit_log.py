"""SQLite append-only audit trail.

The table is insert-only: this module issues no UPDATE or DELETE, triggers make SQLite refuse them
from anyone else, and there is no erase — the trail of a user outlives the user's memories (it
never carries memory content). Appending an
event whose id is already stored is a no-op, so a retried append does not duplicate a line.
Event ids are time-sortable (``<epoch ms, 13 digits>-<8 hex>``) and generated when empty; the
list is newest first by ``(at, event_id)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from uuid import uuid4

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import AuditAction, AuditEvent, Scope

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_events (
    event_id TEXT PRIMARY KEY,
    pk TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    at TEXT NOT NULL,
    memory_id TEXT,
    reason TEXT,
    details TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_scope ON audit_events (pk, at, event_id);
CREATE INDEX IF NOT EXISTS audit_by_action ON audit_events (pk, action, at, event_id);
CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
"""


def new_event_id(event: AuditEvent) -> str:
    """A time-sortable id for ``event``."""
    return f"{max(0, int(event.at.timestamp() * 1000)):013d}-{uuid4().hex[:8]}"


class SqliteAuditLog:
    """:class:`agentmem.ports.AuditLog` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="audit")

    def close(self) -> None:
        self._db.close()

    def append(self, event: AuditEvent) -> None:
        event_id = event.event_id or new_event_id(event)
        details = json.dumps(event.details, ensure_ascii=False, separators=(",", ":"), default=str)
        with self._db.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO audit_events"
                " (event_id, pk, tenant_id, user_id, action, at, memory_id, reason, details)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event_id,
                    event.scope.key,
                    event.scope.tenant_id,
                    event.scope.user_id,
                    event.action,
                    format_sortable(event.at),
                    event.memory_id,
                    event.reason,
                    details,
                ),
            )

    def list(self, scope: Scope, limit: int = 100, action: str | None = None) -> list[AuditEvent]:
        if limit <= 0:
            return []
        sql = "SELECT event_id, action, at, memory_id, reason, details FROM audit_events WHERE pk = ?"
        args: list[object] = [scope.key]
        if action is not None:
            sql += " AND action = ?"
            args.append(action)
        sql += " ORDER BY at DESC, event_id DESC LIMIT ?"
        args.append(limit)
        with self._db.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [
            AuditEvent(
                scope=scope,
                action=AuditAction(action_),
                at=parse_datetime(at),
                memory_id=memory_id,
                reason=reason,
                details=json.loads(details),
                event_id=event_id,
            )
            for event_id, action_, at, memory_id, reason, details in rows
        ]
