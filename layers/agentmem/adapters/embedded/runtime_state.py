""":class:`SqliteRuntimeState`, the :class:`~agentmem.ports.RuntimeStateStore` of the embedded
backend: one JSON state per ``(pk, session_id)`` with an expiry; the clock is injected, and an
expired state reads as absent (it is purged on the next write of its scope), as does a stored
state that no longer parses (logged).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from agentmem.adapters.codec import format_sortable
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.adapters.runtime_state import parse_stored_state
from agentmem.domain.models import Scope
from agentmem.domain.runtime_state import RuntimeState
from agentmem.ports import RetentionPolicy

_STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS runtime_state (
    pk TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (pk, session_id)
) WITHOUT ROWID;
"""


class SqliteRuntimeState:
    """:class:`agentmem.ports.RuntimeStateStore` over one SQLite file, with an injected clock."""

    def __init__(self, path: str | Path, clock: Callable[[], datetime]) -> None:
        self._db = SqliteDatabase(path, _STATE_SCHEMA, name="runtime_state")
        self._clock = clock

    def close(self) -> None:
        self._db.close()

    def get(self, scope: Scope, session_id: str) -> RuntimeState | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT state FROM runtime_state WHERE pk = ? AND session_id = ? AND expires_at > ?",
                (scope.key, session_id, format_sortable(self._clock())),
            ).fetchone()
        return None if row is None else parse_stored_state(row[0], store="sqlite", session_id=session_id)

    def put(self, scope: Scope, session_id: str, state: RuntimeState, expires_at: datetime) -> None:
        with self._db.write() as conn:
            conn.execute(
                "DELETE FROM runtime_state WHERE pk = ? AND expires_at <= ?",
                (scope.key, format_sortable(self._clock())),
            )
            conn.execute(
                "INSERT OR REPLACE INTO runtime_state (pk, session_id, state, expires_at) VALUES (?, ?, ?, ?)",
                (scope.key, session_id, state.to_json(), format_sortable(expires_at)),
            )

    def erase_scope(self, scope: Scope) -> int:
        """Removes expired slots too; counts every row removed (securely, the WAL truncated)."""
        with self._db.write() as conn:
            removed = int(conn.execute("DELETE FROM runtime_state WHERE pk = ?", (scope.key,)).rowcount)
        self._db.checkpoint()
        return removed

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: expired session/task states."""
        return {"runtime_states": self.purge_expired()}

    def purge_expired(self) -> int:
        """Drop every expired state of every scope (not part of the port); returns how many."""
        with self._db.write() as conn:
            return int(
                conn.execute(
                    "DELETE FROM runtime_state WHERE expires_at <= ?", (format_sortable(self._clock()),)
                ).rowcount
            )
