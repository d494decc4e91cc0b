"""``POST /v1/turns``: enqueue finished turns for asynchronous ingestion; ``GET
/v1/turns/{message_id}``: what happened to one of them."""

from __future__ import annotations

import uuid
from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body
from agentmem.api.request import RequestContext
from agentmem.errors import NotFound
from agentmem.messages import TurnMessage
from agentmem.wire.models import TurnIn, TurnsAccepted, TurnsIn
from agentmem.wire.operator import TurnStatusOut

router = Router()
req = RequestContext(router)


@router.post(
    "/v1/turns",
    summary="Enqueue one or many finished turns for ingestion",
    status_code=202,
    responses=responses(202, TurnsAccepted, "Accepted for ingestion", 400, 403, 413, 415, 422, 429, 503),
)
def post_turns(body: Annotated[TurnsIn | TurnIn, Body()]) -> TurnsAccepted:
    p = req.principal("memory:write")
    turns_in = body.turns if isinstance(body, TurnsIn) else [body]
    messages = []
    for t in turns_in:
        p.same_scope(t.tenant_id, t.user_id)
        messages.append(
            TurnMessage(
                tenant_id=p.scope.tenant_id,
                user_id=p.scope.user_id,
                session_id=t.session_id,
                user=t.user,
                assistant=t.assistant,
                at=t.at or req.now(),
                message_id=t.message_id or f"msg-{uuid.uuid4().hex}",
                trace_id=t.trace_id or req.event().request_context.request_id,
                speaker=t.speaker,
            )
        )
    ids = req.container().turns.enqueue(messages)
    return TurnsAccepted(accepted=len(ids), message_ids=ids)


@router.get(
    "/v1/turns/<message_id>",
    summary="What happened to a turn: queued, processed, rejected, quarantined or dead-lettered",
    responses=responses(200, TurnStatusOut, "The turn's status", 403, 404, 503),
)
def get_turn(message_id: str) -> TurnStatusOut:
    p = req.principal()
    report = req.container().turn_status.status(p.scope, message_id)
    if report is None:
        raise NotFound("no turn with this message id", details={"message_id": message_id[:200]})
    return convert.turn_status(report)
