"""Memories: list, write explicitly, read, correct, delete, promote; and erase a user (GDPR)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Response, Router
from pydantic import Field

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body, Header, Query
from agentmem.api.request import IDEMPOTENCY_DOC, IDEMPOTENCY_HEADER, RequestContext
from agentmem.domain.authority import POLICY_PERMISSION
from agentmem.domain.models import Category, Layer, Source, Status
from agentmem.errors import ValidationFailed
from agentmem.wire.models import (
    DeletedOut,
    EraseReportOut,
    MemoryCreated,
    MemoryIn,
    MemoryOut,
    MemoryPage,
    MemoryPatchIn,
)

router = Router()
req = RequestContext(router)


@router.get(
    "/v1/memories",
    summary="List the caller's memories, newest first (filters: status, category, tags)",
    responses=responses(200, MemoryPage, "One page of memories", 400, 403, 422, 503),
)
def list_memories(
    status: Annotated[Status, Query()] = Status.ACTIVE,
    category: Annotated[Category | None, Query()] = None,
    tags: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=64)]] | None,
        Query(max_length=10, description="Repeat for several: only memories carrying every tag."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> MemoryPage:
    p = req.principal()
    page = req.container().admin.list(
        p.scope,
        statuses=(status,),
        category=category.value if category else None,
        tags=tags or (),
        limit=limit,
        cursor=cursor,
    )
    return MemoryPage(memories=[convert.memory_out(r) for r in page.items], next_cursor=page.next_cursor)


@router.post(
    "/v1/memories",
    summary="Write one memory explicitly (guards apply; category=policy needs memory:policy)",
    status_code=201,
    responses=responses(201, MemoryCreated, "Stored (PII redacted first)", 400, 403, 413, 415, 422, 503),
)
def create_memory(
    body: Annotated[MemoryIn, Body()],
    idempotency_key: Annotated[
        str | None, Header(alias=IDEMPOTENCY_HEADER, max_length=255, description=IDEMPOTENCY_DOC)
    ] = None,
) -> Response[str]:
    p = req.principal("memory:write")
    if body.permanent:
        p.require("memory:permanent")

    def write(request_id: str, now: datetime) -> tuple[int, str]:
        record, outcome = req.container().explicit.write(
            p.scope,
            body.content,
            now=now,
            category=body.category,
            importance=body.importance,
            pinned=body.pinned,
            permanent=body.permanent,
            source=Source.EXPLICIT,
            tags=body.tags,
            request_id=request_id,
            may_write_policy=p.can(POLICY_PERMISSION),
        )
        if record is None:
            raise ValidationFailed("memory rejected", details={"reasons": outcome.reasons})
        created = MemoryCreated(memory=convert.memory_out(record), redacted=outcome.redacted_kinds)
        return 201, created.model_dump_json()

    return req.idempotent(p.scope, write)


@router.get(
    "/v1/memories/<memory_id>",
    summary="Get one memory",
    responses=responses(200, MemoryOut, "The memory", 403, 404, 503),
)
def get_memory(memory_id: str) -> MemoryOut:
    p = req.principal()
    return convert.memory_out(req.container().admin.get(p.scope, memory_id))


@router.patch(
    "/v1/memories/<memory_id>",
    summary="Correct, re-categorise, re-weight or pin a memory (a policy memory needs memory:policy)",
    responses=responses(
        200, MemoryOut, "The memory after the change", 400, 403, 404, 409, 413, 415, 422, 503
    ),
)
def patch_memory(memory_id: str, body: Annotated[MemoryPatchIn, Body()]) -> MemoryOut:
    from agentmem.services.admin import MemoryPatch  # the service's module: loaded with the container

    p = req.principal("memory:write")
    patch = MemoryPatch(
        content=body.content,
        category=body.category,
        importance=body.importance,
        pinned=body.pinned,
        tags=tuple(body.tags) if body.tags is not None else None,
        expected_version=body.expected_version,
    )
    return convert.memory_out(
        req.container().admin.patch(
            p.scope,
            memory_id,
            patch,
            now=req.now(),
            actor=p.principal_id,
            may_write_policy=p.can(POLICY_PERMISSION),
        )
    )


@router.delete(
    "/v1/memories/<memory_id>",
    summary="Delete a memory (soft by default; hard=true erases)",
    responses=responses(200, DeletedOut, "How many records were affected", 403, 404, 422, 503),
)
def delete_memory(memory_id: str, hard: Annotated[bool, Query()] = False) -> DeletedOut:
    p = req.principal("memory:write")
    return DeletedOut(
        deleted=req.container().admin.delete(
            p.scope, memory_id, now=req.now(), actor=p.principal_id, hard=hard
        )
    )


@router.post(
    "/v1/memories/<memory_id>/permanent",
    summary="Promote a memory to the permanent layer",
    responses=responses(200, MemoryOut, "The memory, now permanent", 403, 404, 409, 503),
)
def promote_memory(memory_id: str) -> MemoryOut:
    p = req.principal("memory:write")
    p.require("memory:permanent")
    updated = req.container().admin.set_layer(
        p.scope, memory_id, Layer.PERMANENT, now=req.now(), actor=p.principal_id
    )
    return convert.memory_out(updated)


@router.delete(
    "/v1/users/<user_id>",
    summary="Erase everything stored about the user (GDPR)",
    responses=responses(200, EraseReportOut, "What was erased, store by store", 404),
)
def erase_user(user_id: str) -> EraseReportOut:
    p = req.principal("memory:write")
    p.same_scope(None, user_id)
    c = req.container()
    report = c.admin.erase_user(p.scope, now=req.now(), actor=p.principal_id, queue=c.queue)
    return EraseReportOut(
        memories=report.memories,
        turns=report.turns,
        runtime_states=report.runtime_states,
        index_documents=report.index_documents,
        graph_vertices=report.graph_vertices,
        degraded=list(report.degraded),
        queued_turns_dropped=report.queued_turns_dropped,
        erased_at=report.erased_at,
    )
