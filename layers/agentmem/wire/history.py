"""Response models of a memory's history (``GET /v1/memories/{id}/history``): the supersede
chain, oldest first, one entry per record with its validity (route contracts: history)."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects instead of
# compiling and evaluating each as a string when the class is made (part of the api's cold start).

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from .examples import EXAMPLES
from .models import ApiModel


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


class HistoryOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["HistoryOut"]})

    memory_id: str = Field(description="The memory asked about.")
    entries: list[HistoryEntryOut] = Field(description="The supersede chain through it, oldest first.")
