"""Operator routes, scoped to the caller: dead letters (list, redrive) and export / import of
memories (``docs/operations.md``). The logic is in :mod:`agentmem.services.operator` and
:mod:`agentmem.services.transfer`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Response, Router

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body, Header, Query
from agentmem.api.request import IDEMPOTENCY_DOC, IDEMPOTENCY_HEADER, RequestContext
from agentmem.domain.authority import POLICY_PERMISSION
from agentmem.domain.models import Status
from agentmem.wire.operator import (
    DeadLettersOut,
    ImportIn,
    ImportOut,
    ImportRejectedOut,
    RedriveOut,
)

router = Router()
req = RequestContext(router)

NDJSON = "application/x-ndjson"
NEXT_CURSOR_HEADER = "X-Next-Cursor"


@router.get(
    "/v1/dead-letters",
    summary="The caller's dead-lettered turns, oldest failure first (never their text)",
    responses=responses(200, DeadLettersOut, "One page of dead letters", 400, 403, 503),
)
def list_dead_letters(
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> DeadLettersOut:
    p = req.principal()
    page = req.container().dead_letters.page(p.scope, limit=limit, cursor=cursor)
    return DeadLettersOut(
        dead_letters=[convert.dead_letter(e) for e in page.items], next_cursor=page.next_cursor
    )


@router.post(
    "/v1/dead-letters/<message_id>/redrive",
    summary="Send a dead-lettered turn back to the ingest queue (audited)",
    responses=responses(200, RedriveOut, "Redriven", 403, 404, 503),
)
def redrive_dead_letter(message_id: str) -> RedriveOut:
    p = req.principal("memory:write")
    redriven = req.container().dead_letters.redrive_one(
        p.scope, message_id, now=req.now(), actor=p.principal_id
    )
    return RedriveOut(redriven=redriven)


_EXPORT_RESPONSES: dict[int, Any] = {
    **responses(200, None, "", 400, 403, 503),
    200: {
        "description": "One memory per line (MemoryOut JSON, content redacted at rest); the"
        f" {NEXT_CURSOR_HEADER} header carries the cursor of the next page when there is one",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    },
}


@router.get("/v1/export", summary="Export the caller's memories as NDJSON", responses=_EXPORT_RESPONSES)
def export_memories(
    status: Annotated[Status, Query()] = Status.ACTIVE,
    limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> Response[str]:
    p = req.principal()
    page = req.container().transfer.export_page(p.scope, status=status, limit=limit, cursor=cursor)
    body = "".join(convert.memory_out(r).model_dump_json() + "\n" for r in page.items)
    headers = {NEXT_CURSOR_HEADER: page.next_cursor} if page.next_cursor else None
    return Response(status_code=200, content_type=NDJSON, body=body, headers=headers)


@router.post(
    "/v1/import",
    summary="Import memories (at most 100) through the same guards as POST /v1/memories",
    responses=responses(200, ImportOut, "What was stored and what was refused", 400, 403, 413, 415, 422, 503),
)
def import_memories(
    body: Annotated[ImportIn, Body()],
    idempotency_key: Annotated[
        str | None, Header(alias=IDEMPOTENCY_HEADER, max_length=255, description=IDEMPOTENCY_DOC)
    ] = None,
) -> Response[str]:
    from agentmem.services.transfer import ImportItem  # the service's module: loaded with the container

    p = req.principal("memory:write")
    items = [ImportItem(m.content, m.category, m.importance, m.pinned, tuple(m.tags)) for m in body.memories]

    def run(request_id: str, now: datetime) -> tuple[int, str]:
        report = req.container().transfer.import_items(
            p.scope, items, now=now, request_id=request_id, may_write_policy=p.can(POLICY_PERMISSION)
        )
        out = ImportOut(
            imported=report.imported,
            rejected=[ImportRejectedOut(index=i, reasons=reasons) for i, reasons in report.rejected],
        )
        return 200, out.model_dump_json()

    return req.idempotent(p.scope, run)
