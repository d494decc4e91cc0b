"""SQLite source of truth for memory records, with a transactional outbox.

Table ``memories`` keeps each record as its DynamoDB JSON image (the codec's stream-event form) plus
the columns queries need (status, category, key, version, content hash), keyed by
``(pk, memory_id)`` with ``pk = scope.key``: every query filters by pk, so one scope never sees
another's rows, even with the same memory id.

Writes are optimistic: ``create`` inserts only if absent, ``update`` only at the expected version,
``transact`` checks every put before applying any, all inside one ``BEGIN IMMEDIATE``
transaction. The same transaction appends an ``outbox`` row per change (``INSERT`` / ``MODIFY`` /
``REMOVE`` with new and old images), which is what DynamoDB Streams (NEW_AND_OLD_IMAGES) is in
AWS: the local stream reader follows it with named checkpoints (:meth:`read_outbox`,
:meth:`outbox_checkpoint`, :meth:`set_outbox_checkpoint`, :meth:`outbox_lag`).

Erase is final by construction: :meth:`SqliteMemoryStore.set_erase_barrier` records the erase
time of a scope in ``erase_barriers`` (which :meth:`~SqliteMemoryStore.erase_scope` leaves alone),
and ``create`` / ``transact`` check it inside their own transaction, refusing any new record of the
scope created at or before it. ``erase_scope`` also purges the scope's outbox rows (their images
hold the text) and writes one key-only ``REMOVE`` per record, so the projections still follow;
the file runs with ``secure_delete`` and is checkpointed after an erase (see :mod:`.sqlite_base`).
Readers' checkpoints stay valid: ``seq`` is ``AUTOINCREMENT``, never reused.

Memory ids are time-sortable, so "newest first" is ``ORDER BY memory_id DESC``; list cursors are
the last id returned, base64-wrapped to stay opaque.

The module runs over 400 lines: the records, their outbox and the erase barrier share one
transaction, so they share one class (the outbox row type is
:class:`agentmem.adapters.embedded.outbox.OutboxRow`).
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem.adapters.codec import (
    format_sortable,
    image_to_record,
    memory_sort_key,
    parse_datetime,
    record_to_json_image,
    scope_from_partition_key,
)
from agentmem.adapters.embedded.outbox import OutboxRow
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase, chunks, placeholders
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import NotFound, ValidationFailed, VersionConflict
from agentmem.ports import Page, Put

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    pk TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    status TEXT NOT NULL,
    category TEXT NOT NULL,
    key TEXT,
    created_at TEXT NOT NULL,
    version INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY (pk, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memories_by_status ON memories (pk, status, memory_id);
CREATE INDEX IF NOT EXISTS memories_by_key ON memories (pk, key, status);
CREATE INDEX IF NOT EXISTS memories_by_category ON memories (pk, category, status, memory_id);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_name TEXT NOT NULL CHECK (event_name IN ('INSERT', 'MODIFY', 'REMOVE')),
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    new_image TEXT,
    old_image TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_checkpoints (name TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS erase_barriers (pk TEXT PRIMARY KEY, erased_at TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS outbox_by_pk ON outbox (pk);
CREATE TABLE IF NOT EXISTS pending_scopes (
    pk TEXT PRIMARY KEY,
    writes INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
"""


def _encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii")


def _decode_cursor(cursor: str) -> str:
    try:
        value = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc
    if not value:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
    return value


class SqliteMemoryStore:
    """:class:`agentmem.ports.MemoryStore` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path, *, clock: Callable[[], datetime] | None = None) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="memory")
        self._clock = clock or (lambda: datetime.now(UTC))

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ writes

    def _outbox(
        self, conn: Any, event: str, pk: str, memory_id: str, new: str | None, old: str | None
    ) -> None:
        conn.execute(
            "INSERT INTO outbox (event_name, pk, sk, new_image, old_image, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (event, pk, memory_sort_key(memory_id), new, old, format_sortable(self._clock())),
        )

    @staticmethod
    def _check_barrier(conn: Any, records: Iterable[MemoryRecord]) -> None:
        """Refuse new records created at or before their scope's erase barrier (same transaction)."""
        for record in records:
            if record.created_at is None:  # no time to compare (never so on the write paths)
                continue
            row = conn.execute(
                "SELECT erased_at FROM erase_barriers WHERE pk = ?", (record.scope.key,)
            ).fetchone()
            if row is not None and format_sortable(record.created_at) <= str(row[0]):
                raise VersionConflict(
                    "the scope was erased after this record was created",
                    details={"memory_id": record.memory_id, "reason": "erased", "erased_at": str(row[0])},
                )

    @staticmethod
    def _current(conn: Any, pk: str, memory_id: str) -> tuple[int, str] | None:
        row = conn.execute(
            "SELECT version, item FROM memories WHERE pk = ? AND memory_id = ?", (pk, memory_id)
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def _write(self, conn: Any, record: MemoryRecord, old_item: str | None) -> None:
        pk = record.scope.key
        item = record_to_json_image(record)
        conn.execute(
            "INSERT OR REPLACE INTO memories"
            " (pk, memory_id, status, category, key, created_at, version, content_hash, item)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pk,
                record.memory_id,
                record.status.value,
                record.category.value,
                record.key,
                format_sortable(record.created_at),
                record.version,
                record.content_hash,
                item,
            ),
        )
        self._outbox(conn, "INSERT" if old_item is None else "MODIFY", pk, record.memory_id, item, old_item)

    def create(self, record: MemoryRecord) -> None:
        with self._db.write() as conn:
            if self._current(conn, record.scope.key, record.memory_id) is not None:
                raise VersionConflict(
                    "memory already exists", details={"memory_id": record.memory_id, "expected": None}
                )
            self._check_barrier(conn, [record])
            self._write(conn, record, None)

    def update(self, record: MemoryRecord, expected_version: int) -> None:
        with self._db.write() as conn:
            current = self._current(conn, record.scope.key, record.memory_id)
            if current is None:
                raise NotFound("memory not found", details={"memory_id": record.memory_id})
            if current[0] != expected_version:
                raise VersionConflict(
                    "memory changed concurrently",
                    details={
                        "memory_id": record.memory_id,
                        "expected": expected_version,
                        "actual": current[0],
                    },
                )
            self._write(conn, record, current[1])

    def transact(self, puts: Sequence[Put]) -> None:
        keys = [(p.record.scope.key, p.record.memory_id) for p in puts]
        if len(set(keys)) != len(keys):
            raise ValidationFailed("a transaction may touch each memory only once")
        if not puts:
            return
        with self._db.write() as conn:
            olds: list[str | None] = []
            for put, (pk, memory_id) in zip(puts, keys, strict=True):
                current = self._current(conn, pk, memory_id)
                actual = None if current is None else current[0]
                if actual != put.expected_version:
                    raise VersionConflict(
                        "transaction cancelled: version check failed",
                        details={"memory_id": memory_id, "expected": put.expected_version, "actual": actual},
                    )
                olds.append(None if current is None else current[1])
            self._check_barrier(conn, [p.record for p in puts if p.expected_version is None])
            for put, old in zip(puts, olds, strict=True):
                self._write(conn, put.record, old)

    def hard_delete(self, scope: Scope, memory_id: str) -> bool:
        with self._db.write() as conn:
            current = self._current(conn, scope.key, memory_id)
            if current is None:
                return False
            conn.execute("DELETE FROM memories WHERE pk = ? AND memory_id = ?", (scope.key, memory_id))
            self._outbox(conn, "REMOVE", scope.key, memory_id, None, current[1])
            return True

    def erase_scope(self, scope: Scope) -> int:
        """Records, pending counter and the scope's outbox rows; one key-only REMOVE per record
        (no image: nothing of the erased text stays in the change log). The barrier stays."""
        with self._db.write() as conn:
            ids = [
                str(r[0])
                for r in conn.execute(
                    "SELECT memory_id FROM memories WHERE pk = ? ORDER BY memory_id", (scope.key,)
                ).fetchall()
            ]
            conn.execute("DELETE FROM memories WHERE pk = ?", (scope.key,))
            conn.execute(  # rows with images hold the text; key-only REMOVEs stay for the readers
                "DELETE FROM outbox WHERE pk = ? AND (new_image IS NOT NULL OR old_image IS NOT NULL)",
                (scope.key,),
            )
            for memory_id in ids:
                self._outbox(conn, "REMOVE", scope.key, memory_id, None, None)
            conn.execute("DELETE FROM pending_scopes WHERE pk = ?", (scope.key,))
        self._db.checkpoint()
        return len(ids)

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

    # ------------------------------------------------------------------ reads

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT item FROM memories WHERE pk = ? AND memory_id = ?", (scope.key, memory_id)
            ).fetchone()
        return None if row is None else image_to_record(json.loads(row[0]))

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        wanted = list(dict.fromkeys(memory_ids))
        rows: list[tuple[str, str]] = []
        with self._db.read() as conn:
            for part in chunks(wanted):
                rows.extend(
                    conn.execute(
                        f"SELECT memory_id, item FROM memories WHERE pk = ? AND memory_id IN ({placeholders(len(part))})",
                        (scope.key, *part),
                    ).fetchall()
                )
        found = {memory_id: image_to_record(json.loads(item)) for memory_id, item in rows}
        return {m: found[m] for m in wanted if m in found}

    def list(
        self,
        scope: Scope,
        *,
        statuses: Iterable[Status] = (Status.ACTIVE,),
        category: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        wanted = sorted({Status(s).value for s in statuses})
        if not wanted or limit <= 0:
            return Page(items=[], next_cursor=None)
        sql = f"SELECT memory_id, item FROM memories WHERE pk = ? AND status IN ({placeholders(len(wanted))})"
        args: list[Any] = [scope.key, *wanted]
        if category is not None:
            sql += " AND category = ?"
            args.append(str(category))
        if cursor is not None:
            sql += " AND memory_id < ?"
            args.append(_decode_cursor(cursor))
        sql += " ORDER BY memory_id DESC LIMIT ?"
        args.append(limit + 1)
        with self._db.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        items = [image_to_record(json.loads(item)) for _, item in rows]
        return Page(items=items, next_cursor=_encode_cursor(rows[-1][0]) if more else None)

    def find_by_key(self, scope: Scope, key: str) -> builtins.list[MemoryRecord]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT item FROM memories WHERE pk = ? AND key = ? AND status = ? ORDER BY memory_id DESC",
                (scope.key, key, Status.ACTIVE.value),
            ).fetchall()
        return [image_to_record(json.loads(r[0])) for r in rows]

    def scan_active(self, scope: Scope, limit: int) -> builtins.list[MemoryRecord]:
        return self.list(scope, statuses=(Status.ACTIVE,), limit=limit).items

    def all_scopes(self, limit: int, cursor: str | None = None) -> tuple[builtins.list[Scope], str | None]:
        if limit <= 0:
            return [], None
        after = _decode_cursor(cursor) if cursor is not None else ""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT pk FROM memories WHERE pk > ? ORDER BY pk LIMIT ?", (after, limit + 1)
            ).fetchall()
        more = len(rows) > limit
        pks = [r[0] for r in rows[:limit]]
        return [scope_from_partition_key(pk) for pk in pks], (_encode_cursor(pks[-1]) if more else None)

    # ------------------------------------------------------------------ consolidation counters

    def mark_pending(self, scope: Scope, writes: int) -> int:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO pending_scopes (pk, writes, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (pk) DO UPDATE SET writes = writes + excluded.writes,"
                " updated_at = excluded.updated_at",
                (scope.key, int(writes), format_sortable(self._clock())),
            )
            row = conn.execute("SELECT writes FROM pending_scopes WHERE pk = ?", (scope.key,)).fetchone()
        return int(row[0])

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Busiest first (then longest waiting)."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT pk, writes FROM pending_scopes WHERE writes > 0"
                " ORDER BY writes DESC, updated_at, pk LIMIT ?",
                (max(0, limit),),
            ).fetchall()
        return [(scope_from_partition_key(pk), int(writes)) for pk, writes in rows]

    def clear_pending(self, scope: Scope) -> None:
        with self._db.write() as conn:
            conn.execute("DELETE FROM pending_scopes WHERE pk = ?", (scope.key,))

    # ------------------------------------------------------------------ outbox (local stream)

    def read_outbox(self, after_seq: int, limit: int) -> builtins.list[OutboxRow]:
        """Changes with ``seq > after_seq``, oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT seq, event_name, pk, sk, new_image, old_image, created_at FROM outbox"
                " WHERE seq > ? ORDER BY seq LIMIT ?",
                (after_seq, max(0, limit)),
            ).fetchall()
        return [
            OutboxRow(
                seq=int(seq),
                event_name=str(event),
                pk=str(pk),
                sk=str(sk),
                new_image=None if new is None else json.loads(new),
                old_image=None if old is None else json.loads(old),
                created_at=parse_datetime(created),
            )
            for seq, event, pk, sk, new, old, created in rows
        ]

    def outbox_checkpoint(self, name: str) -> int:
        """The last seq reader ``name`` finished (0 if it never ran)."""
        with self._db.read() as conn:
            row = conn.execute("SELECT seq FROM outbox_checkpoints WHERE name = ?", (name,)).fetchone()
        return 0 if row is None else int(row[0])

    def set_outbox_checkpoint(self, name: str, seq: int) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO outbox_checkpoints (name, seq) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
                (name, int(seq)),
            )

    def outbox_lag(self, name: str) -> int:
        """How many changes reader ``name`` has not processed yet."""
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM outbox WHERE seq > COALESCE("
                "(SELECT seq FROM outbox_checkpoints WHERE name = ?), 0)",
                (name,),
            ).fetchone()
        return int(row[0])

    def prune_outbox(self, through_seq: int) -> int:
        """Drop changes with ``seq <= through_seq`` (every reader is past them); returns how many."""
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM outbox WHERE seq <= ?", (through_seq,)).rowcount)
