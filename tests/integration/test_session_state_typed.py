"""Session state is typed end to end: a state of the wrong shape is refused when it is PUT (it
used to be stored and then turn every context call of its session into a 500), and a stored row
that no longer parses reads as absent instead of breaking the session."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agentmem.adapters.codec import format_sortable
from agentmem.bootstrap import Container
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope

S = Scope("t1", "u1")  # the api fixture's caller


@pytest.mark.parametrize(
    ("state", "field"),
    [
        ({"plan": {"goal": "move", "steps": ["pack"]}}, "plan.steps"),
        ({"plan": {"goal": 42}}, "plan.goal"),
        ({"plan": {"done": "flights"}}, "plan.done"),
        ({"tool_state": {"recent_calls": None}}, "tool_state.recent_calls"),
        (
            {"tool_state": {"recent_calls": [{"tool": "search", "args": {"q": "x"}}]}},
            "tool_state.recent_calls.0.args",
        ),
    ],
)
def test_a_wrong_shaped_state_is_refused_at_put_and_nothing_is_stored(
    api: Any, state: dict[str, Any], field: str
) -> None:
    status, body = api("PUT", "/v1/sessions/s1/state", state)
    assert status == 422, body
    assert body["error"] == "invalid_request"
    assert field in {".".join(d["loc"][1:]) for d in body["details"]}  # loc: body, field path...
    assert api("GET", "/v1/sessions/s1/state")[0] == 404
    status, _ = api("POST", "/v1/context", {"query": "what next?", "mode": "react", "session_id": "s1"})
    assert status == 200


def test_a_stored_row_that_no_longer_parses_leaves_the_session_usable(
    api: Any, container: Container, clock: ManualClock
) -> None:
    # What the untyped port accepted before: a plan that is a list. Written behind the API's back.
    store = container.runtime_state
    with store._db.write() as conn:  # type: ignore[attr-defined]
        conn.execute(
            "INSERT INTO runtime_state (pk, session_id, state, expires_at) VALUES (?, ?, ?, ?)",
            (S.key, "s1", '{"plan":["a","b"],"step":1}', format_sortable(clock.now() + timedelta(hours=1))),
        )
    assert api("GET", "/v1/sessions/s1/state")[0] == 404
    status, body = api("POST", "/v1/context", {"query": "what next?", "mode": "react", "session_id": "s1"})
    assert status == 200 and body["slots"]["planner"]["items"] == []
    assert api("PUT", "/v1/sessions/s1/state", {"plan": {"goal": "g"}})[0] == 200
    assert api("GET", "/v1/sessions/s1/state")[1]["state"] == {"plan": {"goal": "g"}}
