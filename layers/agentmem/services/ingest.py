"""Ingest one queue message: validate it as a :class:`~agentmem.messages.TurnMessage`, then run
the write pipeline.

Malformed messages are rejected with a reason in the audit log and are *not* retried (retrying
cannot fix them); transient failures raise so the queue redelivers and finally dead-letters.

Erase is final: a turn of a user erased after it was sent (queue ``sent_at``: SQS
``SentTimestamp``, the local queue's ``sent_at``) or after its own time (``at``) is dropped with a
``rejected`` audit event, reason ``erased``, and not retried — whether it was queued, in flight,
dead-lettered and redriven or redelivered. A turn whose writes meet the barrier (the store refuses
records created at or before it, in the same atomic step) or whose user was erased while the
pipeline ran (the barrier moved between the check and the end) is undone: its records and its L0
line are removed, and it is dropped the same way.

Session memory: every processed turn is recorded in its session's scene log, with the ingest's
verdict for the session window (:meth:`IngestService._record_scene`); a turn of another session
than the user's latest summarises that one (:mod:`agentmem.services.summaries`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain.models import AuditAction, AuditEvent, Scope, Status
from agentmem.errors import AgentMemError, ValidationFailed, VersionConflict
from agentmem.messages import TurnMessage, scope_of_body
from agentmem.ports import AuditLog, MemoryStore, TurnLog
from agentmem.services.events import EventEmitter, announced
from agentmem.services.outcome import TurnOutcome, TurnStatus
from agentmem.services.projector import erased_before
from agentmem.services.summaries import SummaryService
from agentmem.services.write_pipeline import WritePipeline

log = logging.getLogger(__name__)

REJECTED_SCOPE = Scope("_rejected", "_rejected")  # audit bucket for messages with no valid scope
ERASED = "erased"
ASSISTANT_INJECTION = "assistant_injection"  # the reply read as an injection (its facts dropped)
_PAGE = 200


@dataclass
class IngestService:
    pipeline: WritePipeline
    audit: AuditLog
    summaries: SummaryService | None = None  # session memory: scene logs and summaries
    events: EventEmitter | None = None  # turn.processed / turn.rejected (docs/events.md)

    @property
    def store(self) -> MemoryStore:
        return self.pipeline.store

    @property
    def turn_log(self) -> TurnLog:
        return self.pipeline.turn_log

    def handle(
        self, body: str, *, now: datetime, queue_message_id: str = "", sent_at: datetime | None = None
    ) -> TurnOutcome:
        """Process one message body (``sent_at``: when the queue accepted it). Returns the
        outcome, announced as an event; raises only on transient failures."""
        outcome = self._handle(body, now=now, queue_message_id=queue_message_id, sent_at=sent_at)
        if self.events is not None:
            self.events.turn(
                scope_of_body(body) or REJECTED_SCOPE,
                outcome.message_id,
                outcome.status,
                now,
                announced(outcome),
            )
        return outcome

    def _handle(
        self, body: str, *, now: datetime, queue_message_id: str, sent_at: datetime | None
    ) -> TurnOutcome:
        try:
            message = TurnMessage.from_body(body)
        except ValidationFailed as exc:
            reason = _reason(exc)
            self.audit.append(
                AuditEvent(
                    scope=scope_of_body(body) or REJECTED_SCOPE,
                    action=AuditAction.REJECTED,
                    at=now,
                    reason=reason,
                    details={"queue_message_id": queue_message_id},
                )
            )
            log.warning("ingest.rejected", extra={"reason": reason, "queue_message_id": queue_message_id})
            return TurnOutcome(message_id=queue_message_id, status=TurnStatus.REJECTED, reasons=[reason])
        scope = message.scope
        barrier = self.pipeline.ledger.erase_barrier(scope)
        if erased_before(barrier, sent_at, message.at):
            return self._drop(message, now, queue_message_id, stage="ingest")
        try:
            outcome = self.pipeline.ingest(message.to_turn())
        except VersionConflict as exc:
            if exc.details.get("reason") != ERASED:
                raise
            return self._drop(message, now, queue_message_id, stage="write")
        after = self.pipeline.ledger.erase_barrier(scope)
        if after is not None and after != barrier:  # erased while this turn was being written
            return self._drop(message, now, queue_message_id, stage="in_flight")
        self._record_scene(message, outcome)
        return outcome

    def _record_scene(self, message: TurnMessage, outcome: TurnOutcome) -> None:
        """Add the processed turn to its session's scene log (the memories it wrote or
        restated; a quarantined turn, one whose orders were quarantined apart from the rest of its
        words, or one whose reply read as an injection, is withheld from
        the session window, and so are the session's earlier turns when it completed an attack
        split over turns); a turn opening a
        new session summarises the user's previous one
        (:class:`~agentmem.services.summaries.SummaryService`). Best effort: the turn's memories
        are stored already, so a summary store that fails is logged, not retried."""
        if self.summaries is None or outcome.status not in (TurnStatus.ACCEPTED, TurnStatus.QUARANTINED):
            return
        scope, session = message.scope, message.session_id
        memory_ids: list[str] = []
        withheld: list[str] = []
        if outcome.status is TurnStatus.ACCEPTED:
            memory_ids = [*outcome.written, *outcome.reinforced]
            if ASSISTANT_INJECTION in outcome.dropped:  # the window quotes both sides or neither
                withheld = [message.message_id]
            if outcome.quarantined:  # an order in sentences of its own: the window never quotes it
                withheld = [message.message_id, *outcome.split_parts]
        else:  # and the earlier turns of an attack it completed, as the write path found them
            withheld = [message.message_id, *outcome.split_parts]
        try:
            self.summaries.record_turn(scope, session, message.message_id, message.at, memory_ids, withheld)
        except AgentMemError as exc:
            log.warning("ingest.scene_not_recorded", extra={"error": type(exc).__name__})

    def _drop(self, message: TurnMessage, now: datetime, queue_message_id: str, *, stage: str) -> TurnOutcome:
        """Remove whatever this turn left (records citing it, its L0 line and processed mark),
        audit the drop in the user's scope, and report it as rejected (never retried)."""
        scope = message.scope
        self.pipeline.neighbour_cache.forget(scope)
        removed = self._remove_records_of(scope, message.message_id)
        self.turn_log.forget_turn(scope, message.message_id)
        self.audit.append(
            AuditEvent(
                scope=scope,
                action=AuditAction.REJECTED,
                at=now,
                reason=ERASED,
                details={
                    "message_id": message.message_id,
                    "queue_message_id": queue_message_id,
                    "stage": stage,
                    "records_removed": removed,
                },
            )
        )
        log.info("ingest.erased", extra={"stage": stage, "queue_message_id": queue_message_id})
        return TurnOutcome(message_id=message.message_id, status=TurnStatus.REJECTED, reasons=[ERASED])

    def _remove_records_of(self, scope: Scope, message_id: str) -> int:
        """Hard-delete the scope's records that came from this turn (after an erase the scope
        holds only what was written since, so the walk is short)."""
        doomed: list[str] = []
        cursor: str | None = None
        while True:
            page = self.store.list(scope, statuses=tuple(Status), limit=_PAGE, cursor=cursor)
            doomed += [r.memory_id for r in page.items if message_id in r.source_refs.message_ids]
            cursor = page.next_cursor
            if cursor is None:
                break
        return sum(1 for memory_id in doomed if self.store.hard_delete(scope, memory_id))


def _reason(exc: ValidationFailed) -> str:
    fields = exc.details.get("fields")
    if isinstance(fields, list):
        return "invalid_fields:" + ",".join(str(f) for f in fields)[:200]
    return "malformed_json"
