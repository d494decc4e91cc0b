"""The profile and constraints slots are listed from the search index's cards and confirmed from
the store for what they show (services/slot_listings.py): a card out of date (the projection lags)
is never shown, a memory not projected yet is, and the store lists when the index cannot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from agentmem.domain.context import Mode
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable
from agentmem.services.context import ContextResult
from agentmem.services.reads import ReadSession
from agentmem.services.slot_listings import CONFIRM_ROUNDS
from support.fake_world import T0, S, World, turn

NOW = T0 + timedelta(days=1)
FACTS = [
    "I live in Porto.",
    "My sister is a nurse in Lyon.",
    "我每天早上喝一杯乌龙茶。",
    "I am allergic to peanuts.",
    "我在一家做电池的公司上班。",
    "My dog is called Biscuit.",
    "我喜欢在周末去爬山。",
    "I'm learning Japanese for a trip to Kyoto.",
]
QUERIES = ["帮我写一段自我介绍", "Plan a weekend for me", "What should I cook tonight?"]


def filled(world: World, *, window: int = 0, recall_k: int = 1) -> None:
    """The facts ingested and projected; recall's read-your-writes window set to ``window`` and
    its answer to ``recall_k`` memories (so the listed memories are known from their cards until
    the slots confirm them: recall reads what it answers)."""
    for number, fact in enumerate(FACTS):
        world.c.pipeline.ingest(turn(f"m{number}", fact, hours=number * 0.01))
    world.drain()
    world.c.recall.recent_window = window
    world.c.context.recall_k = recall_k


def build(world: World, query: str = QUERIES[0], mode: Mode = Mode.CHAT) -> ContextResult:
    return world.c.context.build(S, query, mode=mode, now=NOW)


def slot(result: ContextResult, name: str) -> list[str]:
    return next(([i.text for i in s.items] for s in result.context.slots if s.name.value == name), [])


def by_content(world: World, content: str) -> MemoryRecord:
    return next(r for r in world.active() if r.content == content)


def spy(world: World, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    calls: dict[str, list[Any]] = {"get_many": [], "list": []}
    get_many, listing = world.store.get_many, world.store.list

    def spied_get_many(scope: Scope, memory_ids: Sequence[str], **kw: Any) -> dict[str, MemoryRecord]:
        calls["get_many"].append(list(memory_ids))
        return get_many(scope, memory_ids, **kw)

    def spied_list(scope: Scope, **kw: Any) -> Any:
        calls["list"].append(kw.get("category"))
        return listing(scope, **kw)

    monkeypatch.setattr(world.store, "get_many", spied_get_many)
    monkeypatch.setattr(world.store, "list", spied_list)
    return calls


@pytest.mark.parametrize("query", QUERIES)
def test_the_slots_are_listed_from_the_index_and_only_what_is_shown_is_read(
    world: World, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    filled(world)
    from_store = replace(world.c.context, index=None)
    expected = from_store.build(S, query, mode=Mode.CHAT, now=NOW).context.text
    answer = {m.record.memory_id for m in world.c.recall.recall(S, query, k=1, now=NOW).memories}
    calls = spy(world, monkeypatch)
    result = build(world, query)
    assert result.context.text == expected  # the same context as listing the store
    assert calls["list"] == []  # no listing of the store
    read = {m for batch in calls["get_many"] for m in batch}
    shown = set(result.context.used_memory_ids)
    assert shown and shown <= read  # every memory shown was confirmed from the store
    assert read <= shown | answer  # recall reads what it answers, the slots what they show


def test_a_profile_memory_superseded_while_the_projection_lags_is_never_shown(world: World) -> None:
    filled(world)
    porto = by_content(world, "I live in Porto.")
    assert "I live in Porto." in slot(build(world), "profile")
    world.store.update(porto.evolve(now=T0 + timedelta(hours=2), status=Status.SUPERSEDED), porto.version)
    assert world.index.cards(S, [porto.memory_id])  # the index still lists it as active
    result = build(world)
    assert "I live in Porto." not in result.context.text
    assert porto.memory_id not in result.context.used_memory_ids
    assert "我在一家做电池的公司上班。" in slot(result, "profile")  # the rest of the slot stands


def test_a_profile_memory_edited_while_the_projection_lags_is_shown_as_the_store_holds_it(
    world: World,
) -> None:
    filled(world)
    work = by_content(world, "我在一家做电池的公司上班。")
    world.store.update(
        work.evolve(now=T0 + timedelta(hours=2), content="我在一家做储能的公司上班。"), work.version
    )
    profile = slot(build(world), "profile")
    assert "我在一家做储能的公司上班。" in profile and "我在一家做电池的公司上班。" not in profile


def test_a_memory_the_projection_does_not_hold_yet_is_listed(world: World) -> None:
    filled(world, window=20)
    world.c.pipeline.ingest(turn("m-new", "I moved to Lisbon last month.", hours=1))  # not drained
    lisbon = by_content(world, "I moved to Lisbon last month.")
    assert not world.index.cards(S, [lisbon.memory_id])
    if lisbon.category in (Category.IDENTITY, Category.PREFERENCE):
        assert "I moved to Lisbon last month." in slot(build(world, "Where do I live now?"), "profile")
    assert "I moved to Lisbon last month." in build(world, "Where do I live now?").context.text


def test_an_authorised_policy_is_confirmed_before_it_is_a_constraint(world: World) -> None:
    filled(world)
    record, _ = world.c.explicit.write(
        S, "报告都用简体中文", now=T0, category=Category.POLICY, request_id="r-op", may_write_policy=True
    )
    assert record is not None
    world.drain()
    assert slot(build(world, "写一份周报", Mode.REACT), "constraints") == ["报告都用简体中文"]
    world.store.hard_delete(S, record.memory_id)  # an operator removed it; the projection lags
    assert world.index.cards(S, [record.memory_id])
    assert slot(build(world, "写一份周报", Mode.REACT), "constraints") == []


@pytest.mark.parametrize("fails", ["index down", "no cards"])
def test_the_store_lists_when_the_index_cannot(
    world: World, monkeypatch: pytest.MonkeyPatch, fails: str
) -> None:
    filled(world)
    expected = build(world).context.text

    def listing(scope: Scope, category: str, limit: int) -> list[MemoryRecord] | None:
        if fails == "index down":
            raise StoreUnavailable("search index down")
        return None

    monkeypatch.setattr(world.index, "listing", listing)
    calls = spy(world, monkeypatch)
    result = build(world)
    assert result.context.text == expected and result.degraded == []
    assert sorted(calls["list"]) == ["identity", "policy", "preference"]


def test_a_time_travel_context_lists_the_store(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    filled(world)
    calls = spy(world, monkeypatch)
    world.c.context.build(S, QUERIES[0], mode=Mode.CHAT, now=NOW, as_of=NOW)
    assert "identity" in calls["list"]  # the index holds no superseded memories


def test_a_projection_far_behind_makes_the_store_list(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every confirmation finds the cards out of date: after CONFIRM_ROUNDS the store lists."""
    filled(world)
    expected = replace(world.c.context, index=None).build(S, QUERIES[0], mode=Mode.CHAT, now=NOW).context.text
    stale = {r.memory_id: replace(r, version=r.version + 1) for r in world.active()}
    real = world.index.listing

    def lagging(scope: Scope, category: str, limit: int) -> list[MemoryRecord] | None:
        listed = real(scope, category, limit)
        return None if listed is None else [stale.get(r.memory_id, r) for r in listed]

    monkeypatch.setattr(world.index, "listing", lagging)
    confirms: list[bool] = []
    confirm = ReadSession.confirm

    def counted(self: ReadSession, memory_ids: Any, **kw: Any) -> set[str]:
        ids = list(memory_ids)
        listed = {m for m in self.unread(ids) if m in stale}  # shown from a lagging listing card
        found = confirm(self, ids, **kw)
        if listed:
            confirms.append(not listed & found)
        return found

    monkeypatch.setattr(ReadSession, "confirm", counted)
    assert build(world).context.text == expected
    # every card shown was out of date
    assert confirms and not any(confirms) and len(confirms) <= CONFIRM_ROUNDS
    from agentmem.services import context as context_module

    monkeypatch.setattr(context_module, "CONFIRM_ROUNDS", 1)  # the last round: the store answers
    calls = spy(world, monkeypatch)
    assert build(world).context.text == expected
    assert sorted(calls["list"]) == ["identity", "policy", "preference"]
