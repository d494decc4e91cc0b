"""A memory record as plain JSON, without its scope and its vector: the embedded store's row
``doc`` (:mod:`agentmem.adapters.embedded.rows`) and the search indexes' *cards* (the projected
copy a read of the context path may take instead of the store's, :meth:`~agentmem.ports.SearchIndex.cards`).

The DynamoDB codec (:mod:`agentmem.adapters.codec`) speaks typed attribute values, ``Decimal``
numbers and base64 binaries; decoding one record through it costs ~90 µs. Here a record's fields
are plain JSON (numbers, strings, lists; datetimes as ISO-8601 text; ``None`` fields left out).
The doc also keeps the memory's reading by the attribute rules (``attrs``: what
:func:`~agentmem.domain.attributes.infer_all` finds in its content, with a fingerprint of the rules'
source, :func:`~agentmem.adapters.readings.rules_fingerprint`); :func:`decode` hands a reading made
by the same rules to the domain (:func:`~agentmem.domain.attributes.known_reading`), and ignores
one made by other rules. :func:`encode` and :func:`decode` round-trip every field exactly (floats
through ``repr``, the embedding at float32 precision, like the DynamoDB codec).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np

from agentmem.adapters.codec import DATE_FIELDS, OPTIONAL_STR_FIELDS, STR_TUPLE_FIELDS
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
# The record's field names as Python interns them: JSON keys are fresh strings, and a call by
# keyword matches a fresh name to a parameter by comparing text (~3 µs of a record's ~17 µs
# decode), an interned one by identity.
_FIELD_NAMES = {name: name for name in MemoryRecord.__dataclass_fields__}


def encode(record: MemoryRecord) -> tuple[str, bytes | None]:
    """``(doc, embedding)`` of ``record``: :func:`card` and the vector as little-endian float32."""
    blob = None if record.embedding is None else np.asarray(record.embedding, dtype="<f4").tobytes()
    return card(record), blob


def card(record: MemoryRecord) -> str:
    """The JSON doc of ``record``, its vector left out (``embedding_model`` kept)."""
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
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def decode(scope: Scope, doc: str, embedding: bytes | None = None) -> MemoryRecord:
    """The record of a row; ``embedding`` None leaves the record's vector out (``embedding`` None,
    ``embedding_model`` still says which model it was stored with)."""
    loaded: dict[str, Any] = json.loads(doc)
    kept = loaded.pop("attrs", None)
    if kept is not None and kept[0] == rules_fingerprint():
        known_reading(loaded["content"], tuple([Attribute(*a) for a in kept[1]]))
    names = _FIELD_NAMES
    fields = {names.get(key, key): value for key, value in loaded.items()}
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
