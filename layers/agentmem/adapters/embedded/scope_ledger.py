""":class:`SqliteScopeLedger`, the :class:`~agentmem.ports.ScopeLedger` of the embedded backend:
the consolidation counters, the scope walk, the reconcile cursors and the erase barriers, over
tables of the memory file, sharing its database handle with
:class:`~agentmem.adapters.embedded.memory_store.SqliteMemoryStore` (which checks a barrier inside
its own write transaction). The AWS twin is :mod:`agentmem.adapters.aws.dynamodb_bookkeeping`.

* ``pending_scopes (pk, writes, updated_at, since)``: ``since`` is the first write after the
  last consolidation; :meth:`SqliteScopeLedger.pending_scopes` lists ready scopes (at least
  :data:`~agentmem.ports.PENDING_READY_WRITES` writes) first, each group longest waiting first.
  A file from before ``since`` gets the column (set to ``updated_at``) when it is opened.
* the scope walk reads the distinct partition keys of ``memories`` in key order; a segment keeps
  the keys of its shards (:mod:`agentmem.domain.scope_walk`) and its cursor is the last key
  it returned.
* ``reconcile_cursors (name, doc)``: one JSON document per ``<segments>#<segment>``.
* ``erase_barriers (pk, erased_at)``: the time of each scope's last erase (never erased with it).
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agentmem.adapters.codec import format_sortable, parse_datetime, scope_from_partition_key
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Scope
from agentmem.domain.scope_walk import (
    PENDING_READY_WRITES,
    SCOPE_SHARDS,
    ReconcileCursor,
    ReconcilePass,
    check_segment,
    shard_of,
)
from agentmem.errors import ValidationFailed

SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_scopes (
    pk TEXT PRIMARY KEY,
    writes INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    since TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS reconcile_cursors (name TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS erase_barriers (pk TEXT PRIMARY KEY, erased_at TEXT NOT NULL) WITHOUT ROWID;
"""
_WALK_BATCH = 500  # partition keys read per step of a segment's walk


def migrate(conn: sqlite3.Connection) -> None:
    """Give a ``pending_scopes`` table of an older file its ``since`` column (no-op otherwise)."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(pending_scopes)").fetchall()}
    if columns and "since" not in columns:
        conn.execute("ALTER TABLE pending_scopes ADD COLUMN since TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE pending_scopes SET since = updated_at")


def encode_cursor(value: str) -> str:
    """An opaque page cursor for ``value`` (the embedded stores' listings and scope walk)."""
    return base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> str:
    """The value of a cursor from :func:`encode_cursor`; ValidationFailed for anything else."""
    try:
        value = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc
    if not value:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
    return value


def _time(value: datetime | None) -> str | None:
    return format_sortable(value) if value is not None else None


def cursor_to_json(cursor: ReconcileCursor) -> str:
    last = cursor.last_pass
    return json.dumps(
        {
            "position": cursor.position,
            "skip": cursor.skip,
            "pass_started_at": _time(cursor.pass_started_at),
            "pass_scopes": cursor.pass_scopes,
            "last_pass": None
            if last is None
            else [format_sortable(last.started_at), format_sortable(last.completed_at), last.scopes_checked],
        }
    )


def cursor_from_json(doc: str, segment: int, segments: int) -> ReconcileCursor:
    plain: dict[str, Any] = json.loads(doc)
    last = plain.get("last_pass")
    started = plain.get("pass_started_at")
    return ReconcileCursor(
        segment=segment,
        segments=segments,
        position=plain.get("position"),
        skip=int(plain.get("skip") or 0),
        pass_started_at=parse_datetime(started) if started else None,
        pass_scopes=int(plain.get("pass_scopes") or 0),
        last_pass=None
        if not last
        else ReconcilePass(parse_datetime(last[0]), parse_datetime(last[1]), int(last[2])),
    )


class SqliteScopeLedger:
    """:class:`agentmem.ports.ScopeLedger` over the memory file's database handle ``db``."""

    def __init__(self, db: SqliteDatabase, clock: Callable[[], datetime]) -> None:
        self._db = db
        self._clock = clock

    def all_scopes(
        self, limit: int, cursor: str | None = None, *, segment: int = 0, segments: int = 1
    ) -> tuple[builtins.list[Scope], str | None]:
        check_segment(segment, segments)
        if limit <= 0:
            return [], None
        after = decode_cursor(cursor) if cursor is not None else ""
        found: list[str] = []
        with self._db.read() as conn:
            while len(found) <= limit:
                rows = conn.execute(
                    "SELECT DISTINCT pk FROM memories WHERE pk > ? ORDER BY pk LIMIT ?", (after, _WALK_BATCH)
                ).fetchall()
                if not rows:
                    break
                after = rows[-1][0]
                found.extend(pk for (pk,) in rows if shard_of(pk, SCOPE_SHARDS) % segments == segment)
        pks = found[:limit]
        more = len(found) > limit
        return [scope_from_partition_key(pk) for pk in pks], (encode_cursor(pks[-1]) if more else None)

    # ------------------------------------------------------------------ consolidation counters

    def mark_pending(self, scope: Scope, writes: int) -> int:
        now = format_sortable(self._clock())
        with self._db.write() as conn:
            row = conn.execute(
                "INSERT INTO pending_scopes (pk, writes, updated_at, since) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (pk) DO UPDATE SET writes = writes + excluded.writes,"
                " updated_at = excluded.updated_at RETURNING writes",
                (scope.key, int(writes), now, now),
            ).fetchone()
        return int(row[0])

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Ready first, then longest waiting."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT pk, writes FROM pending_scopes WHERE writes > 0"
                " ORDER BY writes >= ? DESC, since, pk LIMIT ?",
                (PENDING_READY_WRITES, max(0, limit)),
            ).fetchall()
        return [(scope_from_partition_key(pk), int(writes)) for pk, writes in rows]

    def clear_pending(self, scope: Scope) -> None:
        with self._db.write() as conn:
            conn.execute("DELETE FROM pending_scopes WHERE pk = ?", (scope.key,))

    # ------------------------------------------------------------------ reconcile cursors

    def reconcile_cursor(self, segment: int = 0, segments: int = 1) -> ReconcileCursor | None:
        check_segment(segment, segments)
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT doc FROM reconcile_cursors WHERE name = ?", (f"{segments}#{segment}",)
            ).fetchone()
        return cursor_from_json(row[0], segment, segments) if row else None

    def save_reconcile_cursor(self, cursor: ReconcileCursor) -> None:
        check_segment(cursor.segment, cursor.segments)
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO reconcile_cursors (name, doc) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET doc = excluded.doc",
                (f"{cursor.segments}#{cursor.segment}", cursor_to_json(cursor)),
            )

    # ------------------------------------------------------------------ erase barriers

    def set_erase_barrier(self, scope: Scope, at: datetime) -> datetime:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO erase_barriers (pk, erased_at) VALUES (?, ?)"
                " ON CONFLICT (pk) DO UPDATE SET erased_at = MAX(erased_at, excluded.erased_at)",
                (scope.key, format_sortable(at)),
            )
            row = conn.execute("SELECT erased_at FROM erase_barriers WHERE pk = ?", (scope.key,)).fetchone()
        return parse_datetime(str(row[0]))

    def erase_barrier(self, scope: Scope) -> datetime | None:
        with self._db.read() as conn:
            row = conn.execute("SELECT erased_at FROM erase_barriers WHERE pk = ?", (scope.key,)).fetchone()
        return None if row is None else parse_datetime(str(row[0]))
