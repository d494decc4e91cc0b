"""``isolation``: another tenant's or user's data must be neither visible nor changeable.

A victim (tenant ``…-victim``, user ``alice``) gets memories, a turn-derived memory and a
session state, all carrying secret marker words. Attackers: the same user id in another tenant
(``other_tenant``), another user of the victim's tenant (``same_tenant``), or a request with only
the case's own headers (``none``). A case's ``attack`` is one request
``{"as", "method", "path", "body"?, "headers"?, "mcp"?}`` whose strings may name the victim's
``{victim_tenant}``, ``{victim_user}``, ``{victim_memory}``, ``{victim_session}``,
``{victim_cursor}`` (a real cursor of the victim's listing), ``{victim_memory_b64}`` and the
case variants ``{victim_memory_lower}``, ``{victim_tenant_upper}``, ``{victim_user_upper}``.

Through when the answer shows a victim marker, or a victim memory id the request did not name
(e.g. in an audit trail), or when the victim's data (every memory's id, status, version,
content, category, tags and the session state) differs after the attack. Attacks that post
turns are compared again after a barrier, when their turns would have been ingested.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from typing import Any

from agentmem_dev.eval.guards import checks
from agentmem_dev.eval.guards.client import Api, barrier
from agentmem_dev.eval.guards.corpus import Outcome

STATUSES = ("active", "superseded", "quarantined", "deleted")


@dataclass
class Victim:
    api: Api
    session: str
    markers: list[str]
    memory_ids: list[str]
    cursor: str

    def values(self) -> dict[str, str]:
        first = self.memory_ids[0] if self.memory_ids else "none"
        return {
            "victim_tenant": self.api.tenant or "",
            "victim_user": self.api.user or "",
            "victim_memory": first,
            "victim_session": self.session,
            "victim_cursor": self.cursor,
            "victim_memory_b64": base64.b64encode(first.encode()).decode(),
            "victim_memory_lower": first.lower(),
            "victim_tenant_upper": (self.api.tenant or "").upper(),
            "victim_user_upper": (self.api.user or "").upper(),
        }

    def snapshot(self) -> str:
        rows = []
        for status in STATUSES:
            for m in self.api.memories(status):
                tags = tuple(m.get("tags") or [])
                rows.append(
                    (
                        m.get("id"),
                        m.get("status"),
                        m.get("version"),
                        m.get("content"),
                        m.get("category"),
                        tags,
                    )
                )
        state = self.api.call("GET", f"/v1/sessions/{self.session}/state")
        return json.dumps([sorted(rows, key=str), state.status, state.body], sort_keys=True, default=str)


def make_victim(api: Api) -> Victim:
    token = uuid.uuid4().hex[:8]
    markers = [f"zanzibar{token}", f"quetzal{token}", f"marmoset{token}"]
    ids = []
    for content in (
        f"My locker password hint is the word {markers[0]}.",
        f"I keep my spare key under the {markers[1]} statue.",
    ):
        answer = api.call(
            "POST", "/v1/memories", {"content": content, "category": "fact", "tags": ["private"]}
        )
        memory_id = ((answer.body or {}).get("memory") or {}).get("id") if answer.ok else None
        if memory_id:
            ids.append(str(memory_id))
    api.post_turns([{"session_id": "vs1", "user": f"I live in Qingdao and my cat is named {markers[2]}."}])
    session = "shared-session-1"
    api.call(
        "PUT",
        f"/v1/sessions/{session}/state",
        {"plan": {"goal": f"plan the {markers[0]} trip", "step": "book"}, "task_memory": [markers[1]]},
    )
    barrier(api, "victim")
    listing = api.call("GET", "/v1/memories?limit=1")
    cursor = str((listing.body or {}).get("next_cursor") or "") if listing.ok else ""
    all_ids = [str(m.get("id")) for m in api.memories("active")]
    return Victim(api, session, markers, ids + [i for i in all_ids if i not in ids], cursor)


def _fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in values.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, dict):
        return {_fill(k, values): _fill(v, values) for k, v in value.items()}
    return value


def _attacker(base: Api, victim: Victim, who: str) -> Api:
    if who == "other_tenant":
        return base.as_(f"{victim.api.tenant}-x", victim.api.user)
    if who == "same_tenant":
        return base.as_(victim.api.tenant, "bob")
    if who == "none":
        return base.as_(None, None)
    raise ValueError(f"unknown attacker {who!r}")


def send(base: Api, victim: Victim, attack: dict[str, Any]) -> tuple[str, str]:
    """Send the attack; (request text, answer text)."""
    values = victim.values()
    attack = _fill(attack, values)
    api = _attacker(base, victim, attack.get("as", "other_tenant"))
    headers = [tuple(pair) for pair in attack.get("headers", [])]
    body: Any = attack.get("body")
    if "mcp" in attack:
        body = attack["mcp"]
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    if data is not None and not any(k.lower() == "content-type" for k, _ in headers):
        headers.append(("Content-Type", "application/json"))
    method = attack.get("method", "POST" if "mcp" in attack else "GET")
    path = attack.get("path", "/v1/mcp")
    answer = api.raw(method, path, data, headers, scope=attack.get("as") != "none")
    request = json.dumps([path, headers, body], ensure_ascii=False, default=str)
    return request, answer.text


def run(base: Api, cases: list[dict[str, Any]], victim_api: Api) -> list[Outcome]:
    victim = make_victim(victim_api)
    outcomes: list[Outcome] = []
    delayed: list[tuple[Outcome, str]] = []
    before = victim.snapshot()
    for case in cases:
        outcome = Outcome(case["id"], "isolation", case.get("lang", "?"))
        request, answer = send(base, victim, case["attack"])
        leaked_ids = [i for i in victim.memory_ids if i in answer and i not in request]
        if checks.has_marker(victim.markers, [answer]) or leaked_ids:
            outcome.hits.add("through")
            outcome.detail = "victim data in the answer"
        after = victim.snapshot()
        if after != before:
            outcome.hits.add("through")
            outcome.detail = (outcome.detail + "; " if outcome.detail else "") + "victim data changed"
            before = after
        if case["attack"].get("async"):
            delayed.append((outcome, before))
        outcomes.append(outcome)
    if delayed:
        barrier(victim_api, "isolation")
        final = victim.snapshot()
        if final != before:
            for outcome, _ in delayed:
                outcome.hits.add("through")
                outcome.detail = (
                    outcome.detail + "; " if outcome.detail else ""
                ) + "victim changed after ingest"
    return outcomes
