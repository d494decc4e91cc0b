"""Typed session state (agentmem.domain.runtime_state): the shapes the context service renders,
refused with a message naming the field when wrong, and given back exactly as written."""

from __future__ import annotations

from typing import Any

import pytest

from agentmem.domain.runtime_state import (
    MAX_ITEMS,
    MAX_LINE,
    InvalidRuntimeState,
    Plan,
    RuntimeState,
    ToolCall,
    ToolState,
)

FULL: dict[str, Any] = {
    "plan": {
        "goal": "plan a trip to Kyoto",
        "step": "book hotel",
        "done": ["flights"],
        "pending": ["rail pass"],
        "params": {"city": "京都", "nights": 3, "budget": 1200.5, "refundable": True},
    },
    "task_memory": ["hotel A is full", "酒店B有空房"],
    "tool_state": {
        "available": ["search_hotels"],
        "recent_calls": [{"tool": "search_hotels", "status": "ok"}, {"status": "timeout"}],
    },
}


def test_a_full_state_parses_into_the_typed_models() -> None:
    state = RuntimeState.from_dict(FULL)
    assert state.plan == Plan(
        goal="plan a trip to Kyoto",
        step="book hotel",
        done=("flights",),
        pending=("rail pass",),
        params={"city": "京都", "nights": 3, "budget": 1200.5, "refundable": True},
    )
    assert state.task_memory == ("hotel A is full", "酒店B有空房")
    assert state.tool_state == ToolState(
        available=("search_hotels",),
        recent_calls=(ToolCall(tool="search_hotels", status="ok"), ToolCall(tool=None, status="timeout")),
    )
    # a param keeps its JSON type: a bool stays a bool, an int an int
    assert state.plan is not None and [type(v) for v in state.plan.params.values()] == [str, int, float, bool]


@pytest.mark.parametrize(
    "data",
    [
        FULL,
        {},
        {"task_memory": ["note"]},
        {"plan": {"goal": "move house", "step": "pack books"}, "task_memory": ["boxes bought"]},
        {"plan": {}, "tool_state": {}},
        {"plan": {"goal": "", "done": []}},
    ],
)
def test_round_trip_gives_back_what_was_written(data: dict[str, Any]) -> None:
    state = RuntimeState.from_dict(data)
    assert state.to_dict() == data
    assert RuntimeState.from_json(state.to_json()) == state
    assert RuntimeState.from_json(state.to_json()).to_dict() == data


def test_nulls_are_left_out_of_what_is_given_back() -> None:
    state = RuntimeState.from_dict({"plan": {"goal": "g", "step": None}, "tool_state": None})
    assert state.to_dict() == {"plan": {"goal": "g"}}


def test_json_is_compact_and_keeps_utf8_text_as_is() -> None:
    assert RuntimeState.from_dict({"task_memory": ["订酒店"]}).to_json() == '{"task_memory":["订酒店"]}'


def test_the_models_are_frozen() -> None:
    state = RuntimeState.from_dict(FULL)
    with pytest.raises(ValueError, match="frozen"):
        state.task_memory = ()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "field", "says"),
    [
        ({"plan": "x"}, "plan", "valid dictionary"),
        ({"plan": ["a", "b"], "step": 1}, "plan", "valid dictionary"),
        ({"mood": "happy"}, "mood", "Extra inputs are not permitted"),
        ({"plan": {"steps": ["a", "b"]}}, "plan.steps", "Extra inputs are not permitted"),
        ({"plan": {"goal": 5}}, "plan.goal", "valid string"),
        ({"plan": {"done": "flights"}}, "plan.done", "valid tuple"),
        ({"plan": {"done": [1]}}, "plan.done.0", "valid string"),
        ({"plan": {"params": {"rooms": [1, 2]}}}, "plan.params.rooms.str", "valid string"),
        ({"plan": {"goal": "g" * (MAX_LINE + 1)}}, "plan.goal", f"at most {MAX_LINE} characters"),
        ({"task_memory": ["n"] * (MAX_ITEMS + 1)}, "task_memory", f"at most {MAX_ITEMS} items"),
        ({"task_memory": "note"}, "task_memory", "valid tuple"),
        ({"tool_state": {"recent_calls": None}}, "tool_state.recent_calls", "valid tuple"),
        (
            {"tool_state": {"recent_calls": [{"tool": "t", "args": {}}]}},
            "tool_state.recent_calls.0.args",
            "Extra",
        ),
        ({"tool_state": ["search"]}, "tool_state", "valid dictionary"),
    ],
)
def test_wrong_shapes_are_refused_naming_the_field(data: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(InvalidRuntimeState) as caught:
        RuntimeState.from_dict(data)
    error = caught.value
    assert error.message.startswith("invalid session state: ")
    assert f"{field}: " in error.message and says in error.message
    assert field in error.details["fields"]  # type: ignore[operator]
    assert error.details["reason"] == "invalid_fields"


def test_the_message_never_repeats_the_value() -> None:
    with pytest.raises(InvalidRuntimeState) as caught:
        RuntimeState.from_dict({"plan": {"goal": ["my secret plan"]}, "task_memory": "my secret note"})
    assert "secret" not in caught.value.message and "secret" not in str(caught.value.details)


@pytest.mark.parametrize(("raw", "reason"), [("{not json", "malformed_json"), ("[1]", "invalid_fields")])
def test_from_json_refuses_what_is_not_a_state(raw: str, reason: str) -> None:
    with pytest.raises(InvalidRuntimeState) as caught:
        RuntimeState.from_json(raw)
    assert caught.value.details["reason"] == reason
