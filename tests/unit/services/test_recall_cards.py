"""Recall scores its candidates on the search index's cards and reads from the store only what it
answers (services/reads.py): a card out of date (the projection lags) never reaches the answer."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable
from agentmem.services.recall import RecallService
from support.fake_world import T0, S, World, turn

NOW = T0 + timedelta(days=1)
FACTS = [
    "I live in Porto.",
    "My sister is a nurse in Lyon.",
    "I play the cello on Sundays.",
    "我每天早上喝一杯乌龙茶。",
    "I am allergic to peanuts.",
    "我在一家做电池的公司上班。",
    "My dog is called Biscuit.",
    "I drive a silver Honda Civic.",
    "我喜欢在周末去爬山。",
    "I'm learning Japanese for a trip to Kyoto.",
    "我的生日是五月三号。",
    "I collect vinyl records of 70s jazz.",
]


def recall_of(world: World) -> RecallService:
    """The container's recall without its read-your-writes window (every candidate is an index hit)."""
    c = world.c.recall
    return RecallService(
        store=world.store, embedder=c.embedder, scorer=c.scorer, index=world.index, graph=world.graph,
        recent_window=0,
    )  # fmt: skip


def filled(world: World) -> None:
    for number, fact in enumerate(FACTS):
        world.c.pipeline.ingest(turn(f"m{number}", fact, hours=number * 0.01))
    world.drain()


def spy_reads(world: World, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = world.store.get_many

    def get_many(scope: Scope, memory_ids: Sequence[str], **kw: Any) -> dict[str, MemoryRecord]:
        read.extend(memory_ids)
        return real(scope, memory_ids, **kw)

    monkeypatch.setattr(world.store, "get_many", get_many)
    return read


def by_content(world: World, content: str) -> MemoryRecord:
    return next(r for r in world.active() if r.content == content)


@pytest.mark.parametrize("query", ["Where do I live?", "我喝什么茶？", "what instrument do I play"])
def test_only_the_answer_is_read_from_the_store(
    world: World, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    filled(world)
    recall = recall_of(world)
    expected = [m.record for m in recall.recall(S, query, k=3, now=NOW).memories]
    read = spy_reads(world, monkeypatch)
    answer = recall.recall(S, query, k=3, now=NOW).memories
    assert [m.record for m in answer] == expected  # the same answer as reading every candidate
    assert answer and set(read) == {m.record.memory_id for m in answer}  # not the other candidates


def test_a_memory_superseded_while_the_projection_lags_is_never_returned(world: World) -> None:
    filled(world)
    home = by_content(world, "I live in Porto.")
    assert recall_of(world).recall(S, "Where do I live?", k=3, now=NOW).memories[0].record == replace_light(
        home
    )
    world.store.update(home.evolve(now=T0 + timedelta(hours=2), status=Status.SUPERSEDED), home.version)
    assert world.index.cards(S, [home.memory_id])  # the index still holds it as active
    found = recall_of(world).recall(S, "Where do I live?", k=3, now=NOW).memories
    assert home.memory_id not in {m.record.memory_id for m in found}
    assert all(m.record.is_active for m in found)


def test_a_memory_changed_while_the_projection_lags_is_answered_as_the_store_holds_it(world: World) -> None:
    filled(world)
    cello = by_content(world, "I play the cello on Sundays.")
    changed = cello.evolve(now=T0 + timedelta(hours=2), importance=0.95, access_count=4)
    world.store.update(changed, cello.version)
    found = recall_of(world).recall(S, "what instrument do I play", k=3, now=NOW).memories
    top = next(m.record for m in found if m.record.memory_id == cello.memory_id)
    assert top.version == changed.version and top.importance == 0.95  # not the card's version


@pytest.mark.parametrize("cards", ["none kept", "index down"])
def test_without_cards_the_store_answers_the_same(
    world: World, monkeypatch: pytest.MonkeyPatch, cards: str
) -> None:
    filled(world)
    expected = [m.record for m in recall_of(world).recall(S, "我喜欢做什么运动？", k=4, now=NOW).memories]

    def no_cards(scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if cards == "index down":
            raise StoreUnavailable("search index down")
        return {}

    monkeypatch.setattr(world.index, "cards", no_cards)
    result = recall_of(world).recall(S, "我喜欢做什么运动？", k=4, now=NOW)
    assert [m.record for m in result.memories] == expected and result.degraded == []


def replace_light(record: MemoryRecord) -> MemoryRecord:
    from dataclasses import replace

    return replace(record, embedding=None)
