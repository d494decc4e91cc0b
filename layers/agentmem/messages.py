"""Wire formats that cross a process boundary, one model each, validated where they enter.

:class:`TurnMessage` is the SQS body of one finished turn: the API builds it (``POST /v1/turns``),
both queue adapters write it (SQS and the embedded queue), a chat service may send it to SQS
itself, and the ingest λ reads it. Its field types are shared with the API's request model
(:class:`agentmem.api.schemas.TurnIn`), so the two cannot drift.

:data:`MAX_BODY_BYTES` is the one size limit for an API request body and a queue message body.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from agentmem.domain.models import Scope, Turn, checked_time
from agentmem.errors import ValidationFailed

MAX_BODY_BYTES = 256 * 1024  # API request bodies and queue messages (SQS's classic limit)
MAX_TEXT = 16_000  # characters of one side of a turn
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@\-]{0,127}$"


def _aware(value: datetime) -> datetime:
    checked = checked_time(value)
    assert checked is not None  # checked_time only returns None for None
    return checked


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("user text must not be blank")
    return value


Identifier = Annotated[str, Field(pattern=ID_PATTERN)]
UserText = Annotated[
    str, Field(max_length=MAX_TEXT, description="What the user said."), AfterValidator(_not_blank)
]
AssistantText = Annotated[str, Field(max_length=MAX_TEXT, description="What the assistant answered.")]
TurnTime = Annotated[datetime, AfterValidator(_aware)]
TraceId = Annotated[str, Field(max_length=128, description="Correlation id (API Gateway request id).")]
Speaker = Annotated[str, Field(max_length=64, description="Name of the speaker in multi-party transcripts.")]


class TurnMessage(BaseModel):
    """One finished turn with the scope it belongs to: the ingest queue's message body."""

    # newer senders may add fields; validator built on first use, not at import (cold start)
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    tenant_id: Identifier
    user_id: Identifier
    session_id: Identifier
    user: UserText
    assistant: AssistantText = ""
    at: TurnTime
    message_id: Identifier
    trace_id: TraceId | None = None
    speaker: Speaker | None = None

    @classmethod
    def from_turn(cls, turn: Turn) -> TurnMessage:
        """The message of a domain turn (validated like any other message)."""
        return cls(
            tenant_id=turn.scope.tenant_id,
            user_id=turn.scope.user_id,
            session_id=turn.session_id,
            user=turn.user,
            assistant=turn.assistant,
            at=turn.at,
            message_id=turn.message_id,
            trace_id=turn.trace_id,
            speaker=turn.speaker,
        )

    @classmethod
    def from_body(cls, body: str | bytes) -> TurnMessage:
        """Parse a queue body. Raises :class:`~agentmem.errors.ValidationFailed` naming the bad
        fields (``details["fields"]``; ``body`` when it is JSON but not an object), or
        ``malformed_json`` when it is not JSON at all."""
        try:
            return cls.model_validate_json(body)
        except ValidationError as exc:
            fields = sorted({".".join(str(p) for p in e["loc"]) or "body" for e in exc.errors()})
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                raise ValidationFailed(
                    "malformed turn message", details={"reason": "malformed_json"}
                ) from exc
            raise ValidationFailed(
                "invalid turn message", details={"reason": "invalid_fields", "fields": fields}
            ) from exc

    def to_body(self) -> str:
        """The queue body: compact JSON, UTF-8 text as is, optional fields only when set."""
        return self.model_dump_json(exclude_none=True)

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id, self.user_id)

    def to_turn(self) -> Turn:
        return Turn(
            scope=self.scope,
            session_id=self.session_id,
            user=self.user,
            assistant=self.assistant,
            at=self.at,
            message_id=self.message_id,
            trace_id=self.trace_id,
            speaker=self.speaker,
        )


def scope_of_body(body: str) -> Scope | None:
    """The scope a body names, when it names a valid one (to audit a rejected message where its
    owner can read it); None otherwise."""
    try:
        data: Any = json.loads(body)
        return Scope(str(data["tenant_id"]), str(data["user_id"]))
    except (ValueError, KeyError, TypeError):
        return None
