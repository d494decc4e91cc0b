"""Request and response models of pending conflicts (``GET /v1/conflicts``,
``POST /v1/conflicts/{id}``; route contracts: pending conflicts)."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects instead of
# compiling and evaluating each as a string when the class is made (part of the api's cold start).

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from .examples import EXAMPLES
from .models import ApiModel


class ConflictOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ConflictOut"]})

    conflict_id: str
    memory_id: str = Field(description="The permanent or pinned memory the turn contradicts.")
    existing: str = Field(description="Its content.")
    proposed: str = Field(description="The new statement (redacted), kept pending.")
    status: Literal["pending", "confirmed", "rejected"]
    created_at: datetime
    resolved_at: datetime | None = None
    message_id: str | None = None
    new_memory_id: str | None = Field(
        None, description="The id the proposal has (as a memory once confirmed)."
    )


class ConflictsOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["ConflictsOut"]})

    conflicts: list[ConflictOut]
    next_cursor: str | None = None


class ConflictDecisionIn(ApiModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": EXAMPLES["ConflictDecisionIn"]})

    decision: Literal["confirm", "reject"] = Field(
        description="confirm: the proposal replaces the memory now; reject: the proposal is dropped."
    )
