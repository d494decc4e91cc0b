"""Response models of a memory's history (``GET /v1/memories/{id}/history``): the supersede
chain, oldest first, one entry per record with its validity (route contracts: history)."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects instead of
# compiling and evaluating each as a string when the class is made (part of the api's cold start).

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from agentmem.api.examples import EXAMPLES
from agentmem.api.schemas import ApiModel
from agentmem.domain.models import MemoryRecord


class HistoryEntryOut(ApiModel):
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
    supersedes: list[str] = []  # noqa: RUF012 - a pydantic field (ApiModel): copied per instance
    superseded_by: str | None = None
    source: str
    source_refs: dict[str, Any] = {}  # noqa: RUF012 - a pydantic field (ApiModel)
    confidence: str
    pinned: bool
    version: int

    @staticmethod
    def of(record: MemoryRecord) -> "HistoryEntryOut":
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


class HistoryOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["HistoryOut"]})

    memory_id: str = Field(description="The memory asked about.")
    entries: list[HistoryEntryOut] = Field(description="The supersede chain through it, oldest first.")
