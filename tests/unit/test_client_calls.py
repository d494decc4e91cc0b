"""What each client operation sends (method, path, query, body built by the API's input models)
and how it reads the routes issue 13 adds (history, turn status, conflicts) from answers shaped
as their contract (/work/briefs13/contracts.md), over an ``httpx.MockTransport``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from agentmem_client import AgentMemClient, ConflictError, RetryPolicy
from agentmem_client.calls import Requests
from agentmem_client.models import ConflictOut, ConflictPage, HistoryOut, TurnStatusOut

AT = "2026-12-01T20:00:00Z"
ENTRY = {
    "memory_id": "m1",
    "content": "我住在青岛。",
    "category": "identity",
    "layer": "long_term",
    "status": "superseded",
    "valid_from": AT,
    "valid_to": "2026-12-02T08:00:00Z",
    "created_at": AT,
    "updated_at": AT,
    "supersedes": [],
    "superseded_by": "m2",
    "source": "inferred",
    "confidence": "stated",
    "pinned": False,
    "version": 2,
}
CONFLICT = {
    "conflict_id": "c1",
    "memory_id": "m1",
    "existing": "I am vegetarian.",
    "proposed": "I eat fish now.",
    "status": "pending",
    "created_at": AT,
    "resolved_at": None,
    "message_id": "msg-1",
    "new_memory_id": None,
}


def recording(answer: Any, status: int = 200) -> tuple[AgentMemClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=answer)

    client = AgentMemClient(
        "http://am.test",
        tenant_id="t1",
        user_id="u1",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(max_attempts=1),
    )
    return client, seen


def test_history_is_read_oldest_first_into_its_contract_model() -> None:
    second = {
        **ENTRY,
        "memory_id": "m2",
        "content": "我搬到上海了。",
        "status": "active",
        "supersedes": ["m1"],
    }
    second |= {"superseded_by": None, "valid_to": None, "version": 1}
    client, seen = recording({"memory_id": "m2", "entries": [ENTRY, second]})
    history = client.history("m2")
    assert isinstance(history, HistoryOut)
    assert [e.memory_id for e in history.entries] == ["m1", "m2"]
    assert history.entries[0].valid_to == datetime(2026, 12, 2, 8, tzinfo=UTC)
    assert (seen[0].method, seen[0].url.path) == ("GET", "/v1/memories/m2/history")


@pytest.mark.parametrize("state", ["queued", "processed", "rejected", "quarantined", "dead_lettered"])
def test_turn_status_reads_every_state(state: str) -> None:
    client, seen = recording(
        {"message_id": "msg-9", "status": state, "reason": None, "memory_ids": [], "updated_at": None}
    )
    status = client.turn_status("msg-9")
    assert isinstance(status, TurnStatusOut) and status.status == state
    assert seen[0].url.path == "/v1/turns/msg-9"


def test_conflicts_list_with_filters_and_resolve_sends_the_decision() -> None:
    client, seen = recording({"conflicts": [CONFLICT], "next_cursor": "abc"})
    page = client.conflicts(status="pending", limit=10, cursor="xyz")
    assert isinstance(page, ConflictPage) and page.conflicts[0].proposed == "I eat fish now."
    assert dict(seen[0].url.params) == {"status": "pending", "limit": "10", "cursor": "xyz"}
    resolved = {**CONFLICT, "status": "confirmed", "resolved_at": AT, "new_memory_id": "m3"}
    client, seen = recording(resolved)
    out = client.resolve_conflict("c1", "confirm")
    assert isinstance(out, ConflictOut) and out.status == "confirmed" and out.new_memory_id == "m3"
    assert (seen[0].method, seen[0].url.path, json.loads(seen[0].content)) == (
        "POST",
        "/v1/conflicts/c1",
        {"decision": "confirm"},
    )
    with pytest.raises(ValueError):
        client.resolve_conflict("c1", "maybe")  # type: ignore[arg-type]


def test_an_already_resolved_conflict_is_a_conflict_error() -> None:
    client, _ = recording({"error": "conflict_resolved", "message": "already confirmed"}, status=409)
    with pytest.raises(ConflictError) as exc:
        client.resolve_conflict("c1", "reject")
    assert exc.value.error == "conflict_resolved"


def test_what_each_call_sends() -> None:
    r = Requests("http://am.test", tenant_id="t1", user_id="u1")
    at = datetime(2026, 12, 1, 20, tzinfo=UTC)
    recall = r.recall("咖啡", k=3, categories=["preference"], as_of=at)
    assert (recall.method, recall.path) == ("POST", "/v1/recall")
    assert json.loads(recall.body or b"") == {
        "query": "咖啡",
        "k": 3,
        "categories": ["preference"],
        "as_of": "2026-12-01T20:00:00Z",
    }
    assert "咖啡".encode() in (recall.body or b"")  # UTF-8 as is, not \\u escapes
    context = r.context("What do I like?", mode="rag", session_id="s1")
    assert json.loads(context.body or b"") == {"query": "What do I like?", "mode": "rag", "session_id": "s1"}
    patch = r.patch_memory("m1", pinned=False, expected_version=3)
    assert json.loads(patch.body or b"") == {"pinned": False, "expected_version": 3}
    assert not patch.idempotent
    assert r.delete_memory("m1", hard=True).params == {"hard": "true"}
    assert r.delete_memory("m1").params == {}
    listing = r.list_memories(status="superseded", category="fact", cursor="c")
    assert listing.params == {"status": "superseded", "limit": "50", "category": "fact", "cursor": "c"}
    assert r.erase_user().path == "/v1/users/u1"
    assert r.audit(action="deleted").params == {"limit": "100", "action": "deleted"}
    with pytest.raises(ValueError):
        Requests("http://am.test").erase_user()  # no user configured, none given
    with pytest.raises(ValueError):
        r.get_memory("")
    with pytest.raises(ValueError):
        Requests("am.test")  # not a URL


def test_many_turns_go_in_one_call_and_each_gets_its_own_id() -> None:
    r = Requests("http://am.test")
    call = r.add_turns([{"session_id": "s1", "user": f"turn {i} 第{i}轮"} for i in range(5)])
    sent = json.loads(call.body or b"")["turns"]
    assert len({t["message_id"] for t in sent}) == 5
    assert call.idempotent
    with pytest.raises(ValueError):
        r.add_turns([{"session_id": "s1", "user": "x"}] * 101)  # TurnsIn: at most 100 per call
