"""The neighbour pool of the write path (:mod:`agentmem.services.neighbours`): dedup and conflicts
find their old memory through the search index however many newer memories a user holds, a
same-key memory through the key, an unprojected write through the recent window; the store is
not walked for it; a search index outage falls back to the newest memories."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import MemoryRecord, Source, Status
from agentmem.services.neighbours import RECENT, NeighbourPool
from agentmem.services.outcome import TurnStatus
from support.fake_world import T0, S, World, store_memories, turn

FILLER = 250  # more than the 200 newest the write path used to decode every turn


def _fill(world: World, count: int, *, start_hours: float, chinese: bool = False) -> None:
    """``count`` unrelated memories, newer than everything before, projected."""
    texts = [f"Reminder {n}: order {n * 7 % 13} boxes of staples for room {n}" for n in range(count)]
    if chinese:  # nearer a Chinese fact than any English memory is, by k-NN and by BM25
        texts = [f"我记得{n}号会议室的投影仪到了{n * 7 % 13}楼了。" for n in range(count)]
    store_memories(world, texts, [T0 + timedelta(hours=start_hours, seconds=n) for n in range(count)])


def _scan_limits(world: World) -> list[int]:
    """Record the ``limit`` of every ``scan_active`` call the services make from now on."""
    limits: list[int] = []
    inner = world.store.scan_active

    def spy(scope: Any, limit: int, **kwargs: Any) -> list[MemoryRecord]:
        limits.append(limit)
        return inner(scope, limit, **kwargs)

    world.store.scan_active = spy  # type: ignore[method-assign]
    return limits


def test_a_changed_fact_supersedes_its_old_memory_behind_hundreds_of_newer_ones(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    _fill(world, FILLER, start_hours=1)
    limits = _scan_limits(world)
    outcome = world.c.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=2))
    [old] = [r for r in world.records(S, Status.SUPERSEDED)]
    assert old.content == "I live in Porto." and outcome.superseded == [old.memory_id]
    assert limits and max(limits) <= RECENT  # the store is not walked for neighbours


def test_a_repeated_fact_behind_hundreds_of_newer_ones_reinforces_it(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I play the cello on Sundays."))
    world.drain()
    first = world.active()[0]
    _fill(world, FILLER, start_hours=1)
    outcome = world.c.pipeline.ingest(turn("m2", "I play the cello on Sundays.", hours=2))
    assert outcome.written == [] and outcome.reinforced == [first.memory_id]


def test_an_unprojected_write_is_still_a_neighbour(world: World) -> None:
    """Read-your-writes: the projector has not indexed the first turn yet."""
    world.c.pipeline.ingest(turn("m1", "I play the cello."))
    assert world.index.all_states(S) == []
    outcome = world.c.pipeline.ingest(turn("m2", "I play the cello.", hours=1))
    assert outcome.reinforced == [world.active()[0].memory_id]


def test_a_same_key_memory_worded_apart_is_found_by_its_key(world: World) -> None:
    pool = NeighbourPool(world.store, world.index, recent=0)
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    _fill(world, 30, start_hours=1)
    [porto] = world.store.find_by_key(S, "residence")
    fact = Candidate(
        content="Home these days: Reykjavik", source=Source.USER, importance=0.7, key="residence"
    )
    far = np.zeros((1, HashEmbedder().dimension), dtype=np.float32)
    far[0, 0] = 1.0  # a vector that resembles nothing stored
    found = pool.gather(S, [fact], far, HashEmbedder().model_id)
    assert porto.memory_id in [r.memory_id for r in found]


def test_the_pool_is_active_only_and_newest_first(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    world.c.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))
    world.drain()
    embedder = HashEmbedder()
    facts = [Candidate(content="I live in Lisbon.", source=Source.USER, importance=0.7, key="residence")]
    found = NeighbourPool(world.store, world.index, recent=0).gather(
        S, facts, embedder.embed_documents([facts[0].content]), embedder.model_id
    )
    assert found and all(r.is_active for r in found)
    assert [r.memory_id for r in found] == sorted((r.memory_id for r in found), reverse=True)
    assert "I live in Porto." not in [r.content for r in found]


def test_a_search_index_outage_falls_back_to_the_newest_memories(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    world.index.down = True
    limits = _scan_limits(world)
    outcome = world.c.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))
    assert outcome.status is TurnStatus.ACCEPTED and len(outcome.superseded) == 1
    assert max(limits) > RECENT  # the bounded fallback


def test_an_update_in_another_language_meets_the_old_value_behind_hundreds_of_newer_ones(
    world: World,
) -> None:
    """No word in common, no similar vector, no key, 250 newer memories nearer the fact by k-NN:
    the attribute the index keeps finds it, and the write path supersedes it."""
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    _fill(world, FILLER, start_hours=1, chinese=True)
    [porto] = [r for r in world.active() if r.content == "I live in Porto."]
    embedder = HashEmbedder()
    fact = Candidate(content="我搬到雷克雅未克了。", source=Source.USER, importance=0.7)  # no key
    vector = embedder.embed_documents([fact.content])
    assert porto.memory_id not in [h.memory_id for h in world.index.knn(S, vector[0], 10, embedder.model_id)]
    pool = NeighbourPool(world.store, world.index, recent=0)
    assert porto.memory_id in [r.memory_id for r in pool.gather(S, [fact], vector, embedder.model_id)]
    outcome = world.c.pipeline.ingest(turn("m2", "我搬到雷克雅未克了。", hours=2))
    [old] = world.records(S, Status.SUPERSEDED)
    assert old.memory_id == porto.memory_id and outcome.superseded == [porto.memory_id]
