"""The embedded store's outbox: the change feed the projector follows, in the shape DynamoDB
Streams carries it. :class:`SqliteOutbox` owns the ``outbox`` and ``outbox_checkpoints`` tables of
the store's database: the store appends a change inside its own write transaction
(:meth:`SqliteOutbox.append`), and readers follow the feed with named checkpoints, as the AWS
side reads its table's stream with a reader of its own. :class:`OutboxRow` is one change as the
local stream reader hands it to the projector; :func:`image_json` the images the store's write
transactions append.

:func:`image_json` writes the record's stream image (DynamoDB JSON, binaries base64) directly,
text for text what :func:`~agentmem.adapters.codec.record_to_json_image` writes through boto3's
``TypeSerializer`` (~220 µs a record; this ~25 µs): every write appends one or two images
(``MODIFY`` carries the old one too), so the codec was a fixed share of each ingested turn.
The codec stays the reference (a test compares both on varied records) and the reader side."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np
from boto3.dynamodb.types import DYNAMODB_CONTEXT

from agentmem.adapters.codec import (
    DATE_FIELDS,
    OPTIONAL_STR_FIELDS,
    STR_TUPLE_FIELDS,
    format_datetime,
    format_sortable,
    image_to_record,
    memory_sort_key,
    parse_datetime,
)
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import MemoryRecord
from agentmem.event_ports import BacklogState
from agentmem.port_types import RetentionPolicy

__all__ = ["SCHEMA", "OutboxRow", "SqliteOutbox", "image_json"]

SCHEMA = """
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
CREATE INDEX IF NOT EXISTS outbox_by_pk ON outbox (pk);
"""


def _float(value: float) -> dict[str, str]:
    """A float as the codec stores it (12 decimals) and boto3 writes it (its decimal context)."""
    return {"N": str(DYNAMODB_CONTEXT.create_decimal(Decimal(repr(round(float(value), 12)))))}


def _strings(values: tuple[str, ...]) -> dict[str, Any]:
    return {"L": [{"S": v} for v in values]}


def image_json(record: MemoryRecord) -> str:
    """``record`` as stream-event DynamoDB JSON text, the same text as
    :func:`~agentmem.adapters.codec.record_to_json_image` (same attributes, order and numbers)."""
    scope = record.scope
    image: dict[str, Any] = {
        "pk": {"S": scope.key},
        "sk": {"S": memory_sort_key(record.memory_id)},
        "tenant_id": {"S": scope.tenant_id},
        "user_id": {"S": scope.user_id},
        "memory_id": {"S": record.memory_id},
        "content": {"S": record.content},
        "category": {"S": record.category.value},
        "layer": {"S": record.layer.value},
        "importance": _float(record.importance),
        "importance_source": {"S": record.importance_source.value},
        "confidence": {"S": record.confidence.value},
        "source": {"S": record.source.value},
        "version": {"N": str(int(record.version))},
        "content_hash": {"S": record.content_hash},
        "access_count": {"N": str(int(record.access_count))},
        "status": {"S": record.status.value},
        "pinned": {"BOOL": bool(record.pinned)},
    }
    for name in OPTIONAL_STR_FIELDS:
        value = getattr(record, name)
        if value is not None:
            image[name] = {"S": value}
    for name in STR_TUPLE_FIELDS:
        image[name] = _strings(getattr(record, name))
    for name in DATE_FIELDS:
        value = getattr(record, name)
        if value is not None:
            image[name] = {"S": format_datetime(value)}
    if record.expires_at is not None:
        image["ttl"] = {"N": str(int(record.expires_at.timestamp()))}
    refs = record.source_refs
    source_refs: dict[str, Any] = {"message_ids": _strings(refs.message_ids)}
    if refs.session_id is not None:
        source_refs["session_id"] = {"S": refs.session_id}
    if refs.trace_id is not None:
        source_refs["trace_id"] = {"S": refs.trace_id}
    image["source_refs"] = {"M": source_refs}
    if record.embedding is not None:
        blob = np.asarray(record.embedding, dtype="<f4").tobytes()
        image["embedding"] = {"B": base64.b64encode(blob).decode("ascii")}
    return json.dumps(image, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One change, as a DynamoDB stream record carries it (images are stream-event JSON)."""

    seq: int
    event_name: str  # INSERT | MODIFY | REMOVE
    pk: str
    sk: str
    new_image: dict[str, Any] | None
    old_image: dict[str, Any] | None
    created_at: datetime

    @property
    def memory_id(self) -> str:
        return self.sk.removeprefix("MEM#")

    def new_record(self) -> MemoryRecord | None:
        return None if self.new_image is None else image_to_record(self.new_image)

    def old_record(self) -> MemoryRecord | None:
        return None if self.old_image is None else image_to_record(self.old_image)

    def to_stream_record(self) -> dict[str, Any]:
        """The row in the shape of one Lambda DynamoDB Streams event record."""
        body: dict[str, Any] = {
            "Keys": {"pk": {"S": self.pk}, "sk": {"S": self.sk}},
            "SequenceNumber": str(self.seq),
            "StreamViewType": "NEW_AND_OLD_IMAGES",
            "ApproximateCreationDateTime": self.created_at.timestamp(),
        }
        if self.new_image is not None:
            body["NewImage"] = self.new_image
        if self.old_image is not None:
            body["OldImage"] = self.old_image
        return {
            "eventID": str(self.seq),
            "eventName": self.event_name,
            "eventSource": "aws:dynamodb",
            "dynamodb": body,
        }


class SqliteOutbox:
    """:class:`agentmem.ports.ChangeFeed` (and :class:`~agentmem.ports.StreamBacklog`,
    :class:`~agentmem.ports.Retained`) over the ``outbox`` tables of the store's database handle:
    the :class:`~agentmem.adapters.embedded.memory_store.SqliteMemoryStore` that shares the
    handle appends to it in its write transactions and exposes it as its ``outbox``."""

    def __init__(self, db: SqliteDatabase, clock: Callable[[], datetime]) -> None:
        self._db = db
        self._clock = clock

    # ------------------------------------------------------------------ writes (the store's)

    def append(
        self, conn: Any, event: str, pk: str, memory_id: str, new: str | None, old: str | None
    ) -> None:
        """One change, inside the caller's write transaction on ``conn`` (images as
        :func:`image_json` text; a key-only ``REMOVE`` has neither)."""
        conn.execute(
            "INSERT INTO outbox (event_name, pk, sk, new_image, old_image, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (event, pk, memory_sort_key(memory_id), new, old, format_sortable(self._clock())),
        )

    @staticmethod
    def drop_images(conn: Any, pk: str) -> None:
        """Inside an erase's transaction: the scope's changes that carry an image (they hold the
        text); key-only ``REMOVE`` rows stay for the readers."""
        conn.execute(
            "DELETE FROM outbox WHERE pk = ? AND (new_image IS NOT NULL OR old_image IS NOT NULL)", (pk,)
        )

    # ------------------------------------------------------------------ the feed

    def read_outbox(self, after_seq: int, limit: int) -> list[OutboxRow]:
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

    def outbox_backlog(self, name: str) -> BacklogState:
        """:class:`agentmem.ports.StreamBacklog`: changes after reader ``name``'s checkpoint."""
        with self._db.read() as conn:
            count, oldest = conn.execute(
                "SELECT COUNT(*), MIN(created_at) FROM outbox WHERE seq > COALESCE("
                "(SELECT seq FROM outbox_checkpoints WHERE name = ?), 0)",
                (name,),
            ).fetchone()
        return BacklogState(int(count), None if oldest is None else parse_datetime(str(oldest)))

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: the rows ``policy.outbox_reader`` (the projector,
        which applies each change to both projections before it moves its checkpoint) has
        applied, and any row older than ``policy.outbox_max_age`` though it has not (as DynamoDB
        Streams drop records after 24 hours: the reconciler repairs what a projection missed)."""
        applied = self.prune_outbox(self.outbox_checkpoint(policy.outbox_reader))
        with self._db.write() as conn:
            expired = int(
                conn.execute(
                    "DELETE FROM outbox WHERE created_at < ?", (format_sortable(now - policy.outbox_max_age),)
                ).rowcount
            )
        return {"outbox_applied": applied, "outbox_expired_unapplied": expired}

    def prune_outbox(self, through_seq: int) -> int:
        """Drop changes with ``seq <= through_seq`` (every reader is past them); returns how many."""
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM outbox WHERE seq <= ?", (through_seq,)).rowcount)
