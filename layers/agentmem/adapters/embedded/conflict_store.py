"""SQLite pending-conflict store (:class:`agentmem.ports.ConflictStore`): one row per conflict,
``(pk, conflict_id)`` keyed, the conflict as one JSON document (:mod:`..conflict_codec`). A
resolution is a conditional UPDATE (``status = 'pending'``), so two resolutions cannot both win.
"""

from __future__ import annotations

from pathlib import Path

from agentmem.adapters.codec import format_sortable
from agentmem.adapters.conflict_codec import MAX_LISTED, from_doc, page, to_doc
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Scope
from agentmem.domain.pending import ConflictStatus, PendingConflict
from agentmem.errors import NotFound, VersionConflict

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conflicts (
    pk TEXT NOT NULL, conflict_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,
    doc TEXT NOT NULL, PRIMARY KEY (pk, conflict_id)
) WITHOUT ROWID;
"""


class SqliteConflictStore:
    """:class:`agentmem.ports.ConflictStore` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="conflicts")

    def close(self) -> None:
        self._db.close()

    def put(self, conflict: PendingConflict) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO conflicts (pk, conflict_id, status, created_at, doc)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    conflict.scope.key,
                    conflict.conflict_id,
                    conflict.status.value,
                    format_sortable(conflict.created_at),
                    to_doc(conflict),
                ),
            )
            return cursor.rowcount == 1

    def get(self, scope: Scope, conflict_id: str) -> PendingConflict | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT doc FROM conflicts WHERE pk = ? AND conflict_id = ?", (scope.key, conflict_id)
            ).fetchone()
        return None if row is None else from_doc(scope, row[0])

    def resolve(self, conflict: PendingConflict) -> None:
        key = (conflict.scope.key, conflict.conflict_id)
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE conflicts SET status = ?, doc = ? WHERE pk = ? AND conflict_id = ? AND status = ?",
                (conflict.status.value, to_doc(conflict), *key, ConflictStatus.PENDING.value),
            )
            if cursor.rowcount == 1:
                return
            exists = conn.execute("SELECT 1 FROM conflicts WHERE pk = ? AND conflict_id = ?", key).fetchone()
        if exists is None:
            raise NotFound("conflict not found", details={"conflict_id": conflict.conflict_id})
        raise VersionConflict("conflict already resolved", details={"conflict_id": conflict.conflict_id})

    def list(
        self,
        scope: Scope,
        *,
        status: ConflictStatus | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[PendingConflict], str | None]:
        sql = "SELECT doc FROM conflicts WHERE pk = ?"
        args: list[object] = [scope.key]
        if status is not None:
            sql += " AND status = ?"
            args.append(status.value)
        sql += " ORDER BY created_at DESC, conflict_id DESC LIMIT ?"
        args.append(MAX_LISTED)
        with self._db.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return page((from_doc(scope, r[0]) for r in rows), status, limit, cursor)

    def erase_scope(self, scope: Scope) -> int:
        with self._db.write() as conn:
            count = conn.execute("DELETE FROM conflicts WHERE pk = ?", (scope.key,)).rowcount
        self._db.checkpoint()  # no page image of the erased text is left in the WAL
        return int(count)
