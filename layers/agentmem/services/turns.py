"""Turn intake: what ``POST /v1/turns`` hands to the ingest queue (SQS in AWS).

No raw text at rest: every turn's texts (the user's and the assistant's side) are redacted
(:func:`agentmem.domain.guards.redact`) *before* they are enqueued, so neither the queue, its
dead letters nor a log of a body ever holds the PII the guards know; the write pipeline then sees
placeholders (and redacts again, harmlessly, for turns that reach the queue another way).

:class:`TurnStatusService` answers "what happened to this turn?" (``GET /v1/turns/{id}``) from
where the pipeline already records it, first match wins: the processed mark
(:meth:`~agentmem.ports.TurnLog.processed_outcome`: processed, quarantined or rejected, with the
memory ids it wrote), the dead letters (:class:`~agentmem.ports.DeadLetterQueue`), then a
``rejected`` audit event naming the turn (a malformed body; a turn dropped because its user was
erased) or the queue's own record of it (:class:`~agentmem.ports.QueuedTurns`), whichever is newer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from agentmem.domain.guards import redact
from agentmem.domain.models import AuditAction, Scope
from agentmem.messages import TurnMessage
from agentmem.ports import AuditLog, DeadLetterQueue, QueuedTurns, TurnLog, TurnQueue

REJECTIONS_SCANNED = 500  # newest ``rejected`` audit events searched for the turn


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


class TurnState(StrEnum):
    QUEUED = "queued"  # accepted by the queue, not processed yet
    PROCESSED = "processed"  # went through the write path (possibly storing nothing)
    REJECTED = "rejected"  # malformed, or dropped because its user was erased: never retried
    QUARANTINED = "quarantined"  # gate 0 found an injection: kept for audit, never recalled
    DEAD_LETTERED = "dead_lettered"  # failed every attempt: waits in the dead letters for a redrive


@dataclass(frozen=True, slots=True)
class TurnReport:
    message_id: str
    status: TurnState
    reason: str | None = None
    memory_ids: tuple[str, ...] = ()
    updated_at: datetime | None = None


_OUTCOME_STATES = {"quarantined": TurnState.QUARANTINED, "rejected": TurnState.REJECTED}


@dataclass
class TurnStatusService:
    turn_log: TurnLog
    queue: TurnQueue
    audit: AuditLog
    dead_letters: DeadLetterQueue | None = None

    def status(self, scope: Scope, message_id: str) -> TurnReport | None:
        """The turn's status in ``scope``, or None when no record of it exists (never sent, or
        sent by another user: another scope's turn is unknown too)."""
        outcome = self.turn_log.processed_outcome(scope, message_id)
        if outcome is not None:
            return _from_outcome(message_id, outcome)
        dead = self.dead_letters.dead_letter(scope, message_id) if self.dead_letters else None
        if dead is not None:
            return TurnReport(message_id, TurnState.DEAD_LETTERED, dead.reason, (), dead.failed_at)
        queued = self.queue.queued_at(scope, message_id) if isinstance(self.queue, QueuedTurns) else None
        rejection = next(
            (
                e
                for e in self.audit.list(scope, REJECTIONS_SCANNED, AuditAction.REJECTED.value)
                if message_id in (e.details.get("message_id"), e.details.get("queue_message_id"))
            ),
            None,
        )
        if rejection is not None and (queued is None or rejection.at >= queued):
            return TurnReport(message_id, TurnState.REJECTED, rejection.reason, (), rejection.at)
        if queued is not None:
            return TurnReport(message_id, TurnState.QUEUED, None, (), queued)
        return None


def _from_outcome(message_id: str, outcome: dict[str, Any]) -> TurnReport:
    """A processed mark as a report: accepted and duplicate are processed; the memory ids are the
    records the turn wrote (a quarantined turn's one record included)."""
    state = _OUTCOME_STATES.get(str(outcome.get("status")), TurnState.PROCESSED)
    reasons = [str(r) for r in outcome.get("reasons") or []]
    ids = [str(i) for key in ("written", "quarantined") for i in outcome.get(key) or []]
    return TurnReport(message_id, state, ",".join(reasons) or None, tuple(dict.fromkeys(ids)), None)
