"""``POST /v1/mcp``: MCP over HTTP (JSON-RPC 2.0, single or batch); the framing and the tools
live in :class:`agentmem.services.mcp.McpService`."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Response, Router

from agentmem.api.auth import Principal
from agentmem.api.errors import error_response
from agentmem.api.openapi import responses
from agentmem.api.params import Header
from agentmem.api.request import IDEMPOTENCY_DOC, IDEMPOTENCY_HEADER, RequestContext
from agentmem.wire.models import ErrorOut

router = Router()
req = RequestContext(router)


@router.post(
    "/v1/mcp",
    summary="MCP endpoint: JSON-RPC 2.0 tools memory_write/read/search/delete",
    responses={
        **responses(200, None, "JSON-RPC response (or batch of responses)", 403, 413, 415, 422),
        202: {"description": "Only notifications were sent: no response body"},
        400: {
            "description": "Not JSON, or an empty or oversized batch (a JSON-RPC error object), or"
            " refused by the request gates (ErrorOut)"
        },
    },
)
def mcp(
    idempotency_key: Annotated[
        str | None, Header(alias=IDEMPOTENCY_HEADER, max_length=255, description=IDEMPOTENCY_DOC)
    ] = None,
) -> Response[Any]:
    p = req.principal()
    if idempotency_key is not None and p.can("memory:write"):  # the whole answer, kept once it is 2xx
        return req.idempotent(p.scope, lambda request_id, now: _answer(p, request_id, now))
    status, body = _answer(p, req.request_id(), req.now())
    if not body:
        return Response(status_code=status, body="")  # notifications only: no body, so no content type
    return Response(status_code=status, content_type="application/json", body=body)


def _answer(p: Principal, request_id: str, now: datetime) -> tuple[int, str]:
    reply = req.container().mcp.handle_body(
        p.scope,
        req.body(),
        now=now,
        request_id=request_id,
        actor=p.principal_id,
        can_write=p.can("memory:write"),
    )
    if reply.payload is None:
        return 202, ""
    return 400 if reply.malformed else 200, json.dumps(reply.payload, ensure_ascii=False, default=str)


@router.get(
    "/v1/mcp",
    summary="No server-sent event stream: 405 (MCP Streamable HTTP clients then use POST only)",
    responses={
        **responses(405, ErrorOut, "This endpoint answers each POST with JSON; it opens no SSE stream"),
    },
)
def mcp_stream() -> Response[Any]:
    req.principal()  # the same auth as the POST: an unauthenticated probe learns nothing
    refusal = error_response(405, "method_not_allowed", "POST JSON-RPC requests; no SSE stream is offered")
    refusal.headers["Allow"] = "POST"
    return refusal
