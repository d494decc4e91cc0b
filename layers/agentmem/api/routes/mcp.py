"""``POST /v1/mcp``: MCP over HTTP (JSON-RPC 2.0, single or batch); the framing and the tools
live in :class:`agentmem.services.mcp.McpService`."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Response, Router

from agentmem.api.errors import error_response
from agentmem.api.request import RequestContext
from agentmem.api.schemas import ErrorOut, responses

router = Router()
req = RequestContext(router)


@router.post(
    "/v1/mcp",
    summary="MCP endpoint: JSON-RPC 2.0 tools memory_write/read/search/delete",
    responses={
        **responses(200, None, "JSON-RPC response (or batch of responses)", 403, 413, 415),
        202: {"description": "Only notifications were sent: no response body"},
        400: {
            "description": "Not JSON, or an empty or oversized batch (a JSON-RPC error object), or"
            " refused by the request gates (ErrorOut)"
        },
    },
)
def mcp() -> Response[Any]:
    p = req.principal()
    reply = req.container().mcp.handle_body(
        p.scope,
        req.body(),
        now=req.now(),
        request_id=req.request_id(),
        actor=p.principal_id,
        can_write=p.can("memory:write"),
    )
    if reply.payload is None:
        return Response(status_code=202, body="")  # no body, so no content type
    return Response(
        status_code=400 if reply.malformed else 200,
        content_type="application/json",
        body=json.dumps(reply.payload, ensure_ascii=False, default=str),
    )


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
