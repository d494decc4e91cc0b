"""The one serializer between domain objects and their stored / wire forms.

Written against DynamoDB semantics because the DynamoDB store, the DynamoDB Streams deserializer
and the local outbox all share it:

* an *item* is the plain attribute dict boto3's resource API takes: ``str``, ``Decimal`` for
  numbers (never ``float``), ``bytes`` (the embedding, little-endian float32), lists, maps and
  ``bool``; ``None`` values are omitted. Datetimes are ISO-8601 UTC strings
  (``2026-01-05T09:00:00Z``, microseconds only when non-zero). Keys: ``pk`` = ``scope.key``,
  ``sk`` = ``MEM#<memory_id>``, plus ``tenant_id`` / ``user_id`` for indexes and ``ttl`` (epoch
  seconds of ``expires_at``, the attribute DynamoDB TTL needs; ignored on read);
* an *image* is the same item in typed DynamoDB JSON (``{"S": ...}``, ``{"N": ...}``), as the
  low-level client and stream records carry it. Stream events delivered to Lambda carry binary
  values base64-encoded: :func:`image_to_wire` produces that form (the local outbox stores it) and
  :func:`image_to_record` accepts both raw bytes and base64 text. An item may carry its embedding
  as ``embedding_f16`` (little-endian float16) instead: the DynamoDB store's compact form, read
  the same way. The DynamoDB store keeps the vector in an item of its own
  (``VEC#<memory_id>``, :mod:`agentmem.adapters.aws.dynamodb_vectors`), so its memory items and
  their stream images carry none; an image without a vector decodes with ``embedding`` None.

Round trips are exact: tuples stay tuples, enums are restored, the embedding keeps float32
precision. :func:`change_from_stream_record` turns a stream record into the projector's change.
Turns travel as the SQS message body (:func:`turn_to_body` / :func:`body_to_turn`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import numpy as np
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

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
from agentmem.errors import ValidationFailed
from agentmem.ports import Change

SORT_KEY_PREFIX = "MEM#"
VECTOR_SORT_KEY_PREFIX = "VEC#"  # the DynamoDB store's item holding a memory's vector

# The record fields by kind (the local row format of adapters/embedded/rows.py shares them).
OPTIONAL_STR_FIELDS = (
    "key",
    "value",
    "slot_hint",
    "embedding_model",
    "embedding_revision",
    "superseded_by",
    "quarantine_reason",
)
DATE_FIELDS = ("created_at", "updated_at", "last_accessed_at", "valid_from", "valid_to", "expires_at")
STR_TUPLE_FIELDS = ("tags", "supersedes", "entities")
SCALAR_ATTRIBUTES = (
    "tenant_id",
    "user_id",
    "memory_id",
    "content",
    "category",
    "layer",
    "importance",
    "importance_source",
    "confidence",
    "source",
    "version",
    "content_hash",
    "access_count",
    "status",
    "pinned",
    "source_refs",
)
RECORD_ATTRIBUTES = SCALAR_ATTRIBUTES + OPTIONAL_STR_FIELDS + STR_TUPLE_FIELDS + DATE_FIELDS
"""Every attribute :func:`item_to_record` reads but the vector (and the table keys): what an
index must project for its entries to decode as records without their embedding."""

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


# --------------------------------------------------------------------------- datetimes


def format_datetime(value: datetime) -> str:
    """ISO-8601 UTC with a ``Z``; naive datetimes are read as UTC. Microseconds only if set."""
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    text = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    if utc.microsecond:
        text += f".{utc.microsecond:06d}"
    return text + "Z"


def format_sortable(value: datetime | None) -> str:
    """Fixed-width UTC text (always microseconds) whose string order is time order; '' for None."""
    if value is None:
        return ""
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_datetime(text: str) -> datetime:
    """Inverse of :func:`format_datetime` (any ISO-8601 form); always timezone-aware UTC."""
    parsed = datetime.fromisoformat(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


# --------------------------------------------------------------------------- records <-> items


def memory_sort_key(memory_id: str) -> str:
    return f"{SORT_KEY_PREFIX}{memory_id}"


def vector_sort_key(memory_id: str) -> str:
    return f"{VECTOR_SORT_KEY_PREFIX}{memory_id}"


def embedding_to_bytes(embedding: tuple[float, ...] | np.ndarray) -> bytes:
    return np.asarray(embedding, dtype="<f4").tobytes()


def embedding_from_bytes(data: bytes) -> tuple[float, ...]:
    return tuple(np.frombuffer(data, dtype="<f4").astype(np.float64).tolist())


EMBEDDING_F16 = "embedding_f16"  # attribute of an embedding kept as little-endian float16


def embedding_to_f16_bytes(embedding: tuple[float, ...] | np.ndarray) -> bytes:
    return np.asarray(embedding, dtype="<f2").tobytes()


def embedding_from_f16_bytes(data: bytes) -> tuple[float, ...]:
    return tuple(np.frombuffer(data, dtype="<f2").astype(np.float64).tolist())


def _number(value: float | int) -> Decimal:
    """DynamoDB numbers hold 38 digits between 1E-130 and 1E+125: floats are kept to 12
    decimals, which also turns a denormal like 5e-324 into 0 instead of an Underflow."""
    return Decimal(repr(round(value, 12))) if isinstance(value, float) else Decimal(value)


def record_to_item(record: MemoryRecord) -> dict[str, Any]:
    """The plain DynamoDB item of ``record`` (see module docstring)."""
    item: dict[str, Any] = {
        "pk": record.scope.key,
        "sk": memory_sort_key(record.memory_id),
        "tenant_id": record.scope.tenant_id,
        "user_id": record.scope.user_id,
        "memory_id": record.memory_id,
        "content": record.content,
        "category": record.category.value,
        "layer": record.layer.value,
        "importance": _number(float(record.importance)),
        "importance_source": record.importance_source.value,
        "confidence": record.confidence.value,
        "source": record.source.value,
        "version": _number(int(record.version)),
        "content_hash": record.content_hash,
        "access_count": _number(int(record.access_count)),
        "status": record.status.value,
        "pinned": bool(record.pinned),
    }
    for name in OPTIONAL_STR_FIELDS:
        value = getattr(record, name)
        if value is not None:
            item[name] = value
    for name in STR_TUPLE_FIELDS:
        item[name] = list(getattr(record, name))
    for name in DATE_FIELDS:
        value = getattr(record, name)
        if value is not None:
            item[name] = format_datetime(value)
    if record.expires_at is not None:
        item["ttl"] = Decimal(int(record.expires_at.timestamp()))
    refs: dict[str, Any] = {"message_ids": list(record.source_refs.message_ids)}
    if record.source_refs.session_id is not None:
        refs["session_id"] = record.source_refs.session_id
    if record.source_refs.trace_id is not None:
        refs["trace_id"] = record.source_refs.trace_id
    item["source_refs"] = refs
    if record.embedding is not None:
        item["embedding"] = embedding_to_bytes(record.embedding)
    return item


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, Binary):
        return bytes(value.value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):  # base64, as stream events carry binary values
        return base64.b64decode(value)
    raise ValueError(f"not a binary value: {type(value).__name__}")


def item_to_record(item: Mapping[str, Any]) -> MemoryRecord:
    """Inverse of :func:`record_to_item`; accepts ``Decimal``/``int``/``float`` numbers."""
    try:
        scope = Scope(str(item["tenant_id"]), str(item["user_id"]))
        refs = item.get("source_refs") or {}
        kwargs: dict[str, Any] = {
            "scope": scope,
            "memory_id": str(item["memory_id"]),
            "content": str(item["content"]),
            "category": Category(item["category"]),
            "layer": Layer(item.get("layer", Layer.LONG_TERM.value)),
            "importance": float(item.get("importance", 0.5)),
            "importance_source": ImportanceSource(item.get("importance_source", "scored")),
            "confidence": Confidence(item.get("confidence", "confirmed")),
            "source": Source(item.get("source", "user")),
            "version": int(item.get("version", 1)),
            "content_hash": str(item.get("content_hash", "")),
            "access_count": int(item.get("access_count", 0)),
            "status": Status(item.get("status", "active")),
            "pinned": bool(item.get("pinned", False)),
            "source_refs": SourceRefs(
                session_id=refs.get("session_id"),
                message_ids=tuple(str(m) for m in refs.get("message_ids") or ()),
                trace_id=refs.get("trace_id"),
            ),
        }
        for name in OPTIONAL_STR_FIELDS:
            if item.get(name) is not None:
                kwargs[name] = str(item[name])
        for name in STR_TUPLE_FIELDS:
            kwargs[name] = tuple(str(v) for v in item.get(name) or ())
        for name in DATE_FIELDS:
            if item.get(name) is not None:
                kwargs[name] = parse_datetime(str(item[name]))
        if item.get("embedding") is not None:
            kwargs["embedding"] = embedding_from_bytes(_as_bytes(item["embedding"]))
        elif item.get(EMBEDDING_F16) is not None:  # the DynamoDB store's compact form
            kwargs["embedding"] = embedding_from_f16_bytes(_as_bytes(item[EMBEDDING_F16]))
    except (KeyError, ValueError, TypeError) as exc:
        raise ValidationFailed(f"malformed memory item: {exc}") from exc
    return MemoryRecord(**kwargs)


# --------------------------------------------------------------------------- typed images


def record_to_image(record: MemoryRecord) -> dict[str, Any]:
    """DynamoDB JSON of the record (``{"attr": {"S": ...}}``); binary values are raw bytes."""
    return {name: _serializer.serialize(value) for name, value in record_to_item(record).items()}


def _wire_value(typed: Mapping[str, Any], encode: bool) -> dict[str, Any]:
    ((tag, value),) = typed.items()
    if tag == "B":
        if encode:
            return {"B": base64.b64encode(_as_bytes(value)).decode("ascii")}
        return {"B": _as_bytes(value)}
    if tag == "BS":
        if encode:
            return {"BS": [base64.b64encode(_as_bytes(v)).decode("ascii") for v in value]}
        return {"BS": [_as_bytes(v) for v in value]}
    if tag == "M":
        return {"M": {k: _wire_value(v, encode) for k, v in value.items()}}
    if tag == "L":
        return {"L": [_wire_value(v, encode) for v in value]}
    return {tag: value}


def image_to_wire(image: Mapping[str, Any]) -> dict[str, Any]:
    """The image as JSON-safe stream-event text form: binary values base64-encoded."""
    return {name: _wire_value(typed, True) for name, typed in image.items()}


def image_to_json(image: Mapping[str, Any]) -> str:
    return json.dumps(image_to_wire(image), ensure_ascii=False, separators=(",", ":"))


def record_to_json_image(record: MemoryRecord) -> str:
    """The record as stream-event DynamoDB JSON text (what the local outbox stores)."""
    return image_to_json(record_to_image(record))


def image_to_item(image: Mapping[str, Any]) -> dict[str, Any]:
    """Typed image (raw bytes or base64 binaries) to a plain item."""
    try:
        return {name: _deserializer.deserialize(_wire_value(t, False)) for name, t in image.items()}
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValidationFailed(f"malformed DynamoDB image: {exc}") from exc


def image_to_record(image: Mapping[str, Any]) -> MemoryRecord:
    """Inverse of :func:`record_to_image` (also reads stream events' base64 binaries)."""
    return item_to_record(image_to_item(image))


# --------------------------------------------------------------------------- stream records


def scope_from_partition_key(pk: str) -> Scope:
    """Inverse of ``Scope.key`` (``TENANT#<t>#USER#<u>``; ids never contain ``#``)."""
    parts = pk.split("#")
    if len(parts) != 4 or parts[0] != "TENANT" or parts[2] != "USER":
        raise ValidationFailed("not a memory partition key", details={"pk": pk})
    return Scope(parts[1], parts[3])


def change_from_stream_record(raw: Mapping[str, Any]) -> Change | None:
    """A Lambda DynamoDB Streams record (or a local outbox row in that shape) as a projector
    :class:`~agentmem.ports.Change`; None when the item is not a memory (its sort
    key does not start with ``MEM#``). Raises ValidationFailed on a malformed memory record."""
    body = raw.get("dynamodb") or {}
    keys = body.get("Keys") or {}
    sk = (keys.get("sk") or {}).get("S", "")
    pk = (keys.get("pk") or {}).get("S", "")
    if not isinstance(sk, str) or not sk.startswith(SORT_KEY_PREFIX):
        return None
    event_name = str(raw.get("eventName", ""))
    if event_name not in ("INSERT", "MODIFY", "REMOVE"):
        raise ValidationFailed("unknown stream event", details={"eventName": event_name})
    new = image_to_record(body["NewImage"]) if body.get("NewImage") else None
    old = image_to_record(body["OldImage"]) if body.get("OldImage") else None
    known = new or old
    scope = known.scope if known is not None else scope_from_partition_key(str(pk))
    return Change(
        event_name=event_name,
        scope=scope,
        memory_id=sk[len(SORT_KEY_PREFIX) :],
        new=new,
        old=old,
        sequence=str(body.get("SequenceNumber", "")),
    )
