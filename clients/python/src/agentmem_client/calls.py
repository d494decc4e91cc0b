"""The calls of every route of the HTTP API, as data (:class:`~agentmem_client.protocol.Call`):
bodies built by the API's own input models (``TurnIn``, ``ContextIn``, ``RecallIn``,
``MemoryIn``, ``MemoryPatchIn``), so a bad argument fails here, before anything is sent, with
the message the server would give; successes parsed into the models the API serves. A turn
without a ``message_id`` gets one here, which makes ``POST /v1/turns`` safe to retry."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from agentmem_client.models import (
    ConflictOut,
    ConflictPage,
    ConflictState,
    Decision,
    HistoryOut,
    ResolveConflictIn,
    TurnStatusOut,
    new_message_id,
)
from agentmem_client.protocol import Call, Poll
from agentmem_client.version import __version__
from agentmem_client.wire.models import (
    AuditOut,
    ContextIn,
    ContextOut,
    DeletedOut,
    EraseReportOut,
    HealthOut,
    MemoryCreated,
    MemoryIn,
    MemoryOut,
    MemoryPage,
    MemoryPatchIn,
    RecallIn,
    RecallOut,
    SessionStateIn,
    SessionStateOut,
    TurnIn,
    TurnsAccepted,
    TurnsIn,
)
from agentmem_client.wire.vocabulary import Category

IDEMPOTENCY_HEADER = "Idempotency-Key"

M = TypeVar("M", bound=BaseModel)
Mode = Literal["chat", "tool", "react", "rag"]


def _model(model: type[M]) -> Callable[[bytes], M]:
    return model.model_validate_json


def _json(model: BaseModel) -> bytes:
    """The body of an input model: the fields the caller set, none left null."""
    data = model.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _segment(value: str) -> str:
    if not value:
        raise ValueError("an id in the path must not be empty")
    return quote(value, safe="")


class Requests:
    """The calls of the HTTP API for one caller. ``token``: the bearer token (the API Gateway
    authorizer's, or ``AGENTMEM_API_TOKEN`` locally); ``tenant_id``/``user_id``: the scope
    headers the local server reads (from loopback, or next to a token)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http:// or https:// URL")
        self.base_url = base_url.rstrip("/")  # keeps a stage path such as /prod
        self.user_id = user_id
        self.headers: dict[str, str] = {
            "Accept": "application/json",
            "User-Agent": f"agentmem-client/{__version__}",
            **(headers or {}),
        }
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        if tenant_id:
            self.headers["X-Tenant-Id"] = tenant_id
        if user_id:
            self.headers["X-User-Id"] = user_id

    def request(self, call: Call[Any]) -> httpx.Request:
        headers = {**self.headers, **call.headers}
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        return httpx.Request(
            call.method,
            self.base_url + call.path,
            params=dict(call.params) or None,
            content=call.body,
            headers=headers,
        )

    # ------------------------------------------------------------------ turns

    def add_turns(self, turns: Sequence[TurnIn | Mapping[str, Any]]) -> Call[TurnsAccepted]:
        """``POST /v1/turns`` (up to 100 turns): each turn a ``TurnIn`` or its fields; a turn
        without ``message_id`` gets one here, so the call is safe to retry."""
        parsed = [t if isinstance(t, TurnIn) else TurnIn.model_validate(dict(t)) for t in turns]
        body = TurnsIn(
            turns=[t.model_copy(update={"message_id": t.message_id or new_message_id()}) for t in parsed]
        )
        return Call("POST", "/v1/turns", _model(TurnsAccepted), body=_json(body))

    def add_turn(
        self,
        session_id: str,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        message_id: str | None = None,
        speaker: str | None = None,
        trace_id: str | None = None,
    ) -> Call[TurnsAccepted]:
        """``POST /v1/turns`` with one turn."""
        turn = TurnIn.model_validate(
            {
                "session_id": session_id,
                "user": user,
                "assistant": assistant,
                "at": at,
                "message_id": message_id,
                "speaker": speaker,
                "trace_id": trace_id,
            }
        )
        return self.add_turns([turn])

    def turn_status(self, message_id: str) -> Call[TurnStatusOut]:
        """``GET /v1/turns/{message_id}``: queued, processed, rejected, quarantined or dead-lettered."""
        return Call("GET", f"/v1/turns/{_segment(message_id)}", _model(TurnStatusOut))

    def wait_for_turn(
        self, message_id: str, *, timeout_s: float = 30.0, interval_s: float = 0.25
    ) -> Poll[TurnStatusOut]:
        """Poll :meth:`turn_status` until the turn is no longer ``queued`` (processed, rejected,
        quarantined, dead-lettered) or ``timeout_s`` passed; returns the last status — still
        ``queued`` on a timeout. A turn not seen yet (404) is polled again until the deadline."""
        return Poll(self.turn_status(message_id), lambda s: s.status != "queued", timeout_s, interval_s)

    # ------------------------------------------------------------------ read path

    def context(
        self,
        query: str,
        *,
        mode: Mode = "chat",
        session_id: str | None = None,
        at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> Call[ContextOut]:
        """``POST /v1/context``: the system-prompt prefix for ``query``; ``as_of``: as the
        memories stood then."""
        body = ContextIn(query=query, mode=mode, session_id=session_id, at=at, as_of=as_of)
        return Call("POST", "/v1/context", _model(ContextOut), body=_json(body))

    def recall(
        self,
        query: str,
        *,
        k: int = 5,
        categories: Sequence[Category | str] | None = None,
        at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> Call[RecallOut]:
        """``POST /v1/recall``: the ``k`` best memories, with score components and channels."""
        body = RecallIn.model_validate(
            {
                "query": query,
                "k": k,
                "categories": list(categories) if categories else None,
                "at": at,
                "as_of": as_of,
            }
        )
        return Call("POST", "/v1/recall", _model(RecallOut), body=_json(body))

    # ------------------------------------------------------------------ memories

    def list_memories(
        self,
        *,
        status: str = "active",
        category: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Call[MemoryPage]:
        """``GET /v1/memories``: one page, newest first; pass ``next_cursor`` back as ``cursor``."""
        params = {"status": str(status), "limit": str(limit)}
        params |= {k: v for k, v in {"category": category, "cursor": cursor}.items() if v is not None}
        return Call("GET", "/v1/memories", _model(MemoryPage), params=params)

    def create_memory(
        self,
        content: str,
        *,
        category: Category | str | None = None,
        importance: float | None = None,
        pinned: bool = False,
        permanent: bool = False,
        tags: Sequence[str] = (),
        idempotency_key: str | None = None,
    ) -> Call[MemoryCreated]:
        """``POST /v1/memories``: write one memory (guards apply; PII is redacted first). Sent
        with an ``Idempotency-Key`` (``idempotency_key``, else a new random one per call), so a
        retry after a 5xx or a lost connection returns the first answer, never a second memory;
        pass your own key to make a retry of your own (after a crash) safe too."""
        body = MemoryIn.model_validate(
            {
                "content": content,
                "category": category,
                "importance": importance,
                "pinned": pinned,
                "permanent": permanent,
                "tags": list(tags),
            }
        )
        key = idempotency_key or f"agentmem-{uuid.uuid4().hex}"
        return Call(
            "POST", "/v1/memories", _model(MemoryCreated), body=_json(body), headers={IDEMPOTENCY_HEADER: key}
        )

    def get_memory(self, memory_id: str) -> Call[MemoryOut]:
        return Call("GET", f"/v1/memories/{_segment(memory_id)}", _model(MemoryOut))

    def patch_memory(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        category: Category | str | None = None,
        importance: float | None = None,
        pinned: bool | None = None,
        tags: Sequence[str] | None = None,
        expected_version: int | None = None,
    ) -> Call[MemoryOut]:
        """``PATCH /v1/memories/{id}``: only the fields given change; ``expected_version`` makes
        it fail with :class:`~agentmem_client.errors.ConflictError` if someone changed it first."""
        body = MemoryPatchIn.model_validate(
            {
                "content": content,
                "category": category,
                "importance": importance,
                "pinned": pinned,
                "tags": list(tags) if tags is not None else None,
                "expected_version": expected_version,
            }
        )
        path = f"/v1/memories/{_segment(memory_id)}"
        return Call("PATCH", path, _model(MemoryOut), body=_json(body), idempotent=False)

    def delete_memory(self, memory_id: str, *, hard: bool = False) -> Call[DeletedOut]:
        """``DELETE /v1/memories/{id}``: soft by default; ``hard=True`` erases the record."""
        params = {"hard": "true"} if hard else {}
        return Call("DELETE", f"/v1/memories/{_segment(memory_id)}", _model(DeletedOut), params=params)

    def promote_memory(self, memory_id: str) -> Call[MemoryOut]:
        """``POST /v1/memories/{id}/permanent``: move it to the permanent layer (a second call
        leaves it there: idempotent)."""
        return Call("POST", f"/v1/memories/{_segment(memory_id)}/permanent", _model(MemoryOut))

    def history(self, memory_id: str) -> Call[HistoryOut]:
        """``GET /v1/memories/{id}/history``: the supersede chain through it, oldest first."""
        return Call("GET", f"/v1/memories/{_segment(memory_id)}/history", _model(HistoryOut))

    def erase_user(self, user_id: str | None = None) -> Call[EraseReportOut]:
        """``DELETE /v1/users/{id}`` (GDPR): everything stored about the caller's user."""
        user = user_id or self.user_id
        if not user:
            raise ValueError("erase_user needs the user id (none was configured)")
        return Call("DELETE", f"/v1/users/{_segment(user)}", _model(EraseReportOut))

    # ------------------------------------------------------------------ session (task) state

    def put_session_state(
        self, session_id: str, state: SessionStateIn | Mapping[str, Any]
    ) -> Call[SessionStateOut]:
        """``PUT /v1/sessions/{id}/state``: replace the task state (``plan``, ``task_memory``,
        ``tool_state``, ``ttl_hours``) the tool/react context modes read."""
        body = state if isinstance(state, SessionStateIn) else SessionStateIn.model_validate(dict(state))
        path = f"/v1/sessions/{_segment(session_id)}/state"
        return Call("PUT", path, _model(SessionStateOut), body=_json(body))

    def get_session_state(self, session_id: str) -> Call[SessionStateOut]:
        """``GET /v1/sessions/{id}/state``: the stored task state (404 when none or expired)."""
        return Call("GET", f"/v1/sessions/{_segment(session_id)}/state", _model(SessionStateOut))

    # ------------------------------------------------------------------ conflicts, audit, health

    def conflicts(
        self, *, status: ConflictState = "pending", limit: int | None = None, cursor: str | None = None
    ) -> Call[ConflictPage]:
        """``GET /v1/conflicts``: statements that contradict a permanent or pinned memory."""
        params: dict[str, str] = {"status": status}
        params |= {k: str(v) for k, v in {"limit": limit, "cursor": cursor}.items() if v is not None}
        return Call("GET", "/v1/conflicts", _model(ConflictPage), params=params)

    def resolve_conflict(self, conflict_id: str, decision: Decision) -> Call[ConflictOut]:
        """``POST /v1/conflicts/{id}`` ``confirm`` (the new statement replaces the memory) or
        ``reject``. Not idempotent: a second decision is a 409."""
        body = ResolveConflictIn(decision=decision)
        path = f"/v1/conflicts/{_segment(conflict_id)}"
        return Call("POST", path, _model(ConflictOut), body=_json(body), idempotent=False)

    def audit(self, *, limit: int = 100, action: str | None = None) -> Call[AuditOut]:
        """``GET /v1/audit``: the caller's audit trail, newest first (ids and reasons, no content)."""
        params = {"limit": str(limit)} | ({"action": action} if action else {})
        return Call("GET", "/v1/audit", _model(AuditOut), params=params)

    def health(self) -> Call[HealthOut]:
        return Call("GET", "/v1/health", _model(HealthOut))
