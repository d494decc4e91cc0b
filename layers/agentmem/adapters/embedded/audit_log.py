"""SQLite append-only audit trail, in the memory store's file.

The table is insert-only for everyone but retention: this module issues no UPDATE, a trigger makes
SQLite refuse every UPDATE, and another refuses every DELETE except of a line older than its action's
retention horizon (``audit_horizons``, which :meth:`SqliteAuditLog.apply_retention` moves forward
before it deletes). There is no erase — the trail of a user outlives the user's memories (it never
carries memory content). Appending an event whose id is already stored is a no-op, so a retried
append does not duplicate a line. Event ids are time-sortable (``<epoch ms, 13 digits>-<8 hex>``)
and generated when empty; the list is newest first by ``(at, event_id)``.

The table lives in ``memory.db`` (:data:`SCHEMA` is part of the memory store's schema), so the
memory store can append the ``written`` line in the same transaction as the write it records
(:meth:`~agentmem.adapters.embedded.memory_store.SqliteMemoryStore.create_audited`): a process
killed between the two can no longer leave a memory without its line. A data directory from
before keeps its trail in ``audit.db``; :func:`import_legacy_file` copies it in once and renames
the old file ``audit.db.imported``.

Retention (:meth:`SqliteAuditLog.apply_retention`, run by the local event sources): an action with
a retention of ``d`` days loses its lines older than ``d`` days; ``context_injected`` lines are
first compacted into one line per user and UTC day (``reason`` ``compacted``, details: how many
contexts, how many memories they used), so the trail still says that contexts were served and
how often. Actions without a retention are kept (docs/data-at-rest.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.ports import RetentionPolicy

SCHEMA = """
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
CREATE INDEX IF NOT EXISTS audit_by_age ON audit_events (action, at);
CREATE TABLE IF NOT EXISTS audit_horizons (action TEXT PRIMARY KEY, before TEXT NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
DROP TRIGGER IF EXISTS audit_events_no_delete;
CREATE TRIGGER IF NOT EXISTS audit_events_retention_only BEFORE DELETE ON audit_events
WHEN NOT EXISTS (SELECT 1 FROM audit_horizons h WHERE h.action = old.action AND old.at < h.before)
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only (only retention deletes)'); END;
"""
_INSERT = (
    "INSERT OR IGNORE INTO audit_events"
    " (event_id, pk, tenant_id, user_id, action, at, memory_id, reason, details)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "event_id, pk, tenant_id, user_id, action, at, memory_id, reason, details"
COMPACTED = "compacted"  # the reason of a context_injected line that stands for a day of them


def new_event_id(event: AuditEvent) -> str:
    """A time-sortable id for ``event``."""
    return f"{max(0, int(event.at.timestamp() * 1000)):013d}-{uuid4().hex[:8]}"


def insert_event(conn: Any, event: AuditEvent) -> None:
    """Append ``event`` on ``conn`` (inside the caller's transaction); a stored id is a no-op."""
    event_id = event.event_id or new_event_id(event)
    details = json.dumps(event.details, ensure_ascii=False, separators=(",", ":"), default=str)
    conn.execute(
        _INSERT,
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


def import_legacy_file(db: SqliteDatabase, legacy: Path) -> int:
    """Copy the lines of a trail kept in its own file (``audit.db``, before the trail moved into
    ``memory.db``) into ``db`` and rename the file ``<name>.imported``; returns how many lines were
    read. Safe to run from several processes at once: lines are inserted by id, and a file another
    process already renamed is simply gone."""
    if not legacy.exists():
        return 0
    try:
        source = sqlite3.connect(f"file:{legacy}?mode=ro", uri=True)
        try:
            rows = source.execute(f"SELECT {_COLUMNS} FROM audit_events").fetchall()
        finally:
            source.close()
    except sqlite3.Error:  # renamed meanwhile, or not a trail: nothing to import
        return 0
    with db.write() as conn:
        conn.executemany(_INSERT, rows)
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{legacy}{suffix}").rename(f"{legacy}{suffix}.imported")
    return len(rows)


class SqliteAuditLog:
    """:class:`agentmem.ports.AuditLog` over one SQLite file (or ``":memory:"``): the embedded
    backend's is ``memory.db``, shared with the memory store."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, SCHEMA, name="audit")

    @property
    def database(self) -> SqliteDatabase:
        return self._db

    def close(self) -> None:
        self._db.close()

    def append(self, event: AuditEvent) -> None:
        with self._db.write() as conn:
            insert_event(conn, event)

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: :meth:`expire` with ``policy.audit_days``."""
        return {f"audit_{action}": count for action, count in self.expire(policy.audit_days, now).items()}

    def expire(self, retention_days: Mapping[str, float], now: datetime) -> dict[str, int]:
        """Drop the lines older than their action's retention (``action -> days``); a
        ``context_injected`` day is first compacted into one line per user (see the module
        docstring). Returns the lines deleted per action."""
        deleted: dict[str, int] = {}
        for action, days in sorted(retention_days.items()):
            before = format_sortable(now - timedelta(days=days))
            with self._db.write() as conn:
                if action == AuditAction.CONTEXT_INJECTED:
                    self._compact(conn, before)
                conn.execute(
                    "INSERT INTO audit_horizons (action, before) VALUES (?, ?)"
                    " ON CONFLICT (action) DO UPDATE SET before = excluded.before",
                    (action, before),
                )
                count = conn.execute(
                    "DELETE FROM audit_events WHERE action = ? AND at < ?"
                    + (" AND COALESCE(reason, '') != ?" if action == AuditAction.CONTEXT_INJECTED else ""),
                    (action, before, COMPACTED)
                    if action == AuditAction.CONTEXT_INJECTED
                    else (action, before),
                ).rowcount
            if count:
                deleted[action] = int(count)
        return deleted

    @staticmethod
    def _compact(conn: Any, before: str) -> None:
        """One ``compacted`` context_injected line per (user, UTC day) for the lines about to go."""
        groups = conn.execute(
            "SELECT pk, tenant_id, user_id, substr(at, 1, 10) AS day, COUNT(*) FROM audit_events"
            " WHERE action = ? AND at < ? AND COALESCE(reason, '') != ? GROUP BY pk, day",
            (AuditAction.CONTEXT_INJECTED.value, before, COMPACTED),
        ).fetchall()
        for pk, tenant, user, day, count in groups:
            used = 0
            for (details,) in conn.execute(
                "SELECT details FROM audit_events WHERE pk = ? AND action = ? AND substr(at, 1, 10) = ?"
                " AND at < ? AND COALESCE(reason, '') != ?",
                (pk, AuditAction.CONTEXT_INJECTED.value, day, before, COMPACTED),
            ):
                with contextlib.suppress(ValueError, TypeError):
                    ids = json.loads(details).get("memory_ids") or ()
                    used += len(ids)
            at = parse_datetime(f"{day}T23:59:59.999999Z")
            insert_event(
                conn,
                AuditEvent(
                    scope=Scope(tenant, user),
                    action=AuditAction.CONTEXT_INJECTED,
                    at=at,
                    reason=COMPACTED,
                    details={"day": day, "contexts": int(count), "memories_used": used},
                    event_id=f"{int(at.timestamp() * 1000):013d}-"
                    + hashlib.sha256(f"{pk}|{day}".encode()).hexdigest()[:8],
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
