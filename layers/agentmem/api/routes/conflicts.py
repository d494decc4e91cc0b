"""Pending conflicts (docs/design.md, "Confirmation before overwriting what is permanent"): list
them, and confirm or reject one."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body, Query
from agentmem.api.request import RequestContext
from agentmem.domain.pending import ConflictStatus, Decision
from agentmem.wire.conflicts import ConflictDecisionIn, ConflictOut, ConflictsOut

router = Router()
req = RequestContext(router)


@router.get(
    "/v1/conflicts",
    summary="Conflicts between a turn and a permanent or pinned memory, newest first",
    responses=responses(200, ConflictsOut, "One page of conflicts", 400, 403, 422, 503),
)
def list_conflicts(
    status: Annotated[ConflictStatus | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> ConflictsOut:
    p = req.principal()
    items, next_cursor = req.container().conflicts.list(p.scope, status=status, limit=limit, cursor=cursor)
    return ConflictsOut(conflicts=[convert.conflict_out(c) for c in items], next_cursor=next_cursor)


@router.post(
    "/v1/conflicts/<conflict_id>",
    summary="Confirm (the proposal replaces the memory) or reject (it is dropped) a pending conflict",
    responses=responses(200, ConflictOut, "The resolved conflict", 403, 404, 409, 413, 415, 422, 503),
)
def resolve_conflict(conflict_id: str, body: Annotated[ConflictDecisionIn, Body()]) -> ConflictOut:
    p = req.principal("memory:write")
    resolved = req.container().conflicts.resolve(p.scope, conflict_id, Decision(body.decision), now=req.now())
    return convert.conflict_out(resolved)
