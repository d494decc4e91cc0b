"""The embedded memory store's row format: plain JSON for the record, its vector as a float32 BLOB.

The DynamoDB codec (:mod:`agentmem.adapters.codec`) speaks typed attribute values, ``Decimal``
numbers and base64 binaries; decoding one record through it cost ~90 µs, most of a context call's
time at 10k memories. The local store has no such wire to honour, so a row keeps

* ``doc``: the record's fields as plain JSON (:mod:`agentmem.adapters.record_json`: ``None``
  fields left out, the scope and the embedding too), with its reading by the attribute rules, so
  the slot channel, the read-time net and the write path's conflict check do not run the rules
  again on memories this process has not met yet (~0.2 ms each; up to ~200 per context call);
* ``embedding``: the vector as little-endian float32 bytes (what the search index stores too), read
  only by callers that ask for it.

The change stream (the outbox) still carries DynamoDB images: that is the contract of the projector.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from agentmem.adapters.codec import format_sortable, image_to_record
from agentmem.adapters.embedded.sqlite_base import statements
from agentmem.adapters.record_json import decode, encode
from agentmem.domain.models import MemoryRecord

__all__ = ["INSERT_ROW", "decode", "encode", "migrate_v1", "row_values"]

INSERT_ROW = (
    "INSERT OR REPLACE INTO memories (pk, memory_id, status, category, key, created_at,"
    " version, content_hash, gen, doc, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def row_values(record: MemoryRecord, gen: int) -> tuple[Any, ...]:
    """The parameters of :data:`INSERT_ROW` for ``record`` written at generation ``gen``."""
    doc, blob = encode(record)
    return (
        record.scope.key,
        record.memory_id,
        record.status.value,
        record.category.value,
        record.key,
        format_sortable(record.created_at),
        record.version,
        record.content_hash,
        gen,
        doc,
        blob,
    )


def migrate_v1(conn: sqlite3.Connection, schema: str) -> None:
    """Rewrite a file of the first row format (the record as a DynamoDB JSON image in ``item``)
    into this one, in one transaction; ``schema`` is the store's. A no-op on a new or current file."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(memories)").fetchall()}
    if "item" not in columns:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("ALTER TABLE memories RENAME TO memories_v1")
        for index in ("memories_by_status", "memories_by_key", "memories_by_category"):
            conn.execute(f"DROP INDEX IF EXISTS {index}")
        for statement in statements(schema):  # whole statements: a trigger's body keeps its ';'
            conn.execute(statement)
        for (item,) in conn.execute("SELECT item FROM memories_v1").fetchall():
            conn.execute(INSERT_ROW, row_values(image_to_record(json.loads(item)), 0))
        conn.execute("DROP TABLE memories_v1")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
