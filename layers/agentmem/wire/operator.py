"""Request and response models of the operator routes: turn status, dead letters, export and
import (``docs/operations.md``). The shared models are :mod:`.models`."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects instead of
# compiling and evaluating each as a string when the class is made (part of the api's cold start).

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from .examples import EXAMPLES
from .models import ApiModel
from .vocabulary import Category

MAX_IMPORT_ITEMS = 100


class TurnStatusOut(ApiModel):
    """What happened to one turn sent to ``POST /v1/turns``."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["TurnStatusOut"]})

    message_id: str
    status: Literal["queued", "processed", "rejected", "quarantined", "dead_lettered"] = Field(
        description="queued: not processed yet; processed: went through the write path (possibly"
        " storing nothing); rejected: malformed, or dropped because its user was erased;"
        " quarantined: an injection, kept for audit and never recalled; dead_lettered: failed"
        " every attempt, waiting for a redrive."
    )
    reason: str | None = Field(None, description="Why it was rejected, quarantined or dead-lettered.")
    memory_ids: list[str] = Field(description="The memories the turn wrote (its quarantine record too).")
    updated_at: datetime | None = Field(None, description="When the status was reached, where known.")


class DeadLetterOut(ApiModel):
    """A turn the ingest queue gave up on: ids, the reason and the count, never the turn's text."""

    message_id: str
    session_id: str | None = None
    reason: str
    attempts: int
    failed_at: datetime


class DeadLettersOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["DeadLettersOut"]})

    dead_letters: list[DeadLetterOut]
    next_cursor: str | None = Field(None, description="Pass as ?cursor= for the next page; null at the end.")


class RedriveOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["RedriveOut"]})

    redriven: int = Field(description="How many dead letters went back to the ingest queue.")


class ImportItemIn(ApiModel):
    """One memory to import; the same fields and limits as ``POST /v1/memories``."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=4000)
    category: Category | None = None
    importance: float | None = Field(None, ge=0, le=1)
    pinned: bool = False
    tags: list[str] = Field(default_factory=list, max_length=20)


class ImportIn(ApiModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": EXAMPLES["ImportIn"]})

    memories: list[ImportItemIn] = Field(min_length=1, max_length=MAX_IMPORT_ITEMS)


class ImportRejectedOut(ApiModel):
    index: int = Field(description="The item's position in the request's memories.")
    reasons: list[str] = Field(description="Why it was not stored (a guard, duplicate, a permission).")


class ImportOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ImportOut"]})

    imported: int
    rejected: list[ImportRejectedOut]
