"""Typed runtime state of a session: the task slot (plan), the task-memory ring buffer and the
tool state that the tool and react context modes render (docs/design.md "Context: modes, slots
and budgets").

One model per shape, validated where it enters (``PUT /v1/sessions/{id}/state``) and again where
a stored row is read back, so a state of the wrong shape is refused at write time instead of
breaking every later context call of its session. Unknown keys are refused and every text and
list is bounded.

* :meth:`RuntimeState.from_dict` / :meth:`RuntimeState.from_json` validate plain data or a stored
  row and raise :class:`InvalidRuntimeState` naming the bad fields (never their
  values, which may hold user text).
* :meth:`RuntimeState.to_dict` / :meth:`RuntimeState.to_json` give back what was given: only the
  fields that were set, without nulls, so a state reads back exactly as it was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

# The shapes are the wire contract's (a leaf: stdlib and pydantic only), so the API and the domain
# validate with one definition.
from agentmem.wire.session_state import (
    MAX_CALLS,
    MAX_ITEMS,
    MAX_LINE,
    MAX_NAME,
    MAX_TOOLS,
    Line,
    Plan,
    StateModel,
    ToolCall,
    ToolState,
)

__all__ = [
    "MAX_CALLS",
    "MAX_ITEMS",
    "MAX_LINE",
    "MAX_NAME",
    "MAX_TOOLS",
    "InvalidRuntimeState",
    "Plan",
    "RuntimeState",
    "ToolCall",
    "ToolState",
]


class InvalidRuntimeState(ValueError):
    """A state of the wrong shape; ``details`` names the bad fields (never their values). The
    domain raises ValueErrors; the API and the adapters translate."""

    def __init__(self, message: str, *, details: dict[str, object]) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class RuntimeState(StateModel):
    """Everything a session keeps between turns, replaced whole on every write."""

    plan: Plan | None = None
    task_memory: tuple[Line, ...] = Field(
        (), max_length=MAX_ITEMS, description="Task notes, oldest first (the newest is shown first)."
    )
    tool_state: ToolState | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuntimeState:
        """Validate plain data (a request body without its ``ttl_hours``).

        Raises :class:`InvalidRuntimeState` (``details["fields"]``: the dotted paths
        of the bad fields)."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _invalid(exc) from exc

    @classmethod
    def from_json(cls, raw: str | bytes) -> RuntimeState:
        """Validate a stored row; raises :class:`InvalidRuntimeState` like
        :meth:`from_dict` (``details["reason"]`` is ``malformed_json`` when it is not JSON)."""
        try:
            return cls.model_validate_json(raw)
        except ValidationError as exc:
            raise _invalid(exc) from exc

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: the fields that were set, without nulls (what was written reads back)."""
        return self.model_dump(mode="json", exclude_unset=True, exclude_none=True)

    def to_json(self) -> str:
        """Compact JSON of :meth:`to_dict` (UTF-8 text as is), the form the stores keep."""
        return self.model_dump_json(exclude_unset=True, exclude_none=True)


def _invalid(exc: ValidationError) -> InvalidRuntimeState:
    errors = exc.errors(include_url=False, include_input=False)
    if any(e["type"] == "json_invalid" for e in errors):
        return InvalidRuntimeState("malformed session state", details={"reason": "malformed_json"})
    problems = [(".".join(str(p) for p in e["loc"]) or "state", e["msg"]) for e in errors]
    return InvalidRuntimeState(
        "invalid session state: " + "; ".join(f"{loc}: {msg}" for loc, msg in problems),
        details={"reason": "invalid_fields", "fields": sorted({loc for loc, _ in problems})},
    )
