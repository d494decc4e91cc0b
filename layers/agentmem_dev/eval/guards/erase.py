"""``erase``: a user's data must not come back after ``DELETE /v1/users/{user}``.

A case is a ``plan`` of steps run in order in its own user scope:
``{"do": "filler", "n"}`` (turns of another tenant queued ahead, so the user's turns are still
queued when the erase arrives), ``{"do": "turns", "texts", "batch"?}``, ``{"do": "memory",
"content"}``, ``{"do": "state", "state"}``, ``{"do": "erase"}``, ``{"do": "barrier"}``,
``{"do": "sleep", "s"}`` and ``{"do": "check"}``. A check looks at every memory status, recall
and context for the case's texts and the session state; the case got through when any check
after the (last) erase found something of the user.
"""

from __future__ import annotations

import time
from typing import Any

from agentmem_dev.eval.guards import checks
from agentmem_dev.eval.guards.client import Api, barrier
from agentmem_dev.eval.guards.corpus import Outcome

STATUSES = ("active", "superseded", "quarantined", "deleted")
MAX_SLEEP_S = 10.0


def _markers(plan: list[dict[str, Any]]) -> list[str]:
    return [m for step in plan for m in step.get("markers", [])]


def _leftovers(api: Api, markers: list[str], sessions: set[str]) -> list[str]:
    found: list[str] = []
    count = sum(len(api.memories(status)) for status in STATUSES)
    if count:
        found.append(f"{count} memories")
    query = " ".join(markers) or "what do you know about me"
    if markers and checks.has_marker(markers, api.recall(query)):
        found.append("recall")
    if markers and checks.has_marker(markers, [str(api.context(query).get("context", ""))]):
        found.append("context")
    for session in sorted(sessions):
        if api.call("GET", f"/v1/sessions/{session}/state").status == 200:
            found.append(f"state {session}")
    return found


def run_case(api: Api, filler: Api, case: dict[str, Any]) -> Outcome:
    outcome = Outcome(case["id"], "erase", case.get("lang", "?"))
    plan: list[dict[str, Any]] = case["plan"]
    markers = _markers(plan)
    sessions: set[str] = set()
    erased = False
    seen: list[str] = []
    turn_no = 0
    for step in plan:
        action = step["do"]
        if action == "filler":
            turns = [
                {
                    "session_id": "f",
                    "user": f"Filler turn {i}: I like tea.",
                    "message_id": f"{case['id']}-f{i}",
                }
                for i in range(int(step.get("n", 50)))
            ]
            for start in range(0, len(turns), 100):
                filler.post_turns(turns[start : start + 100])
        elif action == "turns":
            session = step.get("session_id", "s1")
            turns = []
            for text in step["texts"]:
                turns.append({"session_id": session, "user": text, "message_id": f"{case['id']}-t{turn_no}"})
                turn_no += 1
            if step.get("batch"):
                api.post_turns(turns)
            else:
                for turn in turns:
                    api.post_turns([turn])
        elif action == "memory":
            api.call("POST", "/v1/memories", {"content": step["content"]})
        elif action == "state":
            session = step.get("session_id", "s1")
            sessions.add(session)
            api.call("PUT", f"/v1/sessions/{session}/state", step["state"])
        elif action == "erase":
            answer = api.call("DELETE", f"/v1/users/{api.user}")
            outcome.figures.setdefault("erase_status", []).append(answer.status)
            erased = True
            seen = []
        elif action == "barrier":
            if not barrier(api, case["id"]):
                outcome.figures["barrier_timed_out"] = True
        elif action == "sleep":
            time.sleep(min(float(step.get("s", 1.0)), MAX_SLEEP_S))
        elif action == "check" and erased:
            seen.extend(_leftovers(api, markers, sessions))
        elif action != "check":
            raise ValueError(f"case {case['id']}: unknown step {action!r}")
    if seen:
        outcome.hits.add("through")
        outcome.detail = "after the erase: " + ", ".join(dict.fromkeys(seen))
    return outcome
