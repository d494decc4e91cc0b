"""Time travel, history, confirmation before overwriting what is permanent, and the expired
lifecycle, through the HTTP API (the api λ with API Gateway events, on the local adapters).

"Where did I live in January?" after a move in March answers with the old city when asked with
``as_of`` in January and with the new one without; a turn contradicting a permanent or pinned
memory waits for the user's confirmation (hint in the context in the user's language, confirm,
reject, 404/409); a short-term memory past its TTL is expired and stays out of the context unless
the query is about it. Both languages throughout."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentmem.bootstrap import Container
from agentmem.clock import ManualClock
from agentmem.domain.models import Category, Confidence, Layer, MemoryRecord, Scope, Status
from agentmem_dev.emulator.runner import LocalRunner

S = Scope("t1", "u1")
JAN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MARCH = datetime(2026, 3, 6, 9, 0, tzinfo=UTC)
LATE_JAN = "2026-01-25T09:00:00Z"
APRIL = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)

MOVES = {
    "en": ("I live in Berlin.", "I moved to Lisbon.", "Where did I live?", "Berlin", "Lisbon"),
    "zh": ("我住在北京。", "我搬到上海了。", "我住在哪里？", "北京", "上海"),
}


def send(api: Any, runner: LocalRunner, message_id: str, user: str, at: datetime) -> None:
    body = {"turns": [{"session_id": "s1", "user": user, "message_id": message_id, "at": at.isoformat()}]}
    status, _ = api("POST", "/v1/turns", body)
    assert status == 202
    runner.drain()


def recalled(api: Any, query: str, **extra: Any) -> list[dict[str, Any]]:
    status, body = api("POST", "/v1/recall", {"query": query, "k": 5, **extra})
    assert status == 200, body
    return list(body["memories"])


def context(api: Any, query: str, **extra: Any) -> str:
    status, body = api("POST", "/v1/context", {"query": query, **extra})
    assert status == 200, body
    return str(body["context"])


def memory_id(api: Any, content: str, status: str = "active") -> str:
    _, body = api("GET", "/v1/memories", query={"status": status})
    return next(m["id"] for m in body["memories"] if m["content"] == content)


def moved(api: Any, runner: LocalRunner, clock: ManualClock, lang: str) -> tuple[str, str]:
    old, new, *_ = MOVES[lang]
    clock.set(JAN)
    send(api, runner, "m-old", old, JAN)
    clock.set(MARCH)
    send(api, runner, "m-new", new, MARCH)
    clock.set(APRIL)
    return memory_id(api, old, "superseded"), memory_id(api, new)


# ---------------------------------------------------------------------------- time travel


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_as_of_answers_with_what_was_true_then(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str
) -> None:
    old, new, question, old_city, new_city = MOVES[lang]
    moved(api, runner, clock, lang)

    now = [m["content"] for m in recalled(api, question)]
    assert new in now and old not in now
    then = recalled(api, question, as_of=LATE_JAN)
    assert [m["content"] for m in then] == [old]
    assert then[0]["status"] == "superseded" and "history" in then[0]["channels"]
    assert then[0]["valid_to"] == "2026-03-06T09:00:00Z"
    # before anything was said, nothing; after the move, the new city only
    assert recalled(api, question, as_of="2026-01-01T00:00:00Z") == []
    assert [m["content"] for m in recalled(api, question, as_of="2026-03-20T00:00:00Z")] == [new]

    assert old_city in context(api, question, as_of=LATE_JAN)
    assert new_city not in context(api, question, as_of=LATE_JAN)
    present = context(api, question)
    assert new_city in present and old_city not in present


def test_as_of_at_the_boundary_belongs_to_the_new_value(
    api: Any, runner: LocalRunner, clock: ManualClock
) -> None:
    """valid_from <= t < valid_to: at the very time of the move the new value holds."""
    old, new, question, *_ = MOVES["en"]
    moved(api, runner, clock, "en")
    assert [m["content"] for m in recalled(api, question, as_of="2026-03-06T09:00:00Z")] == [new]
    just_before = "2026-03-06T08:59:59Z"
    assert [m["content"] for m in recalled(api, question, as_of=just_before)] == [old]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_late_older_turn_goes_into_the_history_not_over_the_newer_value(
    api: Any, runner: LocalRunner, clock: ManualClock, container: Container, lang: str
) -> None:
    """SQS does not keep order: the January statement arriving after the March one is history."""
    old, new, question, *_ = MOVES[lang]
    clock.set(APRIL)
    send(api, runner, "m-new", new, MARCH)
    send(api, runner, "m-old", old, JAN)
    assert [m["content"] for m in recalled(api, question)] == [new]
    assert [m["content"] for m in recalled(api, question, as_of=LATE_JAN)] == [old]
    old_id, new_id = memory_id(api, old, "superseded"), memory_id(api, new)
    entries = api("GET", f"/v1/memories/{new_id}/history")[1]["entries"]
    assert [e["memory_id"] for e in entries] == [old_id, new_id]
    assert entries[0]["valid_to"] == entries[1]["valid_from"] == "2026-03-06T09:00:00Z"
    stored = container.store.list(S, statuses=tuple(Status)).items
    assert stored and all(r.content_hash == r.compute_hash() for r in stored)  # the late one's too


def test_as_of_leaves_out_deleted_memories(api: Any, runner: LocalRunner, clock: ManualClock) -> None:
    clock.set(JAN)
    send(api, runner, "m1", "I keep bees in my garden.", JAN)
    clock.set(MARCH)
    assert api("DELETE", f"/v1/memories/{memory_id(api, 'I keep bees in my garden.')}")[0] == 200
    assert recalled(api, "bees in my garden", as_of=LATE_JAN) == []


@pytest.mark.parametrize("as_of", ["not a time", "1900-01-01T00:00:00Z", "2026-13-01T00:00:00Z", [1]])
def test_a_bad_as_of_is_a_4xx(api: Any, as_of: Any) -> None:
    for path in ("/v1/recall", "/v1/context"):
        status, body = api("POST", path, {"query": "where", "as_of": as_of})
        assert status == 422 and body["error"], (path, body)


# ---------------------------------------------------------------------------- history


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_history_is_the_supersede_chain_oldest_first(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str
) -> None:
    old_id, new_id = moved(api, runner, clock, lang)
    for asked in (old_id, new_id):
        status, body = api("GET", f"/v1/memories/{asked}/history")
        assert status == 200 and body["memory_id"] == asked
        entries = body["entries"]
        assert [e["memory_id"] for e in entries] == [old_id, new_id]
        assert entries[0]["status"] == "superseded" and entries[0]["superseded_by"] == new_id
        assert entries[0]["valid_to"] == entries[1]["valid_from"] == "2026-03-06T09:00:00Z"
        assert entries[1]["supersedes"] == [old_id] and entries[1]["valid_to"] is None
        assert entries[0]["content"] == MOVES[lang][0] and entries[1]["content"] == MOVES[lang][1]
        assert {"category", "layer", "source", "confidence", "pinned", "version", "created_at"} <= set(
            entries[0]
        )


def test_history_of_an_unchanged_memory_is_itself(api: Any, runner: LocalRunner) -> None:
    send(api, runner, "m1", "I keep bees in my garden.", JAN)
    mid = memory_id(api, "I keep bees in my garden.")
    status, body = api("GET", f"/v1/memories/{mid}/history")
    assert status == 200 and [e["memory_id"] for e in body["entries"]] == [mid]


def test_history_is_404_for_unknown_and_other_users_memories(
    api: Any, runner: LocalRunner, container: Container
) -> None:
    send(api, runner, "m1", "I keep bees in my garden.", JAN)
    mid = memory_id(api, "I keep bees in my garden.")
    assert api("GET", "/v1/memories/01NOPE/history")[0] == 404
    other = type(api)(container, user="u2")
    status, body = other("GET", f"/v1/memories/{mid}/history")
    assert status == 404 and body["error"] == "not_found"


# ---------------------------------------------------------------------------- pending conflicts

HINTS = {
    "en": "Earlier you said “I live in Berlin.”; now “I moved to Lisbon.” — should I update it?",
    "zh": "你之前说过“我住在北京。”，现在说“我搬到上海了。”——要更新吗？",
}


def protect(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str, how: str
) -> tuple[str, dict[str, Any]]:
    """The old statement made permanent (or pinned), then the contradicting turn; the conflict."""
    old, new, *_ = MOVES[lang]
    clock.set(JAN)
    send(api, runner, "m-old", old, JAN)
    mid = memory_id(api, old)
    privileged = type(api)(api.container, permissions="memory:read,memory:write,memory:permanent")
    if how == "permanent":
        assert privileged("POST", f"/v1/memories/{mid}/permanent")[0] == 200
    else:
        assert api("PATCH", f"/v1/memories/{mid}", {"pinned": True})[0] == 200
    clock.set(MARCH)
    send(api, runner, "m-new", new, MARCH)
    status, body = api("GET", "/v1/conflicts", query={"status": "pending"})
    assert status == 200 and len(body["conflicts"]) == 1, body
    return mid, body["conflicts"][0]


@pytest.mark.parametrize("how", ["permanent", "pinned"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_contradicting_a_protected_memory_waits_for_confirmation(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str, how: str
) -> None:
    old, new, question, *_ = MOVES[lang]
    mid, conflict = protect(api, runner, clock, lang, how)
    assert conflict["memory_id"] == mid and conflict["existing"] == old and conflict["proposed"] == new
    assert conflict["status"] == "pending" and conflict["resolved_at"] is None
    assert conflict["message_id"] == "m-new" and conflict["new_memory_id"]
    # not superseded, and the proposal is not a memory: never recalled or injected as truth
    status, stored = api("GET", f"/v1/memories/{mid}")
    assert status == 200 and stored["status"] == "active"
    assert [m["content"] for m in recalled(api, question)] == [old]
    assert api("GET", f"/v1/memories/{conflict['new_memory_id']}")[0] == 404
    text = context(api, question)
    assert HINTS[lang] in text
    assert text.index(HINTS[lang]) < text.index(f"“{old}”", text.index(HINTS[lang]) + len(HINTS[lang]))
    # a redelivery of the turn raises nothing new
    runner.container.turn_log.forget_turn(S, "m-new")
    send(api, runner, "m-new", new, MARCH)
    assert len(api("GET", "/v1/conflicts")[1]["conflicts"]) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_confirm_supersedes_now_and_is_audited(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str
) -> None:
    old, new, question, *_ = MOVES[lang]
    mid, conflict = protect(api, runner, clock, lang, "permanent")
    clock.set(APRIL)
    status, body = api("POST", f"/v1/conflicts/{conflict['conflict_id']}", {"decision": "confirm"})
    assert status == 200 and body["status"] == "confirmed"
    assert body["resolved_at"] == "2026-04-01T09:00:00Z"
    runner.drain()
    assert api("GET", f"/v1/memories/{mid}")[1]["status"] == "superseded"
    status, created = api("GET", f"/v1/memories/{conflict['new_memory_id']}")
    assert status == 200 and created["content"] == new and created["layer"] == "permanent"
    assert created["supersedes"] == [mid]
    assert [m["content"] for m in recalled(api, question)] == [new]
    assert HINTS[lang] not in context(api, question)
    # the timeline: the old value until the user said it changed
    entries = api("GET", f"/v1/memories/{mid}/history")[1]["entries"]
    assert [e["memory_id"] for e in entries] == [mid, conflict["new_memory_id"]]
    assert [m["content"] for m in recalled(api, question, as_of=LATE_JAN)] == [old]
    actions = [e["action"] for e in api("GET", "/v1/audit")[1]["events"]]
    assert {"conflict_pending", "conflict_confirmed", "superseded"} <= set(actions)
    # once resolved, a second answer is a 409
    again = api("POST", f"/v1/conflicts/{conflict['conflict_id']}", {"decision": "reject"})
    assert again[0] == 409 and again[1]["error"] == "version_conflict"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reject_drops_the_proposal_and_is_audited(
    api: Any, runner: LocalRunner, clock: ManualClock, lang: str
) -> None:
    question = MOVES[lang][2]
    mid, conflict = protect(api, runner, clock, lang, "pinned")
    status, body = api("POST", f"/v1/conflicts/{conflict['conflict_id']}", {"decision": "reject"})
    assert status == 200 and body["status"] == "rejected"
    assert api("GET", f"/v1/memories/{mid}")[1]["status"] == "active"
    assert api("GET", f"/v1/memories/{conflict['new_memory_id']}")[0] == 404
    assert HINTS[lang] not in context(api, question)
    assert api("GET", "/v1/conflicts", query={"status": "pending"})[1]["conflicts"] == []
    assert [
        c["status"] for c in api("GET", "/v1/conflicts", query={"status": "rejected"})[1]["conflicts"]
    ] == ["rejected"]
    assert "conflict_rejected" in [e["action"] for e in api("GET", "/v1/audit")[1]["events"]]
    assert api("POST", f"/v1/conflicts/{conflict['conflict_id']}", {"decision": "confirm"})[0] == 409


def test_no_question_about_a_memory_deleted_since(api: Any, runner: LocalRunner, clock: ManualClock) -> None:
    mid, _ = protect(api, runner, clock, "en", "pinned")
    assert HINTS["en"] in context(api, MOVES["en"][2])
    assert api("DELETE", f"/v1/memories/{mid}")[0] == 200
    assert HINTS["en"] not in context(api, MOVES["en"][2])


def test_conflict_routes_refuse_bad_input(
    api: Any, runner: LocalRunner, clock: ManualClock, container: Container
) -> None:
    _, conflict = protect(api, runner, clock, "en", "pinned")
    path = f"/v1/conflicts/{conflict['conflict_id']}"
    assert api("POST", "/v1/conflicts/cf_unknown", {"decision": "confirm"})[0] == 404
    assert api("POST", path, {"decision": "maybe"})[0] == 422
    assert api("POST", path, {"decision": "confirm", "extra": 1})[0] == 422
    assert api("GET", "/v1/conflicts", query={"status": "open"})[0] == 422
    assert api("GET", "/v1/conflicts", query={"cursor": "%%%"})[0] == 400
    # another user sees none of them and cannot resolve them
    other = type(api)(container, user="u2")
    assert other("GET", "/v1/conflicts")[1]["conflicts"] == []
    assert other("POST", path, {"decision": "confirm"})[0] == 404
    reader = type(api)(container, permissions="memory:read")
    assert reader("POST", path, {"decision": "confirm"})[0] == 403


def test_conflicts_page_newest_first(api: Any, runner: LocalRunner, clock: ManualClock) -> None:
    pairs = [
        ("I live in Berlin.", "I moved to Lisbon."),
        ("I work at Siemens.", "I joined Bosch."),
        ("I drive a Volvo.", "I sold the Volvo and bought a Tesla."),
    ]
    for i, (old, _) in enumerate(pairs):
        send(api, runner, f"old-{i}", old, JAN + timedelta(hours=i))
        assert api("PATCH", f"/v1/memories/{memory_id(api, old)}", {"pinned": True})[0] == 200
    for i, (_, new) in enumerate(pairs):
        send(api, runner, f"new-{i}", new, MARCH + timedelta(hours=i))
    _, everything = api("GET", "/v1/conflicts")
    raised = everything["conflicts"]
    assert len(raised) >= 2  # the rules find at least the residence and the employer
    assert [c["created_at"] for c in raised] == sorted((c["created_at"] for c in raised), reverse=True)
    seen: list[str] = []
    cursor: str | None = None
    while True:
        _, page = api("GET", "/v1/conflicts", query={"limit": "1", **({"cursor": cursor} if cursor else {})})
        seen += [c["conflict_id"] for c in page["conflicts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [c["conflict_id"] for c in raised]


def test_erasing_the_user_erases_their_conflicts(
    api: Any, runner: LocalRunner, clock: ManualClock, container: Container
) -> None:
    protect(api, runner, clock, "zh", "pinned")
    assert api("DELETE", "/v1/users/u1")[0] == 200
    assert api("GET", "/v1/conflicts")[1]["conflicts"] == []
    assert container.conflicts.conflicts.list(S)[0] == []


# ---------------------------------------------------------------------------- expired


def short_term(container: Container, runner: LocalRunner, content: str, category: Category) -> MemoryRecord:
    vector = container.embedder.embed_documents([content])[0]
    record = MemoryRecord(
        scope=S,
        memory_id=f"01KSHORT{abs(hash(content)) % 10**10:010d}",
        content=content,
        category=category,
        layer=Layer.SHORT_TERM,
        importance=0.6,
        embedding=tuple(float(x) for x in vector),
        embedding_model=container.embedder.model_id,
        created_at=JAN,
        updated_at=JAN,
        valid_from=JAN,
    )
    container.store.create(record)
    runner.drain()
    return record


EXPIRING = {
    "en": ("This week I prefer answers in bullet points.", "bullet points answers", "What is my name?"),
    "zh": ("这周我想用要点列表的格式回答。", "要点列表的格式", "我叫什么名字？"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_short_term_memories_expire_after_their_ttl_and_stay_out_unless_asked_about(
    api: Any, runner: LocalRunner, clock: ManualClock, container: Container, lang: str
) -> None:
    content, about, unrelated = EXPIRING[lang]
    record = short_term(container, runner, content, Category.PREFERENCE)
    assert content in context(api, unrelated)  # fresh: a preference shows in the profile

    within = container.consolidation.consolidate(S, now=JAN + timedelta(days=6))
    assert within.expired == 0
    assert api("GET", f"/v1/memories/{record.memory_id}")[1]["confidence"] == "confirmed"

    clock.set(JAN + timedelta(days=8))
    report = container.consolidation.consolidate(S, now=clock.now())
    assert report.expired == 1
    status, stored = api("GET", f"/v1/memories/{record.memory_id}")
    assert status == 200 and stored["confidence"] == "expired" and stored["status"] == "active"
    assert "expired" in [e["action"] for e in api("GET", "/v1/audit")[1]["events"]]
    assert content not in context(api, unrelated)
    asked = context(api, about)
    label = "(expired) " if lang == "en" else "（已过期）"
    assert label + content in asked
    # marked once: a later run leaves it as it is (until eviction)
    assert container.consolidation.consolidate(S, now=clock.now()).expired == 0
    assert container.store.get(S, record.memory_id).confidence is Confidence.EXPIRED  # type: ignore[union-attr]


def test_only_short_term_memories_expire(api: Any, runner: LocalRunner, container: Container) -> None:
    send(api, runner, "m1", "I keep bees in my garden.", JAN)
    report = container.consolidation.consolidate(S, now=JAN + timedelta(days=20))
    assert report.expired == 0
    assert all(m["confidence"] != "expired" for m in api("GET", "/v1/memories")[1]["memories"]), (
        "long-term memories decay and may be evicted, never expire"
    )
    assert container.store.list(S, statuses=(Status.ACTIVE,)).items


def test_the_openapi_document_has_the_new_routes_and_fields(api: Any) -> None:
    _, doc = api("GET", "/v1/openapi.json")
    assert "get" in doc["paths"]["/v1/memories/{memory_id}/history"]
    assert "get" in doc["paths"]["/v1/conflicts"]
    assert "post" in doc["paths"]["/v1/conflicts/{conflict_id}"]
    assert {"404", "409"} <= set(doc["paths"]["/v1/conflicts/{conflict_id}"]["post"]["responses"])
    schemas = doc["components"]["schemas"]
    assert "as_of" in schemas["RecallIn"]["properties"] and "as_of" in schemas["ContextIn"]["properties"]
    assert {"conflict_id", "memory_id", "existing", "proposed", "status", "new_memory_id"} <= set(
        schemas["ConflictOut"]["properties"]
    )
    assert {"memory_id", "entries"} <= set(schemas["HistoryOut"]["properties"])
