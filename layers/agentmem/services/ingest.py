"""Ingest one queue message: validate it as a :class:`~agentmem.messages.TurnMessage`, then run
the write pipeline.

Malformed messages are rejected with a reason in the audit log and are *not* retried (retrying
cannot fix them); transient failures raise so the queue redelivers and finally dead-letters.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.errors import ValidationFailed
from agentmem.messages import TurnMessage, scope_of_body
from agentmem.ports import AuditLog
from agentmem.services.outcome import TurnOutcome, TurnStatus
from agentmem.services.write_pipeline import WritePipeline

log = logging.getLogger(__name__)

REJECTED_SCOPE = Scope("_rejected", "_rejected")  # audit bucket for messages with no valid scope


@dataclass
class IngestService:
    pipeline: WritePipeline
    audit: AuditLog

    def handle(self, body: str, *, now: datetime, queue_message_id: str = "") -> TurnOutcome:
        """Process one message body. Returns the outcome; raises only on transient failures."""
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
        return self.pipeline.ingest(message.to_turn())


def _reason(exc: ValidationFailed) -> str:
    fields = exc.details.get("fields")
    if isinstance(fields, list):
        return "invalid_fields:" + ",".join(str(f) for f in fields)[:200]
    return "malformed_json"
