"""MCP endpoint (docs/mcp.md): JSON-RPC 2.0 over HTTP exposing the memory operations as tools
``memory_write``, ``memory_read``, ``memory_search``, ``memory_delete``. The same services and
guards as the REST API; the scope is the caller's, never a tool argument."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentmem.domain.models import Category, MemoryRecord, Scope, Source
from agentmem.errors import AgentMemError, NotFound, ValidationFailed
from agentmem.services.admin import AdminService
from agentmem.services.explicit_write import ExplicitWriter
from agentmem.services.recall import RecallService

PROTOCOL_VERSION = "2025-06-18"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)

MAX_BATCH = 20  # requests per JSON-RPC batch
WRITE_TOOLS = frozenset({"memory_write", "memory_delete"})
TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_write",
        "description": "Remember a fact about the user (guards apply: PII is redacted, injections are refused).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": 4000},
                "category": {"type": "string", "enum": [c.value for c in Category]},
                "importance": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_read",
        "description": "Read one memory by id.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_search",
        "description": "Find the memories most relevant to a query.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "k": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_delete",
        "description": "Delete one memory by id; returns how many records were affected.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
]

# Each tool's argument names, from its inputSchema (an unknown tool is refused by name later).
_ARGUMENTS: dict[str, set[str]] = {tool["name"]: set(tool["inputSchema"]["properties"]) for tool in TOOLS}


def _brief(record: MemoryRecord, score: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": record.memory_id,
        "content": record.content,
        "category": record.category.value,
        "confidence": record.confidence.value,
        "version": record.version,
    }
    if score is not None:
        out["score"] = round(score, 4)
    return out


@dataclass(frozen=True, slots=True)
class McpReply:
    """What goes back over HTTP: ``payload`` None for notifications only; ``malformed`` when the
    body itself was not a JSON-RPC request or batch (HTTP 400)."""

    payload: Any
    malformed: bool = False


@dataclass
class McpService:
    writer: ExplicitWriter
    recall: RecallService
    admin: AdminService

    def handle_body(
        self,
        scope: Scope,
        body: str,
        *,
        now: datetime,
        request_id: str,
        actor: str,
        can_write: bool = True,
    ) -> McpReply:
        """One HTTP body (a JSON-RPC request or a batch of 1-20) in; the reply, if any, out."""
        try:
            message = json.loads(body)
        except json.JSONDecodeError:
            return McpReply(_error(None, PARSE_ERROR, "parse error"), malformed=True)
        batch = message if isinstance(message, list) else [message]
        if not batch or len(batch) > MAX_BATCH:
            return McpReply(
                _error(None, INVALID_REQUEST, f"batch must hold 1-{MAX_BATCH} requests"), malformed=True
            )
        replies = [
            reply
            for index, item in enumerate(batch)
            if (
                reply := self.handle(
                    scope, item, now=now, request_id=f"{request_id}:{index}", actor=actor, can_write=can_write
                )
            )
            is not None
        ]
        if not replies:
            return McpReply(None)  # only notifications
        return McpReply(replies if isinstance(message, list) else replies[0])

    def handle(
        self,
        scope: Scope,
        message: Any,
        *,
        now: datetime,
        request_id: str,
        actor: str,
        can_write: bool = True,
    ) -> dict[str, Any] | None:
        """One JSON-RPC message in, its response out (None for a notification)."""
        rpc_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(rpc_id, bool) or not isinstance(rpc_id, str | int | float | None):
            return _error(None, INVALID_REQUEST, "id must be a string, a number or null")
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
        ):
            return _error(rpc_id, INVALID_REQUEST, "not a JSON-RPC 2.0 request")
        method = message["method"]
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(rpc_id, INVALID_PARAMS, "params must be an object")
        if "id" not in message:  # notification (e.g. notifications/initialized): no response
            return None
        handlers: dict[str, Callable[[], dict[str, Any]]] = {
            "initialize": lambda: {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "agentmem", "version": "0.1.0"},
            },
            "ping": lambda: {},
            "tools/list": lambda: {"tools": TOOLS},
            "tools/call": lambda: self._call(
                scope, params, now=now, request_id=request_id, actor=actor, can_write=can_write
            ),
        }
        handler = handlers.get(method)
        if handler is None:
            return _error(rpc_id, METHOD_NOT_FOUND, f"unknown method {method!r}")
        try:
            return {"jsonrpc": "2.0", "id": rpc_id, "result": handler()}
        except ValidationFailed as exc:
            return _error(rpc_id, INVALID_PARAMS, exc.message)

    def _call(
        self,
        scope: Scope,
        params: dict[str, Any],
        *,
        now: datetime,
        request_id: str,
        actor: str,
        can_write: bool,
    ) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):  # a number, a list, an object: no tool's name
            raise ValidationFailed("params.name must be a string naming a tool")
        if name in WRITE_TOOLS and not can_write:
            return _tool_result(
                {"error": "forbidden", "message": "this tool needs the 'memory:write' permission"},
                is_error=True,
            )
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise ValidationFailed("arguments must be an object")
        unknown = sorted(set(args) - _ARGUMENTS.get(name, set(args)))
        if unknown:  # never silently ignored (the tools' inputSchema: additionalProperties false)
            raise ValidationFailed(f"unknown arguments for {name}: " + ", ".join(map(repr, unknown))[:200])
        try:
            payload = self._tool(scope, name, args, now=now, request_id=request_id, actor=actor)
        except NotFound as exc:
            return _tool_result({"error": "not_found", "message": exc.message}, is_error=True)
        except AgentMemError as exc:
            if isinstance(exc, ValidationFailed):
                raise
            return _tool_result({"error": exc.code, "message": exc.message}, is_error=True)
        return _tool_result(payload)

    def _tool(
        self, scope: Scope, name: str, args: dict[str, Any], *, now: datetime, request_id: str, actor: str
    ) -> dict[str, Any]:
        if name == "memory_write":
            content = _text(args, "content", 4000)
            category = _category(args.get("category"))
            importance = args.get("importance")
            if importance is not None and (
                not isinstance(importance, int | float) or not 0 <= importance <= 1
            ):
                raise ValidationFailed("importance must be a number within [0, 1]")
            record, outcome = self.writer.write(
                scope,
                content,
                now=now,
                category=category,
                importance=importance,
                source=Source.EXPLICIT,
                request_id=request_id,
            )
            if record is None:
                return {"written": False, "reasons": outcome.reasons}
            return {"written": True, "memory": _brief(record), "redacted": outcome.redacted_kinds}
        if name == "memory_read":
            return {"memory": _brief(self.admin.get(scope, _text(args, "id", 64)))}
        if name == "memory_search":
            k = args.get("k", 5)
            if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 50:
                raise ValidationFailed("k must be an integer within [1, 50]")
            result = self.recall.recall(scope, _text(args, "query", 4000), k=k, now=now)
            return {
                "memories": [_brief(s.record, s.score) for s in result.memories],
                "degraded": result.degraded,
            }
        if name == "memory_delete":
            return {"deleted": self.admin.delete(scope, _text(args, "id", 64), now=now, actor=actor)}
        raise ValidationFailed(f"unknown tool {name!r}")


def _text(args: dict[str, Any], key: str, limit: int) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationFailed(f"{key} must be a non-empty string of at most {limit} characters")
    return value


def _category(value: Any) -> Category | None:
    if value is None:
        return None
    try:
        return Category(value)
    except ValueError as exc:
        raise ValidationFailed(f"unknown category {value!r}") from exc


def _tool_result(payload: dict[str, Any], *, is_error: bool = False) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(payload, ensure_ascii=False, default=str)}],
        "structuredContent": payload,
        "isError": is_error,
    }


def _error(rpc_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}
