"""The HTTP API as a Powertools ``APIGatewayRestResolver``: the same routes API Gateway serves
and the local server drives (it turns each request into an API Gateway proxy event).

Who is calling comes only from ``requestContext.authorizer`` (the API Gateway authorizer in AWS;
in local mode the local server fills it after its own loopback/token check). A request without a
tenant and user is refused; a body or path naming another tenant or user is refused.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Annotated, Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.shared.json_encoder import Encoder

from agentmem.api.schemas import (
    ContextIn,
    ErrorOut,
    MemoryIn,
    MemoryOut,
    MemoryPatchIn,
    RecallIn,
    SessionStateIn,
    TurnIn,
    TurnsAccepted,
    TurnsIn,
)
from agentmem.bootstrap import Container
from agentmem.domain.context import Mode
from agentmem.domain.models import Layer, Scope, Source, Status
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import (
    AgentMemError,
    ConfigurationError,
    EmbedderUnavailable,
    Forbidden,
    NotFound,
    QueueFull,
    StoreUnavailable,
    Unauthorized,
    ValidationFailed,
    VersionConflict,
)
from agentmem.messages import MAX_BODY_BYTES, TurnMessage
from agentmem.services.admin import MemoryPatch

log = logging.getLogger(__name__)

STATUS_BY_ERROR: dict[type[AgentMemError], int] = {
    ValidationFailed: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    VersionConflict: 409,
    QueueFull: 429,
    StoreUnavailable: 503,
    EmbedderUnavailable: 503,
    ConfigurationError: 500,
}

# Shares Powertools' metric set with the api λ's Metrics (same namespace), flushed per invocation.
metrics = Metrics(namespace="agentmem", service="api")


def _count_degraded(degraded: list[str]) -> None:
    for component in degraded:
        metrics.add_metric(name=f"Degraded_{component}", unit=MetricUnit.Count, value=1)


app = APIGatewayRestResolver(
    enable_validation=True,
    serializer=partial(json.dumps, separators=(",", ":"), cls=Encoder, ensure_ascii=False),
)


def _c() -> Container:
    """The container of the invocation in progress (set by :func:`resolve`)."""
    container: Container = app.context["container"]
    return container


DEFAULT_PERMISSIONS = frozenset({"memory:read", "memory:write"})


@dataclass(frozen=True, slots=True)
class Principal:
    scope: Scope
    permissions: frozenset[str]
    principal_id: str

    def require(self, permission: str) -> None:
        if permission not in self.permissions and "admin" not in self.permissions:
            raise Forbidden(f"this call needs the {permission!r} permission")


def principal(permission: str = "memory:read") -> Principal:
    """The caller, from the authorizer context only, holding ``permission``. An authorizer that
    states no permissions grants read and write (not ``memory:permanent``)."""
    p = _principal()
    p.require(permission)
    return p


def _principal() -> Principal:
    ctx = app.current_event.request_context
    authorizer: dict[str, Any] = dict(ctx.authorizer.raw_event) if ctx.authorizer else {}
    claims = authorizer.get("claims") if isinstance(authorizer.get("claims"), dict) else {}
    tenant = authorizer.get("tenant_id") or (claims or {}).get("custom:tenant_id")
    user = authorizer.get("user_id") or (claims or {}).get("sub")
    if not tenant or not user:
        raise Unauthorized("no tenant and user in the request's authorizer context")
    try:
        scope = Scope(str(tenant), str(user))
    except ValueError as exc:
        raise Unauthorized(f"invalid principal: {exc}") from exc
    raw_permissions = authorizer.get("permissions")
    if raw_permissions is None:
        permissions = DEFAULT_PERMISSIONS
    else:
        permissions = frozenset(p.strip() for p in str(raw_permissions).split(",") if p.strip())
    return Principal(scope, permissions, str(authorizer.get("principal_id") or user))


def _now(at: datetime | None = None) -> datetime:
    return at or _c().clock.now()


def _same_scope(p: Principal, tenant_id: str | None, user_id: str | None) -> None:
    if tenant_id is not None and tenant_id != p.scope.tenant_id:
        raise Forbidden("the body names another tenant than the caller's")
    if user_id is not None and user_id != p.scope.user_id:
        raise Forbidden("the body names another user than the caller's")


def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(payload, ensure_ascii=False, default=str),
        headers=headers or {},
    )


# ---------------------------------------------------------------------------- errors
@app.exception_handler(AgentMemError)
def _agentmem_error(exc: AgentMemError) -> Response[Any]:
    status = next((code for cls, code in STATUS_BY_ERROR.items() if isinstance(exc, cls)), 500)
    headers = {"Retry-After": "1"} if status in (429, 503) else None
    if status >= 500:
        log.warning("api.error", extra={"error": type(exc).__name__})
    return _json(
        status,
        ErrorOut(error=exc.code, message=exc.message, details=exc.details or None).model_dump(),
        headers,
    )


@app.exception_handler(RequestValidationError)
def _invalid_request(exc: RequestValidationError) -> Response[Any]:
    details = [
        {"loc": [str(part) for part in err.get("loc", ())], "msg": err.get("msg"), "type": err.get("type")}
        for err in exc.errors()
    ]
    malformed = any(d["type"] in ("json_invalid", "model_attributes_type", "dict_type") for d in details)
    body = ErrorOut(
        error="invalid_request", message="the request body or parameters are invalid", details=details
    )
    return _json(400 if malformed else 422, body.model_dump())


@app.not_found
def _not_found(exc: NotFoundError) -> Response[Any]:
    return _json(404, ErrorOut(error="not_found", message="no such route").model_dump())


@app.exception_handler(RequestUnsupportedContentType)
def _unsupported_type(exc: RequestUnsupportedContentType) -> Response[Any]:
    return _json(
        415,
        ErrorOut(error="unsupported_media_type", message="send the body as application/json").model_dump(),
    )


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response[Any]:
    # The one boundary where a failure must not reach the caller as a stack trace.
    log.exception("api.unexpected_error", extra={"error": type(exc).__name__})
    return _json(
        500, ErrorOut(error="internal_error", message="unexpected error; it has been logged").model_dump()
    )


# ---------------------------------------------------------------------------- turns
@app.post("/v1/turns", summary="Enqueue one or many finished turns for ingestion")
def post_turns(body: Annotated[TurnsIn | TurnIn, Body()]) -> Response[Any]:
    p = principal("memory:write")
    turns_in = body.turns if isinstance(body, TurnsIn) else [body]
    turns: list[TurnMessage] = []
    for t in turns_in:
        _same_scope(p, t.tenant_id, t.user_id)
        turns.append(
            TurnMessage(
                tenant_id=p.scope.tenant_id,
                user_id=p.scope.user_id,
                session_id=t.session_id,
                user=t.user,
                assistant=t.assistant,
                at=t.at or _now(),
                message_id=t.message_id or f"msg-{uuid.uuid4().hex}",
                trace_id=t.trace_id or app.current_event.request_context.request_id,
                speaker=t.speaker,
            )
        )
    ids = _c().queue.send(turns)
    return _json(202, TurnsAccepted(accepted=len(ids), message_ids=ids).model_dump())


# ---------------------------------------------------------------------------- read path
@app.post("/v1/context", summary="Assemble the memory context (system-prompt prefix) for a query")
def post_context(body: Annotated[ContextIn, Body()]) -> dict[str, Any]:
    p = principal()
    result = _c().context.build(
        p.scope, body.query, mode=Mode(body.mode), now=_now(body.at), session_id=body.session_id
    )
    ctx = result.context
    _count_degraded(result.degraded)
    return {
        "context": ctx.text,
        "mode": ctx.mode.value,
        "memories": [MemoryOut.of(s.record, s).model_dump(mode="json") for s in result.memories],
        "slots": {
            slot.name.value: {
                "items": [i.text for i in slot.items],
                "chars": slot.chars,
                "dropped": slot.dropped,
            }
            for slot in ctx.slots
        },
        "degraded": result.degraded,
        "missing_required_slots": [name.value for name in ctx.missing_required],
    }


@app.post("/v1/recall", summary="Recall the k best memories for a query")
def post_recall(body: Annotated[RecallIn, Body()]) -> dict[str, Any]:
    p = principal()
    result = _c().recall.recall(p.scope, body.query, k=body.k, now=_now(body.at), categories=body.categories)
    _count_degraded(result.degraded)
    return {
        "memories": [MemoryOut.of(s.record, s).model_dump(mode="json") for s in result.memories],
        "degraded": result.degraded,
    }


# ---------------------------------------------------------------------------- memories
@app.get("/v1/memories", summary="List the caller's memories, newest first")
def list_memories(
    status: Annotated[Status, Query()] = Status.ACTIVE,
    category: Annotated[str | None, Query(max_length=32)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> dict[str, Any]:
    p = principal()
    page = _c().admin.list(p.scope, statuses=(status,), category=category, limit=limit, cursor=cursor)
    return {
        "memories": [MemoryOut.of(r).model_dump(mode="json") for r in page.items],
        "next_cursor": page.next_cursor,
    }


@app.post("/v1/memories", summary="Write one memory explicitly (guards apply)")
def create_memory(body: Annotated[MemoryIn, Body()]) -> Response[Any]:
    p = principal("memory:write")
    if body.permanent:
        p.require("memory:permanent")
    record, outcome = _c().pipeline.write_explicit(
        p.scope,
        body.content,
        now=_now(),
        category=body.category,
        importance=body.importance,
        pinned=body.pinned,
        permanent=body.permanent,
        source=Source.EXPLICIT,
        tags=body.tags,
        request_id=app.current_event.request_context.request_id or uuid.uuid4().hex,
    )
    if record is None:
        raise ValidationFailed("memory rejected", details={"reasons": outcome.reasons})
    return _json(
        201, {"memory": MemoryOut.of(record).model_dump(mode="json"), "redacted": outcome.redacted_kinds}
    )


@app.get("/v1/memories/<memory_id>", summary="Get one memory")
def get_memory(memory_id: str) -> dict[str, Any]:
    p = principal()
    return MemoryOut.of(_c().admin.get(p.scope, memory_id)).model_dump(mode="json")


@app.patch("/v1/memories/<memory_id>", summary="Correct, re-categorise, re-weight or pin a memory")
def patch_memory(memory_id: str, body: Annotated[MemoryPatchIn, Body()]) -> dict[str, Any]:
    p = principal("memory:write")
    patch = MemoryPatch(
        content=body.content,
        category=body.category,
        importance=body.importance,
        pinned=body.pinned,
        tags=tuple(body.tags) if body.tags is not None else None,
        expected_version=body.expected_version,
    )
    updated = _c().admin.patch(p.scope, memory_id, patch, now=_now(), actor=p.principal_id)
    return MemoryOut.of(updated).model_dump(mode="json")


@app.delete("/v1/memories/<memory_id>", summary="Delete a memory (soft by default; hard=true erases)")
def delete_memory(memory_id: str, hard: Annotated[bool, Query()] = False) -> dict[str, Any]:
    p = principal("memory:write")
    deleted = _c().admin.delete(p.scope, memory_id, now=_now(), actor=p.principal_id, hard=hard)
    return {"deleted": deleted}


@app.post("/v1/memories/<memory_id>/permanent", summary="Promote a memory to the permanent layer")
def promote_memory(memory_id: str) -> dict[str, Any]:
    p = principal("memory:write")
    p.require("memory:permanent")
    updated = _c().admin.set_layer(p.scope, memory_id, Layer.PERMANENT, now=_now(), actor=p.principal_id)
    return MemoryOut.of(updated).model_dump(mode="json")


@app.delete("/v1/users/<user_id>", summary="Erase everything stored about the user (GDPR)")
def erase_user(user_id: str) -> dict[str, Any]:
    p = principal("memory:write")
    _same_scope(p, None, user_id)
    report = _c().admin.erase_user(p.scope, now=_now(), actor=p.principal_id)
    return {
        "memories": report.memories,
        "turns": report.turns,
        "runtime_states": report.runtime_states,
        "index_documents": report.index_documents,
        "graph_vertices": report.graph_vertices,
        "degraded": list(report.degraded),
    }


# ---------------------------------------------------------------------------- runtime state
@app.put("/v1/sessions/<session_id>/state", summary="Replace the task state slot of a session")
def put_state(session_id: str, body: Annotated[SessionStateIn, Body()]) -> dict[str, Any]:
    p = principal("memory:write")
    state = RuntimeState.from_dict(body.model_dump(exclude={"ttl_hours"}, exclude_none=True))
    now = _now()
    _c().runtime_state.put(p.scope, session_id, state, now + timedelta(hours=body.ttl_hours))
    return {"session_id": session_id, "state": state.to_dict()}


@app.get("/v1/sessions/<session_id>/state", summary="Read the task state slot of a session")
def get_state(session_id: str) -> dict[str, Any]:
    p = principal()
    state = _c().runtime_state.get(p.scope, session_id)
    if state is None:
        raise NotFound(f"no state for session {session_id}")
    return {"session_id": session_id, "state": state.to_dict()}


# ---------------------------------------------------------------------------- MCP
@app.post("/v1/mcp", summary="MCP endpoint: JSON-RPC 2.0 tools memory_write/read/search/delete")
def mcp() -> Response[Any]:
    p = principal()
    raw = app.current_event.body or ""
    try:
        message = json.loads(raw)
    except json.JSONDecodeError:
        return _json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
    c = _c()
    request_id = app.current_event.request_context.request_id or uuid.uuid4().hex
    batch = message if isinstance(message, list) else [message]
    if not batch or len(batch) > 20:
        return _json(
            400,
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "batch must hold 1-20 requests"},
            },
        )
    replies = [
        reply
        for index, item in enumerate(batch)
        if (
            reply := c.mcp.handle(
                p.scope,
                item,
                now=_now(),
                request_id=f"{request_id}:{index}",
                actor=p.principal_id,
                can_write="memory:write" in p.permissions or "admin" in p.permissions,
            )
        )
        is not None
    ]
    if not replies:
        return Response(status_code=202, content_type="application/json", body="")
    return _json(200, replies if isinstance(message, list) else replies[0])


# ---------------------------------------------------------------------------- audit, health, docs
@app.get("/v1/audit", summary="The caller's audit trail, newest first")
def get_audit(
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    action: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    p = principal()
    events = _c().audit.list(p.scope, limit=limit, action=action)
    return {
        "events": [
            {
                "id": e.event_id,
                "action": e.action,
                "at": e.at.isoformat(),
                "memory_id": e.memory_id,
                "reason": e.reason,
                "details": e.details,
            }
            for e in events
        ]
    }


@app.get("/v1/health", summary="Liveness and the configured backend")
def health() -> dict[str, Any]:
    c = _c()
    return {"status": "ok", "backend": c.settings.backend, "embedder": c.embedder.model_id}


@app.get("/v1/openapi.json", summary="This API's OpenAPI document")
def openapi() -> Response[Any]:
    return Response(status_code=200, content_type="application/json", body=openapi_json())


def openapi_json() -> str:
    return app.get_openapi_json_schema(title="agentmem", version="0.1.0", description=__doc__)


def resolve(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    """Entry point for the Lambda handler and the local server: one request against ``container``."""
    body = event.get("body") or ""
    size = len(body.encode("utf-8")) if isinstance(body, str) else len(body)
    if size > MAX_BODY_BYTES:
        payload = ErrorOut(error="payload_too_large", message=f"body exceeds {MAX_BODY_BYTES} bytes")
        return {
            "statusCode": 413,
            "headers": {"Content-Type": "application/json"},
            "body": payload.model_dump_json(),
            "isBase64Encoded": False,
        }
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if body and content_type and content_type != "application/json" and not content_type.endswith("+json"):
        payload = ErrorOut(error="unsupported_media_type", message="send the body as application/json")
        return {
            "statusCode": 415,
            "headers": {"Content-Type": "application/json"},
            "body": payload.model_dump_json(),
            "isBase64Encoded": False,
        }
    app.context["container"] = container  # routing context: cleared by the resolver when it ends
    return app.resolve(event, context)
