"""The embedded memory store's row format: plain JSON for the record, its vector as a float32 BLOB.

The DynamoDB codec (:mod:`agentmem.adapters.codec`) speaks typed attribute values, ``Decimal``
numbers and base64 binaries; decoding one record through it cost ~90 µs, most of a context call's
time at 10k memories. The local store has no such wire to honour, so a row keeps

* ``doc``: the record's fields as plain JSON (numbers, strings, lists; datetimes as ISO-8601
  text; ``None`` fields left out), without the scope (the row's key holds it) and without the
  embedding;
* ``embedding``: the vector as little-endian float32 bytes (what the search index stores too), read
  only by callers that ask for it.

The doc also keeps the memory's reading by the attribute rules (``attrs``: what
:func:`~agentmem.domain.attributes.infer_all` finds in its content, with a fingerprint of the rules'
source, :func:`rules_fingerprint`). :func:`decode` hands a reading made by the same rules to the
domain (:func:`~agentmem.domain.attributes.known_reading`), so the slot channel, the read-time
net and the write path's conflict check do not run the rules again on memories this process has
not met yet (~0.2 ms each; up to ~200 per context call). A reading made by other rules (a row
written before an upgrade) is ignored: the rules read the content again when asked.

:func:`encode` and :func:`decode` round-trip every field exactly (floats through ``repr``, the
embedding at float32 precision, like the DynamoDB codec). The change stream (the outbox) still
carries DynamoDB images: that is the contract of the projector.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

import numpy as np

from agentmem.adapters.codec import (
    DATE_FIELDS,
    OPTIONAL_STR_FIELDS,
    STR_TUPLE_FIELDS,
    format_sortable,
    image_to_record,
)
from agentmem.adapters.readings import rules_fingerprint
from agentmem.domain.attributes import Attribute, infer_all, known_reading
from agentmem.domain.models import (
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
    Status,
)

_OPTIONAL, _DATES, _TUPLES = OPTIONAL_STR_FIELDS, DATE_FIELDS, STR_TUPLE_FIELDS
# Enum-valued fields and their types; a value is decoded through a per-type lookup table (an
# enum call costs ~1 µs, a dict lookup ~30 ns).
_ENUMS: dict[str, Any] = {
    "category": Category,
    "layer": Layer,
    "importance_source": ImportanceSource,
    "confidence": Confidence,
    "source": Source,
    "status": Status,
}
_BY_VALUE: dict[str, dict[str, Any]] = {
    name: {member.value: member for member in enum} for name, enum in _ENUMS.items()
}
_fromisoformat = datetime.fromisoformat


def encode(record: MemoryRecord) -> tuple[str, bytes | None]:
    """``(doc, embedding)`` of ``record`` for one row."""
    doc: dict[str, Any] = {
        "memory_id": record.memory_id,
        "content": record.content,
        "importance": record.importance,
        "version": record.version,
        "content_hash": record.content_hash,
        "access_count": record.access_count,
        "pinned": record.pinned,
    }
    for name in _ENUMS:
        doc[name] = getattr(record, name).value
    for name in _OPTIONAL:
        value = getattr(record, name)
        if value is not None:
            doc[name] = value
    for name in _TUPLES:
        value = getattr(record, name)
        if value:
            doc[name] = list(value)
    for name in _DATES:
        value = getattr(record, name)
        if value is not None:
            doc[name] = value.isoformat()
    refs = record.source_refs
    if refs != SourceRefs():
        doc["source_refs"] = [refs.session_id, list(refs.message_ids), refs.trace_id]
    if fingerprint := rules_fingerprint():
        reading = [[a.subject, a.name, a.value, a.single, a.evidence] for a in infer_all(record.content)]
        doc["attrs"] = [fingerprint, reading]
    blob = None if record.embedding is None else np.asarray(record.embedding, dtype="<f4").tobytes()
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")), blob


def decode(scope: Scope, doc: str, embedding: bytes | None = None) -> MemoryRecord:
    """The record of a row; ``embedding`` None leaves the record's vector out (``embedding`` None,
    ``embedding_model`` still says which model it was stored with)."""
    fields: dict[str, Any] = json.loads(doc)
    kept = fields.pop("attrs", None)
    if kept is not None and kept[0] == rules_fingerprint():
        known_reading(fields["content"], tuple(Attribute(*a) for a in kept[1]))
    for name, table in _BY_VALUE.items():
        fields[name] = table[fields[name]]
    for name in _DATES:
        value = fields.get(name)
        if value is not None:
            fields[name] = _fromisoformat(value)
    for name in _TUPLES:
        value = fields.get(name)
        if value is not None:
            fields[name] = tuple(value)
    refs = fields.get("source_refs")
    if refs is not None:
        fields["source_refs"] = SourceRefs(refs[0], tuple(refs[1]), refs[2])
    if embedding is not None:
        fields["embedding"] = tuple(np.frombuffer(embedding, dtype="<f4").astype(np.float64).tolist())
    return MemoryRecord(scope=scope, **fields)


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
        for statement in schema.split(";"):
            if statement.strip():
                conn.execute(statement)
        for (item,) in conn.execute("SELECT item FROM memories_v1").fetchall():
            conn.execute(INSERT_ROW, row_values(image_to_record(json.loads(item)), 0))
        conn.execute("DROP TABLE memories_v1")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
