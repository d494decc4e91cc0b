"""The neighbour pool's record cache (:class:`agentmem.services.neighbours.RecordCache`): a turn
reads the vectors of only the neighbours the cache does not hold as they are now, and the pool is
always the one an uncached read gives — after another writer changed, superseded or deleted a
cached neighbour too."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import numpy as np

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import MemoryRecord, Source, Status
from agentmem.messages import TurnMessage
from agentmem.services.neighbours import NeighbourPool, RecordCache
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


def _gather(world: World, cache: RecordCache, text: str) -> list[MemoryRecord]:
    fact = [Candidate(content=text, source=Source.USER, importance=0.6)]
    vectors = EMBEDDER.embed_documents([text])
    return NeighbourPool(world.store, world.index, cache=cache).gather(S, fact, vectors, EMBEDDER.model_id)


def _stored(world: World) -> None:
    for i, text in enumerate(TEXTS):
        world.c.pipeline.ingest(turn(f"m{i}", text, hours=i))
    world.drain()


def test_a_second_turn_reads_no_vectors_of_unchanged_neighbours(world: World) -> None:
    _stored(world)
    cache = RecordCache()
    first = _gather(world, cache, "我住在北京。")
    asked = _vector_reads(world)
    again = _gather(world, cache, "I play the violin on Sundays.")
    assert first and set(r.memory_id for r in again) >= set(r.memory_id for r in first)
    assert not set(asked) & {r.memory_id for r in first}  # the unchanged ones came from the cache
    assert cache.hits >= len(first)
    assert again == _gather(world, RecordCache(), "I play the violin on Sundays.")  # = uncached


def test_a_neighbour_changed_by_another_writer_is_read_again_as_it_is_now(world: World) -> None:
    _stored(world)
    cache = RecordCache()
    pool = _gather(world, cache, "我喜欢喝绿茶。")
    old = next(r for r in pool if r.content == "我喜欢喝乌龙茶。")
    assert old.embedding is not None
    moved = old.evolve(now=T0, importance=0.95, pinned=True)
    world.store.update(moved, old.version)  # another process, say: the cache is not told
    asked = _vector_reads(world)
    after = _gather(world, cache, "我喜欢喝绿茶。")
    [now] = [r for r in after if r.memory_id == old.memory_id]
    assert now == world.store.get(S, old.memory_id) and now.pinned and now.version == old.version + 1
    assert asked[old.memory_id] == 1
    assert np.allclose(np.asarray(now.embedding), np.asarray(old.embedding))


def test_a_neighbour_superseded_or_deleted_meanwhile_leaves_the_pool(world: World) -> None:
    _stored(world)
    cache = RecordCache()
    pool = _gather(world, cache, "I play the piano on Sundays.")
    cello = next(r for r in pool if "cello" in r.content)
    world.store.update(cello.evolve(now=T0, status=Status.SUPERSEDED), cello.version)
    after = _gather(world, cache, "I play the piano on Sundays.")
    assert cello.memory_id not in [r.memory_id for r in after]
    assert after == _gather(world, RecordCache(), "I play the piano on Sundays.")


def test_the_cache_keeps_only_its_capacity_most_recently_used(world: World) -> None:
    _stored(world)
    cache = RecordCache(capacity=2)
    _gather(world, cache, "我住在北京。")
    assert len(cache) == 2
    assert RecordCache(capacity=0).complete(world.store, S, {}) == {}


def test_the_write_pipeline_keeps_its_cache_across_turns(world: World) -> None:
    _stored(world)
    cache = world.c.pipeline.neighbour_cache
    world.c.pipeline.ingest(turn("m9", "我住在北京。", hours=9))
    hits = cache.hits
    world.c.pipeline.ingest(turn("m10", "I play the violin on Sundays.", hours=10))
    assert cache.hits > hits


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
