"""Ingest one queue message: validate, then run the write pipeline.

Malformed messages are rejected with a reason in the audit log and are *not* retried (retrying
cannot fix them); transient failures raise so the queue redelivers and finally dead-letters.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentmem.domain.models import AuditEvent, Scope, Turn, checked_time
from agentmem.ports import AuditLog
from agentmem.services.write_pipeline import TurnOutcome, WritePipeline

log = logging.getLogger(__name__)

ID = r"^[A-Za-z0-9][A-Za-z0-9_.:@\-]{0,127}$"
REJECTED_SCOPE = Scope("_rejected", "_rejected")  # audit bucket for messages with no valid scope


class TurnMessage(BaseModel):
    """The SQS message body: one finished turn, with the scope it belongs to."""

    model_config = ConfigDict(extra="ignore")

    tenant_id: str = Field(pattern=ID)
    user_id: str = Field(pattern=ID)
    session_id: str = Field(pattern=ID)
    user: str = Field(min_length=1, max_length=16_000)
    assistant: str = Field("", max_length=16_000)
    at: datetime
    message_id: str = Field(pattern=ID)
    trace_id: str | None = Field(None, max_length=128)
    speaker: str | None = Field(None, max_length=64)

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        checked = checked_time(value)
        assert checked is not None
        return checked

    def to_turn(self) -> Turn:
        return Turn(
            scope=Scope(self.tenant_id, self.user_id),
            session_id=self.session_id,
            user=self.user,
            assistant=self.assistant,
            at=self.at,
            message_id=self.message_id,
            trace_id=self.trace_id,
            speaker=self.speaker,
        )


@dataclass
class IngestService:
    pipeline: WritePipeline
    audit: AuditLog

    def handle(self, body: str, *, now: datetime, queue_message_id: str = "") -> TurnOutcome:
        """Process one message body. Returns the outcome; raises only on transient failures."""
        try:
            message = TurnMessage.model_validate(json.loads(body))
        except (ValueError, ValidationError) as exc:
            reason = _reason(exc)
            scope = _scope_of(body)
            self.audit.append(
                AuditEvent(
                    scope=scope,
                    action="rejected",
                    at=now,
                    reason=reason,
                    details={"queue_message_id": queue_message_id},
                )
            )
            log.warning("ingest.rejected", extra={"reason": reason, "queue_message_id": queue_message_id})
            return TurnOutcome(message_id=queue_message_id, status="rejected", reasons=[reason])
        return self.pipeline.ingest(message.to_turn())


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        fields = sorted({".".join(str(p) for p in e["loc"]) or "body" for e in exc.errors()})
        return "invalid_fields:" + ",".join(fields)[:200]
    return "malformed_json"


def _scope_of(body: str) -> Scope:
    try:
        data = json.loads(body)
        return Scope(str(data["tenant_id"]), str(data["user_id"]))
    except (ValueError, KeyError, TypeError):
        return REJECTED_SCOPE
