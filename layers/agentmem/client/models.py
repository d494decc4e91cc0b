"""Response models of the routes the API is gaining in issue 13 (history, turn status,
conflicts), mirroring their contract field for field until :mod:`agentmem.api.schemas` serves
them; then these names become re-exports of the API's models. Every other result of the client
is the API's own model (:class:`~agentmem.api.schemas.RecallOut`, ``MemoryOut``, ...).

Like the API's response models they ignore fields they do not know, so a newer server is read
by an older client. Also :func:`new_message_id`, the turn id both senders (HTTP and SQS) make."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

TurnState = Literal["queued", "processed", "rejected", "quarantined", "dead_lettered"]
ConflictState = Literal["pending", "confirmed", "rejected"]
Decision = Literal["confirm", "reject"]


def new_message_id() -> str:
    """A turn's idempotency key, made by the client so a resent turn is the same turn (the
    format of the ids the API generates)."""
    return f"msg-{uuid.uuid4().hex}"


class HistoryEntryOut(BaseModel):
    """One record of a memory's supersede chain (the MemoryOut fields the contract names)."""

    memory_id: str
    content: str
    category: str
    layer: str
    status: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    supersedes: list[str] = []
    superseded_by: str | None = None
    source: str
    confidence: str
    pinned: bool
    version: int


class HistoryOut(BaseModel):
    """``GET /v1/memories/{id}/history``: the chain through the asked memory, oldest first."""

    memory_id: str
    entries: list[HistoryEntryOut]


class TurnStatusOut(BaseModel):
    """``GET /v1/turns/{message_id}``: what became of a turn."""

    message_id: str
    status: TurnState
    reason: str | None = None
    memory_ids: list[str] = []
    updated_at: datetime | None = None


class ConflictOut(BaseModel):
    """A statement that contradicts a permanent or pinned memory, waiting for a decision."""

    conflict_id: str
    memory_id: str
    existing: str
    proposed: str
    status: ConflictState
    created_at: datetime
    resolved_at: datetime | None = None
    message_id: str | None = None
    new_memory_id: str | None = None


class ConflictPage(BaseModel):
    """``GET /v1/conflicts``: one page, ``next_cursor`` null at the end."""

    conflicts: list[ConflictOut]
    next_cursor: str | None = None


class ResolveConflictIn(BaseModel):
    """``POST /v1/conflicts/{id}`` body."""

    decision: Decision

    def payload(self) -> dict[str, Any]:
        return self.model_dump()
