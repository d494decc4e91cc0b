"""An update meets the memory it replaces however far back it was said and however it is worded:
in the other language, without a change word the old text shares, behind many newer unrelated
memories (k-NN and BM25 hits of their own), with the projector caught up. Neither its vector,
its words nor the recent window reach the old value: the key the extraction gave both finds it
(``find_by_key``), and so do the attribute keys the search index keeps (``SearchIndex.stating``,
which also serves facts without a key: ``test_neighbour_pool.py``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agentmem.domain.conflict import attribute_keys
from agentmem.domain.models import Status
from support.fake_world import T0, S, World, build, store_memories, turn

PAIRS = [  # (old statement, its update: the other language, nothing in common with it)
    ("I live in Porto.", "我搬到雷克雅未克了。"),
    ("我住在深圳。", "Moved to Berlin last month."),
    ("I drive a silver Honda Civic.", "现在开的是一辆特斯拉Model 3。"),
    ("我开一辆比亚迪汉。", "Picked up a used Volvo XC40 last weekend."),
    ("I work at Google.", "我现在在字节跳动上班。"),
    ("我在腾讯工作。", "Started at Stripe this week."),
    ("My manager is Alice.", "我的新领导是王伟。"),
    ("我的经理是李娜。", "Reporting to Bob now."),
    ("I am a vegetarian.", "我现在吃素了。"),
]
HISTORY = [  # unrelated memories stored between the two, in both languages
    *(f"Watered the plants in room {n} on day {n * 3 % 17}." for n in range(60)),
    *(f"第{n}周的项目例会改在{n % 5 + 1}号会议室。" for n in range(60)),
    *(f"I had ramen with {n % 6 + 2} colleagues on trip {n}." for n in range(30)),
    *(f"我上周读完了第{n}本小说。" for n in range(30)),
]


def _world_with(old: str) -> World:
    world = build()
    world.c.pipeline.ingest(turn("old", old))
    world.drain()
    store_memories(
        world, HISTORY, [T0 + timedelta(hours=1, minutes=n) for n in range(len(HISTORY))], tag="history"
    )
    return world


def test_the_history_states_no_attribute_of_the_pairs() -> None:
    stated = set().union(*(attribute_keys(t) for t in HISTORY))
    assert not stated & set().union(*(attribute_keys(new) for _, new in PAIRS))


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"pair{i}" for i in range(len(PAIRS))])
def test_an_update_behind_a_long_history_supersedes_its_old_value(old: str, new: str) -> None:
    world = _world_with(old)
    said = {r.memory_id for r in world.active() if "old" in r.source_refs.message_ids}
    assert said and len(world.active()) > 150  # the recent window (20) no longer holds it
    outcome = world.c.pipeline.ingest(turn("new", new, hours=5))
    superseded = {r.memory_id for r in world.records(S, Status.SUPERSEDED)}
    assert superseded == said, outcome.to_dict()
    assert any("new" in r.source_refs.message_ids for r in world.active())


def test_a_different_attribute_behind_the_same_history_replaces_nothing() -> None:
    world = _world_with("I live in Porto.")
    world.c.pipeline.ingest(turn("new", "我现在在字节跳动上班。", hours=5))
    assert world.records(S, Status.SUPERSEDED) == []
