"""One change of the embedded store's outbox, in the shape DynamoDB Streams carries it
(:class:`OutboxRow`: what the local stream reader hands the projector)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentmem.adapters.codec import image_to_record
from agentmem.domain.models import MemoryRecord

__all__ = ["OutboxRow"]


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
