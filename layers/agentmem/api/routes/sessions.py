"""Session (task) state: the slot the tool/react context modes read."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body
from agentmem.api.request import RequestContext
from agentmem.wire.models import SessionStateIn, SessionStateOut

router = Router()
req = RequestContext(router)


@router.put(
    "/v1/sessions/<session_id>/state",
    summary="Replace the task state slot of a session",
    responses=responses(200, SessionStateOut, "The state as stored", 404),
)
def put_state(session_id: str, body: Annotated[SessionStateIn, Body()]) -> SessionStateOut:
    p = req.principal("memory:write")
    stored = req.container().sessions.put(
        p.scope, session_id, convert.session_state(body), ttl_hours=body.ttl_hours, now=req.now()
    )
    return SessionStateOut(session_id=session_id, state=stored.to_dict())


@router.get(
    "/v1/sessions/<session_id>/state",
    summary="Read the task state slot of a session",
    responses=responses(200, SessionStateOut, "The stored state", 403, 404, 503),
)
def get_state(session_id: str) -> SessionStateOut:
    p = req.principal()
    state = req.container().sessions.get(p.scope, session_id)
    return SessionStateOut(session_id=session_id, state=state.to_dict())
