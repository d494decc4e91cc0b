"""SQLite scene logs, scene summaries and the latest session (:class:`~agentmem.ports.SessionSummaryStore`).

Three tables keyed by ``pk = scope.key``: ``scene_turns`` (one row per recorded turn: its session,
time and the memory ids it produced, insert-or-ignore so a replayed turn counts once),
``scene_summaries`` (one JSON summary per session) and ``latest_session`` (the scope's latest
session and the one before it). :meth:`SqliteSummaryStore.record_turn` reads and moves the latest
marker in the same write transaction as it records the turn, so two sessions' turns cannot both
see themselves as the switch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Scope
from agentmem.domain.summary import MAX_SCENE_TURNS, LatestSession, SceneLog, SceneSummary
from agentmem.ports import RetentionPolicy

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scene_turns (
    pk TEXT NOT NULL,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    at TEXT NOT NULL,
    memory_ids TEXT NOT NULL,
    withheld INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pk, session_id, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scene_summaries (
    pk TEXT NOT NULL,
    session_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    PRIMARY KEY (pk, session_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS latest_session (
    pk TEXT NOT NULL PRIMARY KEY,
    session_id TEXT NOT NULL,
    previous TEXT
) WITHOUT ROWID;
"""


class SqliteSummaryStore:
    """:class:`agentmem.ports.SessionSummaryStore` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="summaries")

    def close(self) -> None:
        self._db.close()

    def record_turn(
        self,
        scope: Scope,
        session_id: str,
        message_id: str,
        at: datetime,
        memory_ids: Sequence[str],
        withheld: Sequence[str] = (),
    ) -> str | None:
        with self._db.write() as conn:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM scene_turns WHERE pk = ? AND session_id = ?", (scope.key, session_id)
            ).fetchone()
            if count < MAX_SCENE_TURNS:
                conn.execute(
                    "INSERT OR IGNORE INTO scene_turns (pk, session_id, message_id, at, memory_ids)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (scope.key, session_id, message_id, format_sortable(at), json.dumps(list(memory_ids))),
                )
            conn.executemany(
                "UPDATE scene_turns SET withheld = 1 WHERE pk = ? AND session_id = ? AND message_id = ?",
                [(scope.key, session_id, m) for m in withheld],
            )
            row = conn.execute("SELECT session_id FROM latest_session WHERE pk = ?", (scope.key,)).fetchone()
            before = None if row is None else str(row[0])
            if before == session_id:
                return None
            conn.execute(
                "INSERT OR REPLACE INTO latest_session (pk, session_id, previous) VALUES (?, ?, ?)",
                (scope.key, session_id, before),
            )
            return before

    def scene(self, scope: Scope, session_id: str) -> SceneLog | None:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT message_id, at, memory_ids, withheld FROM scene_turns WHERE pk = ? AND session_id = ?",
                (scope.key, session_id),
            ).fetchall()
        if not rows:
            return None
        times = sorted(parse_datetime(at) for _, at, _, _ in rows)
        return SceneLog(
            session_id=session_id,
            started_at=times[0],
            ended_at=times[-1],
            message_ids=frozenset(str(m) for m, _, _, _ in rows),
            memory_ids=frozenset(str(i) for _, _, ids, _ in rows for i in json.loads(ids)),
            withheld=frozenset(str(m) for m, _, _, held in rows if held),
        )

    def latest(self, scope: Scope) -> LatestSession | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT session_id, previous FROM latest_session WHERE pk = ?", (scope.key,)
            ).fetchone()
        return None if row is None else LatestSession(str(row[0]), None if row[1] is None else str(row[1]))

    def put_summary(self, scope: Scope, summary: SceneSummary) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO scene_summaries (pk, session_id, summary) VALUES (?, ?, ?)",
                (scope.key, summary.session_id, json.dumps(summary.to_dict(), ensure_ascii=False)),
            )

    def summary(self, scope: Scope, session_id: str) -> SceneSummary | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT summary FROM scene_summaries WHERE pk = ? AND session_id = ?", (scope.key, session_id)
            ).fetchone()
        if row is None:
            return None
        try:
            return SceneSummary.from_dict(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            log.warning("summaries.unreadable_row", extra={"store": "sqlite", "session_id": session_id})
            return None

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: the scene logs whose last turn is older than
        ``policy.turn_days`` (the AWS scene item's TTL: last turn + retention). Summaries and the
        latest-session marker hold ids, not text, and are kept, as in AWS."""
        cutoff = format_sortable(now - timedelta(days=policy.turn_days))
        with self._db.write() as conn:
            removed = conn.execute(
                "DELETE FROM scene_turns WHERE (pk, session_id) IN (SELECT pk, session_id FROM scene_turns"
                " GROUP BY pk, session_id HAVING MAX(at) < ?)",
                (cutoff,),
            ).rowcount
        return {"scene_turns": int(removed)}

    def erase_scope(self, scope: Scope) -> int:
        """Deleted with ``secure_delete`` and the WAL truncated, like the turn log."""
        with self._db.write() as conn:
            removed = sum(
                int(conn.execute(f"DELETE FROM {table} WHERE pk = ?", (scope.key,)).rowcount)
                for table in ("scene_turns", "scene_summaries", "latest_session")
            )
        self._db.checkpoint()
        return removed
