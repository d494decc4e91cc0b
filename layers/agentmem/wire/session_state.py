"""The shapes of a session's runtime state on the wire (``PUT /v1/sessions/{id}/state``): the
task slot (:class:`Plan`) and the tool state (:class:`ToolState`), with their bounds.

Defined here, in the leaf, and used by :mod:`agentmem.domain.runtime_state` (whose
``RuntimeState`` is made of them), so a body the API accepts is exactly a state the domain
keeps. Unknown keys are refused and every text and list is bounded."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

MAX_LINE = 2000  # characters of one goal, step, note, param value or call status
MAX_ITEMS = 50  # entries of one list or mapping (task_memory: as many as the API always allowed)
MAX_NAME = 128  # characters of a tool or parameter name
MAX_TOOLS = 200  # tools a session may list as available
MAX_CALLS = 100  # recent tool calls kept (the context shows the last five)

Line = Annotated[str, Field(max_length=MAX_LINE)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
ParamValue = str | int | float | bool


class StateModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class Plan(StateModel):
    """The task slot: rendered as ``goal:``, ``current step:``, ``done:``, ``pending:`` and
    ``active params:`` lines (each only when non-empty)."""

    goal: Line | None = None
    step: Line | None = Field(None, description="The current step.")
    done: tuple[Line, ...] = Field((), max_length=MAX_ITEMS)
    pending: tuple[Line, ...] = Field((), max_length=MAX_ITEMS)
    params: dict[Name, Annotated[ParamValue, Field(union_mode="smart")]] = Field(
        default_factory=dict, max_length=MAX_ITEMS, description="Active parameters, shown as key=value."
    )


class ToolCall(StateModel):
    """One recent tool call, rendered ``<tool>: <status>`` (``?`` for a missing part)."""

    tool: Name | None = None
    status: Line | None = None


class ToolState(StateModel):
    """The tools a session may use and its recent calls (the last five are shown)."""

    available: tuple[Name, ...] = Field((), max_length=MAX_TOOLS)
    recent_calls: tuple[ToolCall, ...] = Field((), max_length=MAX_CALLS)
