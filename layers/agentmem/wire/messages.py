"""The ingest queue's message body, :class:`TurnMessage`: one finished turn with the scope it
belongs to, and the field types it shares with the API's ``TurnIn``.

:meth:`TurnMessage.to_body` is the one encoder of a queue body: the API's queue adapters and
the client's ``TurnSender`` both send what it returns. The server's
:class:`agentmem.messages.TurnMessage` adds the domain conversions and the parse that raises
the API's errors. :data:`MAX_BODY_BYTES` is the one size limit for an API request body and a
queue message body."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .vocabulary import checked_time

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

    def to_body(self) -> str:
        """The queue body: compact JSON, UTF-8 text as is, optional fields only when set."""
        return self.model_dump_json(exclude_none=True)
