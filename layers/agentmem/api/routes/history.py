"""A memory's history: ``GET /v1/memories/{id}/history`` (the supersede chain, oldest first)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.request import RequestContext
from agentmem.wire.history import HistoryOut

router = Router()
req = RequestContext(router)


@router.get(
    "/v1/memories/<memory_id>/history",
    summary="The supersede chain of a memory with its validity times, oldest first",
    responses=responses(200, HistoryOut, "The chain through this memory", 403, 404, 503),
)
def get_history(memory_id: str) -> HistoryOut:
    p = req.principal()
    chain = req.container().history.chain(p.scope, memory_id)
    return HistoryOut(memory_id=memory_id, entries=[convert.history_entry(r) for r in chain])
