"""Turn intake: what ``POST /v1/turns`` hands to the ingest queue (SQS in AWS)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmem.messages import TurnMessage
from agentmem.ports import TurnQueue


@dataclass
class TurnService:
    queue: TurnQueue

    def enqueue(self, messages: Sequence[TurnMessage]) -> list[str]:
        """Enqueue validated turns for asynchronous ingestion; returns their message ids. Raises
        QueueFull (nothing enqueued) when the queue is at capacity."""
        return self.queue.send(messages)
