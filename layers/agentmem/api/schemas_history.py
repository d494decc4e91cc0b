"""Response models of a memory's history (``GET /v1/memories/{id}/history``): the supersede
chain, oldest first, one entry per record with its validity (route contracts: history)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from agentmem.domain.models import MemoryRecord


class HistoryEntryOut(BaseModel):
    """One record of the chain: what it said, and when it was true."""

    memory_id: str
    content: str
    category: str
    layer: str
    status: str
    valid_from: datetime | None = None
    valid_to: datetime | None = Field(None, description="When it stopped being true; null: still true.")
    created_at: datetime | None = None
    updated_at: datetime | None = None
    supersedes: list[str] = []
    superseded_by: str | None = None
    source: str
    source_refs: dict[str, Any] = {}
    confidence: str
    pinned: bool
    version: int

    @staticmethod
    def of(record: MemoryRecord) -> HistoryEntryOut:
        return HistoryEntryOut(
            memory_id=record.memory_id,
            content=record.content,
            category=record.category.value,
            layer=record.layer.value,
            status=record.status.value,
            valid_from=record.valid_from,
            valid_to=record.valid_to,
            created_at=record.created_at,
            updated_at=record.updated_at,
            supersedes=list(record.supersedes),
            superseded_by=record.superseded_by,
            source=record.source.value,
            source_refs=record.source_refs.to_dict(),
            confidence=record.confidence.value,
            pinned=record.pinned,
            version=record.version,
        )


class HistoryOut(BaseModel):
    memory_id: str = Field(description="The memory asked about.")
    entries: list[HistoryEntryOut] = Field(description="The supersede chain through it, oldest first.")
