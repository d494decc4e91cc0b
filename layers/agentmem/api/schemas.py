"""Request and response models of the HTTP API (and of the SQS turn message)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentmem.domain.models import Category, MemoryRecord, ScoredMemory, checked_time
from agentmem.messages import (
    ID_PATTERN,
    MAX_TEXT,
    AssistantText,
    Identifier,
    Speaker,
    TraceId,
    TurnTime,
    UserText,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class TurnIn(_Strict):
    """One finished exchange; the API adds the caller's scope and sends it as a
    :class:`~agentmem.messages.TurnMessage` (the same field types)."""

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
    turns: list[TurnIn] = Field(min_length=1, max_length=100)


class TurnsAccepted(BaseModel):
    accepted: int
    message_ids: list[str]


class ContextIn(_Strict):
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    mode: Literal["chat", "tool", "react", "rag"] = "chat"
    session_id: str | None = Field(None, pattern=ID_PATTERN)
    at: datetime | None = Field(None, description="Evaluate as of this time (defaults to now).")

    _at = field_validator("at")(classmethod(lambda cls, value: checked_time(value)))


class RecallIn(_Strict):
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    k: int = Field(5, ge=1, le=100)
    categories: list[Category] | None = None
    at: datetime | None = None

    _at = field_validator("at")(classmethod(lambda cls, value: checked_time(value)))


class MemoryIn(_Strict):
    content: str = Field(min_length=1, max_length=4000)
    category: Category | None = None
    importance: float | None = Field(None, ge=0, le=1)
    pinned: bool = False
    permanent: bool = Field(
        False, description="Persona/permanent layer; needs the memory:permanent permission."
    )
    tags: list[str] = Field(default_factory=list, max_length=20)


class MemoryPatchIn(_Strict):
    content: str | None = Field(None, min_length=1, max_length=4000)
    category: Category | None = None
    importance: float | None = Field(None, ge=0, le=1)
    pinned: bool | None = None
    tags: list[str] | None = Field(None, max_length=20)
    expected_version: int | None = Field(None, ge=1)


class SessionStateIn(_Strict):
    plan: dict[str, Any] | None = None
    task_memory: list[str] | None = Field(None, max_length=50)
    tool_state: dict[str, Any] | None = None
    ttl_hours: float = Field(24, gt=0, le=24 * 7)


class MemoryOut(BaseModel):
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

    @staticmethod
    def of(record: MemoryRecord, scored: ScoredMemory | None = None) -> MemoryOut:
        return MemoryOut(
            id=record.memory_id,
            content=record.content,
            category=record.category.value,
            layer=record.layer.value,
            key=record.key,
            value=record.value,
            tags=list(record.tags),
            importance=round(record.importance, 4),
            importance_source=record.importance_source.value,
            confidence=record.confidence.value,
            source=record.source.value,
            source_refs=record.source_refs.to_dict(),
            version=record.version,
            status=record.status.value,
            pinned=record.pinned,
            created_at=record.created_at,
            updated_at=record.updated_at,
            valid_from=record.valid_from,
            valid_to=record.valid_to,
            supersedes=list(record.supersedes),
            superseded_by=record.superseded_by,
            score=round(scored.score, 4) if scored else None,
            score_components={k: round(v, 4) for k, v in scored.components.items()} if scored else None,
            channels=list(scored.channels) if scored else None,
        )


class ErrorOut(BaseModel):
    error: str
    message: str
    details: Any = None
