"""Typed runtime state of a session: the task slot (plan), the task-memory ring buffer and the
tool state that the tool and react context modes render (DESIGN §5.4).

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
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["MAX_ITEMS", "MAX_LINE", "InvalidRuntimeState", "Plan", "RuntimeState", "ToolCall", "ToolState"]

MAX_LINE = 2000  # characters of one goal, step, note, param value or call status
MAX_ITEMS = 50  # entries of one list or mapping (task_memory: as many as the API always allowed)
MAX_NAME = 128  # characters of a tool or parameter name
MAX_TOOLS = 200  # tools a session may list as available
MAX_CALLS = 100  # recent tool calls kept (the context shows the last five)

Line = Annotated[str, Field(max_length=MAX_LINE)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
ParamValue = str | int | float | bool


class InvalidRuntimeState(ValueError):
    """A state of the wrong shape; ``details`` names the bad fields (never their values). The
    domain raises ValueErrors; the API and the adapters translate."""

    def __init__(self, message: str, *, details: dict[str, object]) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class Plan(_Model):
    """The task slot: rendered as ``goal:``, ``current step:``, ``done:``, ``pending:`` and
    ``active params:`` lines (each only when non-empty)."""

    goal: Line | None = None
    step: Line | None = Field(None, description="The current step.")
    done: tuple[Line, ...] = Field((), max_length=MAX_ITEMS)
    pending: tuple[Line, ...] = Field((), max_length=MAX_ITEMS)
    params: dict[Name, Annotated[ParamValue, Field(union_mode="smart")]] = Field(
        default_factory=dict, max_length=MAX_ITEMS, description="Active parameters, shown as key=value."
    )


class ToolCall(_Model):
    """One recent tool call, rendered ``<tool>: <status>`` (``?`` for a missing part)."""

    tool: Name | None = None
    status: Line | None = None


class ToolState(_Model):
    """The tools a session may use and its recent calls (the last five are shown)."""

    available: tuple[Name, ...] = Field((), max_length=MAX_TOOLS)
    recent_calls: tuple[ToolCall, ...] = Field((), max_length=MAX_CALLS)


class RuntimeState(_Model):
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
