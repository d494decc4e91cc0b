"""The neighbour pool reads no vectors (:mod:`agentmem.services.neighbours`): the neighbours come
without them, their similarity to a new fact from the search index (the same cosine as their own
vectors give); only a neighbour the index does not hold yet, and the one a turn writes back, are
read whole: the unprojected ones through the :class:`~agentmem.services.caches.NeighbourRecords`
(a record served only while it is the store's current version), the written-back one from the
store, so a write never starts from a stale copy."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import MemoryRecord, Source, Status
from agentmem.errors import VersionConflict
from agentmem.messages import TurnMessage
from agentmem.services.caches import NeighbourRecords
from agentmem.services.neighbours import NeighbourPool
from agentmem.services.outcome import TurnStatus
from support.fake_world import T0, S, World, turn

EMBEDDER = HashEmbedder()
TEXTS = ["我住在上海。", "I play the cello on Sundays.", "我喜欢喝乌龙茶。", "My sister is called Ana."]


def _vector_reads(world: World) -> Counter[str]:
    """Count the ids the store is asked for *with* vectors, from now on."""
    asked: Counter[str] = Counter()
    inner = world.store.get_many

    def spy(scope: Any, memory_ids: Any, *, embeddings: bool = True) -> dict[str, MemoryRecord]:
        if embeddings:
            asked.update(memory_ids)
        return inner(scope, memory_ids, embeddings=embeddings)

    world.store.get_many = spy  # type: ignore[method-assign]
    return asked


def _near(world: World, cache: NeighbourRecords) -> NeighbourPool:
    return NeighbourPool(world.store, world.index, cache=cache)


def _gather(world: World, cache: NeighbourRecords, text: str) -> list[MemoryRecord]:
    fact = [Candidate(content=text, source=Source.USER, importance=0.6)]
    return _near(world, cache).gather(S, fact, EMBEDDER.embed_documents([text]), EMBEDDER.model_id)


def _cosine(vector: np.ndarray, record: MemoryRecord) -> float:
    assert record.embedding is not None
    return float(np.dot(vector, np.asarray(record.embedding, dtype=np.float32)))


def _stored(world: World) -> None:
    for i, text in enumerate(TEXTS):
        world.c.pipeline.ingest(turn(f"m{i}", text, hours=i))
    world.drain()


def test_the_pool_and_its_similarities_read_no_vector(world: World) -> None:
    _stored(world)
    asked = _vector_reads(world)
    cache = NeighbourRecords()
    text = "I play the violin on Sundays."
    pool = _gather(world, cache, text)
    assert pool and all(r.embedding is None for r in pool)
    vector = EMBEDDER.embed_documents([text])[0]
    found = _near(world, cache).similarities(S, vector, pool, EMBEDDER.model_id)
    assert not asked and len(cache) == 0
    assert set(found) == {r.memory_id for r in pool}
    for record in pool:  # the index's cosine is the one the record's own vector gives
        assert found[record.memory_id] == pytest.approx(
            _cosine(vector, world.store.get(S, record.memory_id)), abs=1e-5
        )


def test_a_neighbour_the_index_does_not_hold_yet_is_read_whole_once(world: World) -> None:
    _stored(world)
    world.c.pipeline.ingest(turn("m8", "My dentist works in Leeds.", hours=8))  # not projected
    [fresh] = [r for r in world.active() if "dentist" in r.content]
    cache = NeighbourRecords()
    asked = _vector_reads(world)
    text = "I play the violin on Sundays."
    vector = EMBEDDER.embed_documents([text])[0]
    for _ in range(2):
        pool = _gather(world, cache, text)
        found = _near(world, cache).similarities(S, vector, pool, EMBEDDER.model_id)
        assert found[fresh.memory_id] == pytest.approx(_cosine(vector, fresh), abs=1e-6)
    assert asked == Counter({fresh.memory_id: 1})  # the second turn took it from the cache
    assert cache.hits == 1


def test_the_record_a_turn_writes_back_is_read_whole_as_it_is_now(world: World) -> None:
    _stored(world)
    cache = NeighbourRecords()
    pool = _gather(world, cache, "我喜欢喝绿茶。")
    light = next(r for r in pool if r.content == "我喜欢喝乌龙茶。")
    asked = _vector_reads(world)
    full = _near(world, cache).full(S, light)
    assert full == world.store.get(S, light.memory_id) and full.embedding is not None
    assert asked[light.memory_id] == 1
    moved = full.evolve(now=T0, importance=0.95, pinned=True)
    world.store.update(moved, full.version)  # another process, say: the cache is not told
    with pytest.raises(VersionConflict):
        _near(world, cache).full(S, light)  # the pool's copy is stale: no write may start from it
    [now] = [r for r in _gather(world, cache, "我喜欢喝绿茶。") if r.memory_id == light.memory_id]
    assert _near(world, cache).full(S, now) == world.store.get(S, light.memory_id)


def test_a_neighbour_superseded_meanwhile_is_never_acted_on(world: World) -> None:
    _stored(world)
    cache = NeighbourRecords()
    text = "I play the piano on Sundays."
    pool = _gather(world, cache, text)
    cello = _near(world, cache).full(S, next(r for r in pool if "cello" in r.content))
    world.store.update(cello.evolve(now=T0, status=Status.SUPERSEDED), cello.version)
    # The projector has not run: the index's card still shows it active, and the pool holds it so.
    near = _near(world, cache)
    fact = [Candidate(content=text, source=Source.USER, importance=0.6)]
    [card] = [
        r
        for r in near.gather(S, fact, EMBEDDER.embed_documents([text]), EMBEDDER.model_id)
        if "cello" in r.content
    ]
    assert card.is_active and near.confirm(S, card) is None  # the store holds it no more as active
    with pytest.raises(VersionConflict):
        _near(world, cache).full(S, cello)
    world.drain()
    after = _gather(world, cache, text)
    assert cello.memory_id not in [r.memory_id for r in after]
    assert after == _gather(world, NeighbourRecords(), text)


def test_the_cache_keeps_only_its_capacity_most_recently_used(world: World) -> None:
    _stored(world)
    cache = NeighbourRecords(capacity=2)
    light = {r.memory_id: r for r in _gather(world, cache, "我住在北京。")}
    assert len(light) > 2 and len(cache.complete(world.store, S, light)) == len(light)
    assert len(cache) == 2
    assert NeighbourRecords(capacity=0).complete(world.store, S, {}) == {}


def test_the_write_pipeline_keeps_its_cache_across_turns(world: World) -> None:
    _stored(world)
    cache = world.c.pipeline.neighbour_cache
    world.c.pipeline.ingest(turn("m9", "My dentist works in Leeds.", hours=9))  # not projected
    world.c.pipeline.ingest(turn("m10", "I keep two cats.", hours=10))
    hits = cache.hits
    world.c.pipeline.ingest(turn("m11", "我每天早上跑步。", hours=11))
    assert cache.hits > hits


def test_a_concurrent_change_to_the_neighbour_a_turn_reinforces_keeps_the_new_fact(world: World) -> None:
    _stored(world)
    [cello] = [r for r in world.active() if "cello" in r.content]
    inner = world.store.get_many

    def changed_meanwhile(scope: Any, memory_ids: Any, *, embeddings: bool = True) -> dict[str, MemoryRecord]:
        if embeddings and cello.memory_id in memory_ids:  # another writer, between read and write
            current = world.store.get(S, cello.memory_id)
            world.store.update(current.evolve(now=T0, importance=0.9), current.version)
        return inner(scope, memory_ids, embeddings=embeddings)

    world.store.get_many = changed_meanwhile  # type: ignore[method-assign]
    outcome = world.c.pipeline.ingest(turn("m9", "I play the cello on Sundays.", hours=9))
    assert outcome.reinforced == [] and len(outcome.written) == 1  # stored, not lost; consolidation dedups
    assert world.store.get(S, cello.memory_id).importance == 0.9


def test_a_turn_that_meets_its_users_erase_empties_the_users_cached_records(world: World) -> None:
    _stored(world)
    cache = world.c.pipeline.neighbour_cache
    world.c.pipeline.ingest(turn("m9", "我住在北京。", hours=9))
    assert len(cache) > 0
    world.c.admin.erase_user(S, now=T0 + timedelta(hours=10), actor="admin")
    outcome = world.c.ingest.handle(
        TurnMessage.from_turn(turn("m10", "I play the violin.", hours=8)).to_body(), now=T0
    )
    assert outcome.status is TurnStatus.REJECTED
    assert len(cache) == 0
