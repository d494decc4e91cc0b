"""The embedded store's outbox read side: one change in the shape DynamoDB Streams carries it
(:class:`OutboxRow`: what the local stream reader hands the projector) and the reader methods of
the store (:class:`OutboxReader`: changes after a sequence number, named checkpoints, lag,
pruning). The store's write transactions append the rows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentmem.adapters.codec import image_to_record, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import MemoryRecord

__all__ = ["OutboxReader", "OutboxRow"]


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


class OutboxReader:
    """The change-feed half of :class:`~agentmem.adapters.embedded.memory_store.SqliteMemoryStore`
    (:class:`agentmem.ports.ChangeFeed`) over its ``outbox`` and ``outbox_checkpoints`` tables."""

    _db: SqliteDatabase

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

    def prune_outbox(self, through_seq: int) -> int:
        """Drop changes with ``seq <= through_seq`` (every reader is past them); returns how many."""
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM outbox WHERE seq <= ?", (through_seq,)).rowcount)
