"""SQLite source of truth for memory records, with a transactional outbox and a read cache.

Table ``memories`` keeps each record in the local row format of :mod:`.rows` (the record as
plain JSON in ``doc``, its vector as a float32 BLOB in ``embedding``) plus the columns queries
need (status, category, key, version, content hash), keyed by ``(pk, memory_id)`` with
``pk = scope.key``: every query filters by pk, so one scope never sees another's rows, even with
the same memory id. A file written by an older version (the DynamoDB JSON image in an ``item``
column) is migrated in place when it is opened.

Writes are optimistic: ``create`` inserts only if absent, ``update`` only at the expected version,
``transact`` checks every put before applying any, all inside one ``BEGIN IMMEDIATE``
transaction. The same transaction appends an ``outbox`` row per change (``INSERT`` / ``MODIFY`` /
``REMOVE`` with new and old images, as DynamoDB JSON), which is what DynamoDB Streams
(NEW_AND_OLD_IMAGES) is in AWS: the store's :attr:`~SqliteMemoryStore.outbox`
(:class:`~.outbox.SqliteOutbox`, over the same database handle) is the change feed the local
stream reader follows with named checkpoints.

Reads that do not need vectors (``embeddings=False``: recall and the context slots score with the
search index's vectors) are served from a per-process cache of decoded records and listings, one
per scope (:mod:`.read_cache`). Every write transaction bumps the scope's generation and stamps
the rows it writes with it, so a write by another process sharing the file (``agentmem serve
--workers``) is seen by the next read.

Erase is final by construction: the ledger's ``set_erase_barrier`` (:mod:`.scope_ledger`) records
the erase time of a scope in ``erase_barriers`` (which :meth:`~SqliteMemoryStore.erase_scope` leaves alone),
and ``create`` / ``transact`` check it inside their own transaction, refusing any new record of the
scope created at or before it. ``erase_scope`` also purges the scope's outbox rows (their images
hold the text) and writes one key-only ``REMOVE`` per record, so the projections still follow;
the file runs with ``secure_delete`` and is checkpointed after an erase (see :mod:`.sqlite_base`).
Readers' checkpoints stay valid: ``seq`` is ``AUTOINCREMENT``, never reused.

Memory ids are time-sortable, so "newest first" is ``ORDER BY memory_id DESC``; list cursors are
the last id returned, base64-wrapped to stay opaque. Listings name their index (``INDEXED BY``):
without ``ANALYZE`` statistics SQLite walks the primary key of the whole scope instead.

The records, their outbox rows, the erase barrier and the cache's generation share one
transaction, so the store writes them all; each table belongs to one object over the shared
database handle: the row format and its migration are :mod:`.rows`, the read cache
:mod:`.read_cache`, the change feed :mod:`.outbox`, the consolidation counters, scope walk,
reconcile cursors and erase barriers :mod:`.scope_ledger`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem.adapters.codec import format_sortable
from agentmem.adapters.embedded import audit_log, outbox, rows, scope_ledger
from agentmem.adapters.embedded.outbox import SqliteOutbox, image_json
from agentmem.adapters.embedded.read_cache import ReadCache
from agentmem.adapters.embedded.scope_ledger import SqliteScopeLedger
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase, bump_generation, chunks, placeholders
from agentmem.domain.models import AuditEvent, MemoryRecord, Scope, Status
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
    gen INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL,
    embedding BLOB,
    PRIMARY KEY (pk, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memories_by_status ON memories (pk, status, memory_id);
CREATE INDEX IF NOT EXISTS memories_by_key ON memories (pk, key, status);
CREATE INDEX IF NOT EXISTS memories_by_category ON memories (pk, category, status, memory_id);
CREATE INDEX IF NOT EXISTS memories_by_gen ON memories (pk, gen);
CREATE TABLE IF NOT EXISTS generations (
    pk TEXT PRIMARY KEY, gen INTEGER NOT NULL, reset_gen INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""
_SCHEMA += outbox.SCHEMA
_SCHEMA += scope_ledger.SCHEMA
_SCHEMA += audit_log.SCHEMA  # the audit trail shares the file: a write and its line, one transaction
_ALL_STATUSES = frozenset(s.value for s in Status)


def _migrate(conn: Any) -> None:
    rows.migrate_v1(conn, _SCHEMA)
    scope_ledger.migrate(conn)


class SqliteMemoryStore:
    """:class:`agentmem.ports.MemoryStore` over one SQLite file (or ``":memory:"``); over the
    same database handle, its :attr:`ledger` is the :class:`~agentmem.ports.ScopeLedger` and its
    :attr:`outbox` the :class:`~agentmem.ports.ChangeFeed` its writes append to."""

    def __init__(self, path: str | Path, *, clock: Callable[[], datetime] | None = None) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="memory", migrate=_migrate)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._cache = ReadCache()
        self.ledger = SqliteScopeLedger(self._db, self._clock)
        self.outbox = SqliteOutbox(self._db, self._clock)

    def close(self) -> None:
        self._cache.clear()
        self._db.close()

    def compact(self, min_free_fraction: float) -> bool:
        """:class:`agentmem.ports.Compactable` (the whole ``memory.db``)."""
        return self._db.compact(min_free_fraction)

    # ------------------------------------------------------------------ writes

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
    def _current(conn: Any, scope: Scope, memory_id: str) -> tuple[int, str] | None:
        """Stored version and old image (DynamoDB JSON, for the outbox) of a record."""
        row = conn.execute(
            "SELECT version, doc, embedding FROM memories WHERE pk = ? AND memory_id = ?",
            (scope.key, memory_id),
        ).fetchone()
        if row is None:
            return None
        return int(row[0]), image_json(rows.decode(scope, row[1], row[2]))

    @staticmethod
    def _version(conn: Any, pk: str, memory_id: str) -> int | None:
        row = conn.execute(
            "SELECT version FROM memories WHERE pk = ? AND memory_id = ?", (pk, memory_id)
        ).fetchone()
        return None if row is None else int(row[0])

    def _write(self, conn: Any, record: MemoryRecord, old_image: str | None, gen: int) -> None:
        conn.execute(rows.INSERT_ROW, rows.row_values(record, gen))
        event = "INSERT" if old_image is None else "MODIFY"
        self.outbox.append(conn, event, record.scope.key, record.memory_id, image_json(record), old_image)

    def create(self, record: MemoryRecord) -> None:
        self.create_audited(record, ())

    def create_audited(self, record: MemoryRecord, events: Sequence[AuditEvent]) -> None:
        """:class:`agentmem.ports.AuditedWrites`: the record and its audit lines (the trail's
        ``audit_events`` table in this file, :mod:`.audit_log`) in one transaction."""
        with self._db.write() as conn:
            if self._version(conn, record.scope.key, record.memory_id) is not None:
                raise VersionConflict(
                    "memory already exists", details={"memory_id": record.memory_id, "expected": None}
                )
            self._check_barrier(conn, [record])
            self._write(conn, record, None, bump_generation(conn, record.scope.key))
            for event in events:
                audit_log.insert_event(conn, event)

    def update(self, record: MemoryRecord, expected_version: int) -> None:
        with self._db.write() as conn:
            current = self._current(conn, record.scope, record.memory_id)
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
            self._write(conn, record, current[1], bump_generation(conn, record.scope.key))

    def transact(self, puts: Sequence[Put]) -> None:
        self.transact_audited(puts, ())

    def transact_audited(self, puts: Sequence[Put], events: Sequence[AuditEvent]) -> None:
        """:class:`agentmem.ports.AuditedWrites`: the puts and their audit lines in one transaction."""
        keys = [(p.record.scope.key, p.record.memory_id) for p in puts]
        if len(set(keys)) != len(keys):
            raise ValidationFailed("a transaction may touch each memory only once")
        if not puts:
            return
        with self._db.write() as conn:
            olds: list[str | None] = []
            for put, (pk, memory_id) in zip(puts, keys, strict=True):
                if put.expected_version is None:  # a create: only its absence is checked
                    current, actual = None, self._version(conn, pk, memory_id)
                else:
                    current = self._current(conn, put.record.scope, memory_id)
                    actual = None if current is None else current[0]
                if actual != put.expected_version:
                    raise VersionConflict(
                        "transaction cancelled: version check failed",
                        details={"memory_id": memory_id, "expected": put.expected_version, "actual": actual},
                    )
                olds.append(None if current is None else current[1])
            self._check_barrier(conn, [p.record for p in puts if p.expected_version is None])
            gens = {pk: bump_generation(conn, pk) for pk in dict.fromkeys(pk for pk, _ in keys)}
            for put, old in zip(puts, olds, strict=True):
                self._write(conn, put.record, old, gens[put.record.scope.key])
            for event in events:
                audit_log.insert_event(conn, event)

    def hard_delete(self, scope: Scope, memory_id: str) -> bool:
        with self._db.write() as conn:
            current = self._current(conn, scope, memory_id)
            if current is None:
                return False
            conn.execute("DELETE FROM memories WHERE pk = ? AND memory_id = ?", (scope.key, memory_id))
            bump_generation(conn, scope.key, reset=True)
            self.outbox.append(conn, "REMOVE", scope.key, memory_id, None, current[1])
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
            bump_generation(conn, scope.key, reset=True)
            self.outbox.drop_images(conn, scope.key)
            for memory_id in ids:
                self.outbox.append(conn, "REMOVE", scope.key, memory_id, None, None)
            conn.execute("DELETE FROM pending_scopes WHERE pk = ?", (scope.key,))
        self._cache.drop(scope.key)
        self._db.checkpoint()
        return len(ids)

    # ------------------------------------------------------------------ reads

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT doc, embedding FROM memories WHERE pk = ? AND memory_id = ?", (scope.key, memory_id)
            ).fetchone()
        return None if row is None else rows.decode(scope, row[0], row[1])

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, embeddings: bool = True
    ) -> dict[str, MemoryRecord]:
        wanted = list(dict.fromkeys(memory_ids))
        with self._db.read() as conn:
            if not embeddings:
                return self._cache.records(conn, scope, self._cache.scope(conn, scope.key), wanted)
            found: dict[str, MemoryRecord] = {}
            for part in chunks(wanted):
                for memory_id, doc, blob in conn.execute(
                    "SELECT memory_id, doc, embedding FROM memories"
                    f" WHERE pk = ? AND memory_id IN ({placeholders(len(part))})",
                    (scope.key, *part),
                ):
                    found[memory_id] = rows.decode(scope, doc, blob)
        return {m: found[m] for m in wanted if m in found}

    @staticmethod
    def _listing_sql(
        statuses: Sequence[str], category: str | None, cursor: str | None
    ) -> tuple[str, list[Any]]:
        """The ids of one listing page, through the index that serves it in order."""
        if category is not None:
            sql = (
                "SELECT memory_id FROM memories INDEXED BY memories_by_category WHERE pk = ? AND category = ?"
            )
            args: list[Any] = [category]
        elif set(statuses) == _ALL_STATUSES:
            sql, args = "SELECT memory_id FROM memories WHERE pk = ?", []
        else:
            sql, args = "SELECT memory_id FROM memories INDEXED BY memories_by_status WHERE pk = ?", []
        if len(statuses) == 1:  # "= ?": with "IN (?)" SQLite sorts the rows instead of walking the index
            sql += " AND status = ?"
            args += statuses
        elif category is not None or set(statuses) != _ALL_STATUSES:
            sql += f" AND status IN ({placeholders(len(statuses))})"
            args += statuses
        if cursor is not None:
            sql += " AND memory_id < ?"
            args.append(scope_ledger.decode_cursor(cursor))
        return sql + " ORDER BY memory_id DESC LIMIT ?", args

    def list(
        self,
        scope: Scope,
        *,
        statuses: Iterable[Status] = (Status.ACTIVE,),
        category: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        embeddings: bool = True,
    ) -> Page:
        wanted = sorted({Status(s).value for s in statuses})
        if not wanted or limit <= 0:
            return Page(items=[], next_cursor=None)
        category = None if category is None else str(category)
        sql, args = self._listing_sql(wanted, category, cursor)
        with self._db.read() as conn:
            cache = self._cache.scope(conn, scope.key) if not embeddings else None
            listing_key = (tuple(wanted), category, limit, cursor)
            listed = cache.listings.get(listing_key) if cache is not None else None
            if listed is None:
                found = [str(r[0]) for r in conn.execute(sql, [scope.key, *args, limit + 1]).fetchall()]
                more = len(found) > limit
                found = found[:limit]
                listed = (found, scope_ledger.encode_cursor(found[-1]) if more else None)
                if cache is not None:
                    cache.listings[listing_key] = listed
            ids, next_cursor = listed
            if cache is not None:
                by_id = self._cache.records(conn, scope, cache, ids)
            else:
                by_id = {}
                for part in chunks(ids):
                    for memory_id, doc, blob in conn.execute(
                        "SELECT memory_id, doc, embedding FROM memories"
                        f" WHERE pk = ? AND memory_id IN ({placeholders(len(part))})",
                        (scope.key, *part),
                    ):
                        by_id[memory_id] = rows.decode(scope, doc, blob)
        return Page(items=[by_id[m] for m in ids if m in by_id], next_cursor=next_cursor)

    def find_by_key(self, scope: Scope, key: str) -> builtins.list[MemoryRecord]:
        with self._db.read() as conn:
            found = conn.execute(
                "SELECT doc, embedding FROM memories INDEXED BY memories_by_key"
                " WHERE pk = ? AND key = ? AND status = ? ORDER BY memory_id DESC",
                (scope.key, key, Status.ACTIVE.value),
            ).fetchall()
        return [rows.decode(scope, doc, blob) for doc, blob in found]

    def scan_active(
        self, scope: Scope, limit: int, *, embeddings: bool = True
    ) -> builtins.list[MemoryRecord]:
        return self.list(scope, statuses=(Status.ACTIVE,), limit=limit, embeddings=embeddings).items
