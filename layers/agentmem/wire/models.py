"""Request and response models of the HTTP API: what every route takes and answers, with the
one error body (:class:`ErrorOut`). The routes state their responses with these models
(:func:`agentmem.api.openapi.responses`), so the OpenAPI document carries each real status code
and the one error schema. The SQS turn message is :class:`.messages.TurnMessage`.

Part of the leaf :mod:`agentmem.wire` (stdlib, pydantic and relative imports only); converters
from the services' results are :mod:`agentmem.api.convert`."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects instead of
# compiling and evaluating each as a string when the class is made (part of the api's cold start).

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .examples import EXAMPLES
from .messages import (
    ID_PATTERN,
    MAX_TEXT,
    AssistantText,
    Identifier,
    Speaker,
    TraceId,
    TurnTime,
    UserText,
)
from .session_state import MAX_ITEMS, MAX_LINE, Plan, ToolState
from .vocabulary import Category, checked_time


class ApiModel(BaseModel):
    """The base of the API's models: each builds its validator and serializer on first use, not
    at import (``defer_build``), so a cold start pays only for the models its request touches."""

    model_config = ConfigDict(defer_build=True)


class _Strict(ApiModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class TurnIn(_Strict):
    """One finished exchange; the API adds the caller's scope and sends it as a
    :class:`~agentmem.messages.TurnMessage` (the same field types)."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["TurnIn"]})

    session_id: Identifier = Field(description="Conversation/session id.")
    user: UserText
    assistant: AssistantText = ""
    at: TurnTime | None = Field(None, description="When the turn finished (ISO-8601); defaults to now.")
    message_id: Identifier | None = Field(None, description="Idempotency key; generated if absent.")
    trace_id: TraceId | None = None
    speaker: Speaker | None = None
    tenant_id: str | None = Field(None, description="Optional; must equal the caller's tenant.")
    user_id: str | None = Field(None, description="Optional; must equal the caller's user.")


class TurnsIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["TurnsIn"]})
    turns: list[TurnIn] = Field(min_length=1, max_length=100)


class TurnsAccepted(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["TurnsAccepted"]})
    accepted: int = Field(description="How many turns were enqueued.")
    message_ids: list[str] = Field(description="Their message ids (generated where absent), in order.")


class ContextIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ContextIn"]})
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    mode: Literal["chat", "tool", "react", "rag"] = "chat"
    session_id: str | None = Field(None, pattern=ID_PATTERN)
    at: datetime | None = Field(None, description="Evaluate as of this time (defaults to now).")
    as_of: datetime | None = Field(
        None, description="Time travel: the memories valid then (valid_from <= as_of < valid_to)."
    )

    _at = field_validator("at", "as_of")(classmethod(lambda cls, value: checked_time(value)))


class RecallIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["RecallIn"]})
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    k: int = Field(5, ge=1, le=100)
    categories: list[Category] | None = None
    at: datetime | None = None
    as_of: datetime | None = Field(
        None, description="Time travel: the memories valid then (valid_from <= as_of < valid_to)."
    )

    _at = field_validator("at", "as_of")(classmethod(lambda cls, value: checked_time(value)))


class MemoryIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["MemoryIn"]})
    content: str = Field(min_length=1, max_length=4000)
    category: Category | None = None
    importance: float | None = Field(None, ge=0, le=1)
    pinned: bool = False
    permanent: bool = Field(
        False, description="Persona/permanent layer; needs the memory:permanent permission."
    )
    tags: list[str] = Field(default_factory=list, max_length=20)


class MemoryPatchIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["MemoryPatchIn"]})
    content: str | None = Field(None, min_length=1, max_length=4000)
    category: Category | None = None
    importance: float | None = Field(None, ge=0, le=1)
    pinned: bool | None = None
    tags: list[str] | None = Field(None, max_length=20)
    expected_version: int | None = Field(None, ge=1, le=2**53)


class SessionStateIn(_Strict):
    """The whole state of a session (replaced on every PUT); the shapes are the domain's
    :mod:`agentmem.domain.runtime_state` models, so a wrong shape is a 422 here."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["SessionStateIn"]})

    plan: Plan | None = None
    task_memory: list[Annotated[str, Field(max_length=MAX_LINE)]] | None = Field(None, max_length=MAX_ITEMS)
    tool_state: ToolState | None = None
    ttl_hours: float = Field(
        24, gt=0, le=24 * 7, description="Hours until the state expires (at most a week)."
    )


class MemoryOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["MemoryOut"]})
    id: str
    content: str
    category: str
    layer: str
    key: str | None = None
    value: str | None = None
    tags: list[str] = []
    importance: float
    importance_source: str
    confidence: str
    source: str
    source_refs: dict[str, Any]
    version: int
    status: str
    pinned: bool
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    supersedes: list[str] = []
    superseded_by: str | None = None
    score: float | None = None
    score_components: dict[str, float] | None = None
    channels: list[str] | None = None


class ErrorOut(ApiModel):
    """Every error answer: a stable code, a human message, and details where they help."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ErrorOut"]})

    error: str = Field(description="Stable error code, e.g. invalid_request, not_found, queue_full.")
    message: str
    details: Any = None


class SlotOut(ApiModel):
    items: list[str]
    chars: int
    dropped: int = Field(description="Items left out by the slot's or the global budget.")


class ContextOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ContextOut"]})

    context: str = Field(description="The system-prompt prefix; empty when nothing is worth injecting.")
    mode: str
    memories: list[MemoryOut] = Field(description="The memories the context used, with scores.")
    slots: dict[str, SlotOut]
    degraded: list[str] = Field(description="Components that were down: search_index, graph, embedder.")
    missing_required_slots: list[str]


class RecallOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["RecallOut"]})
    memories: list[MemoryOut]
    degraded: list[str]


class MemoryPage(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["MemoryPage"]})
    memories: list[MemoryOut]
    next_cursor: str | None = Field(None, description="Pass as ?cursor= for the next page; null at the end.")


class MemoryCreated(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["MemoryCreated"]})
    memory: MemoryOut
    redacted: list[str] = Field(description="Kinds of PII replaced by placeholders before storing.")


class DeletedOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["DeletedOut"]})
    deleted: int = Field(description="How many records were affected (0 when already deleted).")


class EraseReportOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["EraseReportOut"]})

    memories: int
    turns: int
    runtime_states: int
    index_documents: int
    graph_vertices: int
    degraded: list[str] = Field(description="Projections that could not be reached (repaired later).")
    queued_turns_dropped: int = Field(
        0,
        description="Turns still queued or dead-lettered that the erase dropped. Always 0 on SQS,"
        " which cannot delete one user's messages: ingest drops those (audited, reason erased).",
    )
    erased_at: datetime | None = Field(
        None, description="The erase barrier: no turn sent or dated at or before it is ever ingested."
    )


class SessionStateOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["SessionStateOut"]})
    session_id: str
    state: dict[str, Any]


class AuditEventOut(ApiModel):
    id: str
    action: str
    at: datetime
    memory_id: str | None = None
    reason: str | None = None
    details: dict[str, Any] = {}


class AuditOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["AuditOut"]})

    events: list[AuditEventOut]


class JsonRpcRequest(ApiModel):
    """One JSON-RPC 2.0 request to ``POST /v1/mcp`` (documentation only: the route reads the raw
    body, so a malformed one gets a JSON-RPC error, not a 422). Without ``id`` it is a
    notification (no answer)."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["JsonRpcRequest"]})
    jsonrpc: Literal["2.0"]
    id: int | float | str | None = None
    method: str = Field(description="initialize, ping, tools/list, tools/call, notifications/*")
    params: dict[str, Any] | None = None


class JsonRpcError(ApiModel):
    code: int = Field(description="-32700 parse, -32600 invalid request, -32601 method, -32602 params")
    message: str


class JsonRpcResponse(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["JsonRpcResponse"]})
    jsonrpc: Literal["2.0"]
    id: int | float | str | None
    result: dict[str, Any] | None = None
    error: JsonRpcError | None = None


class BacklogOut(ApiModel):
    name: str = Field(description="ingest queue | projector stream")
    waiting: int = Field(description="items not processed yet")
    oldest_age_s: float | None = Field(None, description="seconds the oldest of them has waited")


class HealthOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["HealthOut"]})
    status: Literal["ok", "degraded"] = Field(
        description="degraded: the service answers but cannot do all of its work now (see reasons)"
    )
    backend: str
    embedder: str
    reasons: list[str] = Field(
        default_factory=list,
        description="why it is degraded: a backlog older than AGENTMEM_HEALTH_MAX_BACKLOG_AGE_S, a server"
        " process down and being replaced (agentmem serve)",
    )
    backlogs: list[BacklogOut] = Field(
        default_factory=list, description="what waits, where the backend can tell (the embedded one)"
    )
