"""Turn intake: what ``POST /v1/turns`` hands to the ingest queue (SQS in AWS).

No raw text at rest: every turn's texts (the user's and the assistant's side) are redacted
(:func:`agentmem.domain.guards.redact`) *before* they are enqueued, so neither the queue, its
dead letters nor a log of a body ever holds the PII the guards know; the write pipeline then sees
placeholders (and redacts again, harmlessly, for turns that reach the queue another way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmem.domain.guards import redact
from agentmem.messages import TurnMessage
from agentmem.ports import TurnQueue


def redacted(message: TurnMessage) -> TurnMessage:
    """The message with its user and assistant texts redacted (the same message when clean)."""
    user, assistant = redact(message.user), redact(message.assistant)
    if not user.redacted and not assistant.redacted:
        return message
    return message.model_copy(update={"user": user.text, "assistant": assistant.text})


@dataclass
class TurnService:
    queue: TurnQueue

    def enqueue(self, messages: Sequence[TurnMessage]) -> list[str]:
        """Redact, then enqueue validated turns for asynchronous ingestion; returns their message
        ids. Raises QueueFull (nothing enqueued) when the queue, or the tenant's share of it, is
        at capacity."""
        return self.queue.send([redacted(m) for m in messages])
