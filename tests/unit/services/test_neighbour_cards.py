"""The neighbour pool takes the hits it needs from the index's cards
(:meth:`agentmem.services.neighbours.NeighbourPool._light`) and confirms against the store the
one memory a decision acts on (:meth:`~agentmem.services.neighbours.NeighbourPool.confirm`): a
card out of date in what the rules read makes the fact be judged again on the store's copy.

The recent window is off (``recent=0``) so every neighbour comes through the index, and the
changes below are made behind the projector's back (no ``drain``): the cards lag, as they do for
the second or so a DynamoDB stream takes.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import MemoryRecord, Status
from agentmem.services import write_pipeline
from agentmem.services.caches import NeighbourRecords
from agentmem.services.neighbours import NeighbourPool
from support.fake_world import T0, S, World, turn


@pytest.fixture(autouse=True)
def _index_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(store: Any, index: Any, cache: NeighbourRecords, calibration: Any) -> NeighbourPool:
        return NeighbourPool(store, index, cache, calibration, recent=0)

    monkeypatch.setattr(write_pipeline, "NeighbourPool", make)


def _light_reads(world: World) -> Counter[str]:
    """The ids the store is asked for without vectors (the pool's reads), from now on."""
    asked: Counter[str] = Counter()
    inner = world.store.get_many

    def spy(scope: Any, memory_ids: Any, *, embeddings: bool = True) -> dict[str, MemoryRecord]:
        if not embeddings:
            asked.update(memory_ids)
        return inner(scope, memory_ids, embeddings=embeddings)

    world.store.get_many = spy  # type: ignore[method-assign]
    return asked


def _one(world: World, text: str, hours: float = 0) -> MemoryRecord:
    world.c.pipeline.ingest(turn(f"seed-{hours}", text, hours=hours))
    world.drain()
    [record] = [r for r in world.active() if r.content.rstrip(".") == text.rstrip(".")]
    return record


@pytest.mark.parametrize("text", ["I play the cello on Sundays.", "我每周日拉大提琴。"])
def test_a_duplicate_is_judged_on_cards_and_reinforces_without_reading_the_pool(
    world: World, text: str
) -> None:
    cello = _one(world, text)
    asked = _light_reads(world)
    outcome = world.c.pipeline.ingest(turn("again", text, hours=2))
    assert outcome.reinforced == [cello.memory_id] and outcome.written == []
    assert not asked  # the hits came from cards; the one acted on was read whole (confirm)
    assert world.store.get(S, cello.memory_id).access_count == cello.access_count + 1  # type: ignore[union-attr]


def test_without_cards_the_store_answers_and_the_decision_is_the_same(world: World) -> None:
    text = "I play the cello on Sundays."
    cello = _one(world, text)
    world.index.cards = lambda scope, ids: {}  # type: ignore[method-assign]  # projected before cards
    asked = _light_reads(world)
    outcome = world.c.pipeline.ingest(turn("again", text, hours=2))
    assert outcome.reinforced == [cello.memory_id] and asked[cello.memory_id] == 1


def test_cards_that_fail_leave_the_store_to_answer(world: World) -> None:
    text = "我住在杭州。"
    home = _one(world, text)

    def down(scope: Any, ids: Any) -> dict[str, MemoryRecord]:
        raise write_pipeline.VersionConflict("not this one")  # any AgentMemError

    world.index.cards = down  # type: ignore[method-assign]
    outcome = world.c.pipeline.ingest(turn("again", text, hours=2))
    assert outcome.reinforced == [home.memory_id]


@pytest.mark.parametrize("text", ["I play the cello on Sundays.", "我每周日拉大提琴。"])
def test_a_memory_superseded_behind_a_lagging_card_is_never_reinforced(world: World, text: str) -> None:
    cello = _one(world, text)
    gone = cello.evolve(now=T0 + timedelta(hours=1), status=Status.SUPERSEDED, superseded_by="elsewhere")
    world.store.update(gone, cello.version)  # not projected: the card still shows it active
    outcome = world.c.pipeline.ingest(turn("again", text, hours=2))
    assert outcome.reinforced == [] and len(outcome.written) == 1  # judged again without it: new
    stored = world.store.get(S, cello.memory_id)
    assert stored is not None and stored.status is Status.SUPERSEDED and stored.access_count == 0


def test_a_memory_reinforced_behind_a_lagging_card_is_reinforced_again_not_doubled(world: World) -> None:
    text = "My sister is called Ana."
    sister = _one(world, text)
    bumped = sister.evolve(now=T0 + timedelta(hours=1), access_count=5, importance=0.9)
    world.store.update(bumped, sister.version)  # the card keeps the older version
    outcome = world.c.pipeline.ingest(turn("again", text, hours=2))
    assert outcome.reinforced == [sister.memory_id] and outcome.written == []
    assert world.store.get(S, sister.memory_id).access_count == 6  # type: ignore[union-attr]
    assert [r.content for r in world.active()].count(sister.content) == 1


@pytest.mark.parametrize(
    ("said", "edited"),
    [
        ("I play the cello on Sundays.", "I play the violin on Sundays."),
        ("我每周日拉大提琴。", "我每周六拉大提琴。"),
    ],
)
def test_a_memory_reworded_behind_a_lagging_card_is_judged_on_its_new_words(
    world: World, monkeypatch: pytest.MonkeyPatch, said: str, edited: str
) -> None:
    old = _one(world, said)
    vector = tuple(float(x) for x in HashEmbedder().embed_documents([edited])[0])
    world.store.update(old.evolve(now=T0 + timedelta(hours=1), content=edited, embedding=vector), old.version)
    seen: list[list[str]] = []  # what each judgement of the fact compared it with
    inner = write_pipeline.decide

    def spy(fact: Any, ranked: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append([o.content for _, o in ranked])
        return inner(fact, ranked, *args, **kwargs)

    monkeypatch.setattr(write_pipeline, "decide", spy)
    world.c.pipeline.ingest(turn("again", said, hours=2))
    assert seen[0] == [said]  # the card: the words the index last projected
    assert seen[-1] == [edited]  # judged again on the store's copy
