"""An outage of one projection never holds the other back: the projector writes the change to
both, then fails the record for the stream to retry (the store that took it sees a stale replay)."""

from __future__ import annotations

import pytest

from agentmem.errors import StoreUnavailable
from support.fake_world import S, World, turn


@pytest.mark.parametrize("down", ["graph", "index"])
def test_the_store_that_is_up_takes_the_change_while_the_other_is_down(world: World, down: str) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto and I work as a nurse."))
    ids = {r.memory_id for r in world.active()}
    assert ids
    broken, healthy = (world.graph, world.index) if down == "graph" else (world.index, world.graph)
    broken.down = True
    with pytest.raises(StoreUnavailable):
        world.drain()
    assert {s.memory_id for s in healthy.all_states(S)} >= {min(ids)}
    # the stream retries the record once the store is back: both hold every memory
    broken.down = False
    world.projected = 0
    world.drain()
    assert {s.memory_id for s in world.index.all_states(S)} == ids
    assert {s.memory_id for s in world.graph.all_states(S)} == ids
