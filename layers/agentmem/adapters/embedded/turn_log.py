"""SQLite L0 raw log, session window and processed marks (the runtime state is :mod:`.runtime_state`).

:class:`SqliteTurnLog` keeps redacted turns keyed by ``(pk, message_id)``; appending is
insert-or-ignore, so a replayed message is reported (``False``) and never duplicated. The session
window is the last N turns of a session by ``(at, insertion order)``, returned oldest first.
Processed marks (the idempotency record of the write path) carry the outcome as JSON.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Scope
from agentmem.ports import RawTurnRecord, RetentionPolicy

_TURN_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_turns (
    pk TEXT NOT NULL,
    message_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    at TEXT NOT NULL,
    user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    trace_id TEXT,
    status TEXT NOT NULL,
    extra TEXT NOT NULL,
    UNIQUE (pk, message_id)
);
CREATE INDEX IF NOT EXISTS raw_turns_by_session ON raw_turns (pk, session_id, at);
CREATE INDEX IF NOT EXISTS raw_turns_by_age ON raw_turns (at);
CREATE TABLE IF NOT EXISTS processed_turns (
    pk TEXT NOT NULL,
    message_id TEXT NOT NULL,
    at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (pk, message_id)
) WITHOUT ROWID;
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SqliteTurnLog:
    """:class:`agentmem.ports.TurnLog` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, _TURN_SCHEMA, name="turn_log")

    def close(self) -> None:
        self._db.close()

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: L0 turns and processed marks older than
        ``policy.turn_days`` (the AWS session table's TTL, ``AGENTMEM_TURN_RETENTION_DAYS``)."""
        cutoff = format_sortable(now - timedelta(days=policy.turn_days))
        with self._db.write() as conn:
            turns = int(conn.execute("DELETE FROM raw_turns WHERE at < ?", (cutoff,)).rowcount)
            marks = int(conn.execute("DELETE FROM processed_turns WHERE at < ?", (cutoff,)).rowcount)
        return {"raw_turns": turns, "processed_marks": marks}

    def append_raw(self, scope: Scope, turn: RawTurnRecord) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO raw_turns (pk, message_id, session_id, at, user_text,"
                " assistant_text, trace_id, status, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.key,
                    turn.message_id,
                    turn.session_id,
                    format_sortable(turn.at),
                    turn.user,
                    turn.assistant,
                    turn.trace_id,
                    turn.status,
                    _dumps(turn.extra),
                ),
            )
            return cursor.rowcount == 1

    def recent_turns(self, scope: Scope, session_id: str, limit: int) -> list[RawTurnRecord]:
        if limit <= 0:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT message_id, session_id, at, user_text, assistant_text, trace_id, status, extra"
                " FROM raw_turns WHERE pk = ? AND session_id = ? ORDER BY at DESC, rowid DESC LIMIT ?",
                (scope.key, session_id, limit),
            ).fetchall()
        turns = [
            RawTurnRecord(
                message_id=message_id,
                session_id=session,
                at=parse_datetime(at),
                user=user,
                assistant=assistant,
                trace_id=trace_id,
                status=status,
                extra=json.loads(extra),
            )
            for message_id, session, at, user, assistant, trace_id, status, extra in rows
        ]
        turns.reverse()
        return turns

    def is_processed(self, scope: Scope, message_id: str) -> bool:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT 1 FROM processed_turns WHERE pk = ? AND message_id = ?", (scope.key, message_id)
            ).fetchone()
        return row is not None

    def mark_processed(self, scope: Scope, message_id: str, at: datetime, outcome: dict[str, Any]) -> None:
        """Idempotent; a repeated mark replaces the outcome."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO processed_turns (pk, message_id, at, outcome) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (pk, message_id) DO UPDATE SET at = excluded.at, outcome = excluded.outcome",
                (scope.key, message_id, format_sortable(at), _dumps(outcome)),
            )

    def processed_outcome(self, scope: Scope, message_id: str) -> dict[str, Any] | None:
        """The outcome recorded by :meth:`mark_processed` (not part of the port)."""
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT outcome FROM processed_turns WHERE pk = ? AND message_id = ?", (scope.key, message_id)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def erase_scope(self, scope: Scope) -> int:
        """Deleted with ``secure_delete`` and the WAL truncated: no page keeps the erased text."""
        with self._db.write() as conn:
            removed = conn.execute("DELETE FROM raw_turns WHERE pk = ?", (scope.key,)).rowcount
            conn.execute("DELETE FROM processed_turns WHERE pk = ?", (scope.key,))
        self._db.checkpoint()
        return int(removed)

    def forget_turn(self, scope: Scope, message_id: str) -> bool:
        with self._db.write() as conn:
            removed = conn.execute(
                "DELETE FROM raw_turns WHERE pk = ? AND message_id = ?", (scope.key, message_id)
            ).rowcount
            conn.execute(
                "DELETE FROM processed_turns WHERE pk = ? AND message_id = ?", (scope.key, message_id)
            )
        self._db.checkpoint()
        return int(removed) == 1
