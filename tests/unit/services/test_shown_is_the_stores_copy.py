"""The promise of the read session (services/reads.py), as a property: whatever drift there is
between the search index's cards and the store (a memory superseded, edited, quarantined, deleted
or rewritten at the same version while the projection lags), every memory a context call shows
and every memory recall answers is the store's own copy, in both languages."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.domain.context import Mode
from agentmem.domain.models import MemoryRecord, Status
from support.fake_world import T0, S, World, build, turn

NOW = T0 + timedelta(days=1)
LATER = T0 + timedelta(hours=2)
FACTS = [
    "My dog is called Biscuit.",
    "我的猫叫小白。",
    "I live in Porto.",
    "I prefer green tea to coffee.",
    "我每天早上喝一杯乌龙茶。",
    "My sister is a nurse in Lyon.",
    "我周末常去西湖边跑步。",
    "I am allergic to peanuts.",
]
QUERIES = [
    "What is my dog called?",
    "我的猫叫什么名字？",
    "What do I drink?",
    "帮我写一段自我介绍",
    "Where do I live?",
]
DRIFTS = ["none", "superseded", "edited", "same_version", "quarantined", "deleted"]


def _world() -> World:
    world = build()
    for number, fact in enumerate(FACTS):
        world.c.pipeline.ingest(turn(f"m{number}", fact, hours=number * 0.01))
    world.drain()
    world.c.recall.recent_window = 0  # every candidate is known from a card until confirmed
    return world


def _drift(world: World, record: MemoryRecord, drift: str) -> None:
    """Change ``record`` in the store only (the projection is not run: the cards lag)."""
    if drift == "superseded":
        world.store.update(record.evolve(now=LATER, status=Status.SUPERSEDED), record.version)
    elif drift == "edited":
        world.store.update(record.evolve(now=LATER, content=record.content + " (edited)"), record.version)
    elif drift == "same_version":
        world.store.update(
            replace(record, content=record.content + " (rewritten)", content_hash=""), record.version
        )
    elif drift == "quarantined":
        world.store.update(record.evolve(now=LATER, status=Status.QUARANTINED), record.version)
    elif drift == "deleted":
        world.store.hard_delete(S, record.memory_id)


def _is_the_stores(world: World, shown: MemoryRecord) -> bool:
    stored = world.store.get(S, shown.memory_id)
    return (
        stored is not None
        and stored.is_active
        and (stored.version, stored.content_hash, stored.content)
        == (shown.version, shown.content_hash, shown.content)
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drifts=st.lists(st.sampled_from(DRIFTS), min_size=len(FACTS), max_size=len(FACTS)),
    query=st.sampled_from(QUERIES),
)
def test_every_memory_shown_is_the_stores_own_copy(drifts: list[str], query: str) -> None:
    world = _world()
    for record, drift in zip(sorted(world.active(), key=lambda r: r.memory_id), drifts, strict=False):
        _drift(world, record, drift)
    result = world.c.context.build(S, query, mode=Mode.CHAT, now=NOW)
    shown = set(result.context.used_memory_ids)
    assert {m.record.memory_id for m in result.memories} == shown
    for scored in result.memories:
        assert _is_the_stores(world, scored.record), scored.record.memory_id
    lines = [item for slot in result.context.slots for item in slot.items if item.memory_id in shown]
    stored = {m: world.store.get(S, m) for m in shown}
    for item in lines:
        record = stored[item.memory_id]
        assert record is not None and item.text == record.content
    answer = world.c.recall.recall(S, query, k=5, now=NOW).memories
    assert all(_is_the_stores(world, s.record) for s in answer)
