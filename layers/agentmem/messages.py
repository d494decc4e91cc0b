"""Wire formats that cross a process boundary, one model each, validated where they enter.

:class:`TurnMessage` is the SQS body of one finished turn: the API builds it (``POST /v1/turns``),
both queue adapters write it (SQS and the embedded queue), a chat service may send it to SQS
itself, and the ingest λ reads it. Its field types are shared with the API's request model
(:class:`agentmem.wire.models.TurnIn`), so the two cannot drift. The fields and the body
encoder are the wire contract's (:mod:`agentmem.wire.messages`), shared with the light client.

:data:`MAX_BODY_BYTES` is the one size limit for an API request body and a queue message body.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from agentmem.domain.models import Scope, Turn
from agentmem.errors import ValidationFailed
from agentmem.wire import messages as wire

# Re-exported (x as x): the API and the adapters import them from here.
from agentmem.wire.messages import ID_PATTERN as ID_PATTERN
from agentmem.wire.messages import MAX_BODY_BYTES as MAX_BODY_BYTES
from agentmem.wire.messages import MAX_TEXT as MAX_TEXT
from agentmem.wire.messages import AssistantText as AssistantText
from agentmem.wire.messages import Identifier as Identifier
from agentmem.wire.messages import Speaker as Speaker
from agentmem.wire.messages import TraceId as TraceId
from agentmem.wire.messages import TurnTime as TurnTime
from agentmem.wire.messages import UserText as UserText


class TurnMessage(wire.TurnMessage):
    """The wire's turn message (:class:`agentmem.wire.messages.TurnMessage`: fields and the one
    body encoder, :meth:`to_body`) with the server's side: the domain conversions and a parse
    that raises the API's errors."""

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
