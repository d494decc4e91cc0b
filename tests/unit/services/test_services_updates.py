"""Updates through the write path and the read-time net through recall (issue 10), on the
in-memory fakes: a change stated without a marker supersedes (audited), a multi-valued addition
never does, an accepted recommendation replaces what was used before, and recall down-ranks and
labels an older memory that a newer user statement contradicts."""

from __future__ import annotations

from dataclasses import replace

from agentmem.domain.attributes import STALE_CHANNEL
from agentmem.domain.models import Status
from support.fake_world import T0, S, World, turn


def test_a_change_without_a_marker_supersedes_in_english_and_chinese(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I drive a Honda Jazz."))
    outcome = world.c.pipeline.ingest(turn("m2", "Picked up a Tesla Model Y on Saturday.", hours=24))
    assert len(outcome.superseded) == 1
    world.c.pipeline.ingest(turn("m3", "婚礼定在5月1日。", hours=25))
    outcome = world.c.pipeline.ingest(turn("m4", "婚礼改到10月3日办了。", hours=48))
    assert len(outcome.superseded) == 1
    assert sorted(r.content for r in world.active()) == [
        "Picked up a Tesla Model Y on Saturday.",
        "婚礼改到10月3日办了。",
    ]
    assert world.actions().count("superseded") == 2


def test_a_second_hobby_pet_or_language_never_supersedes(world: World) -> None:
    texts = [
        "I play the cello.",
        "I've started bouldering too.",
        "我会说粤语。",
        "我在学日语。",
        "我养了一只柯基。",
        "又领养了一只橘猫。",
    ]
    for i, text in enumerate(texts):
        outcome = world.c.pipeline.ingest(turn(f"m{i}", text, hours=i))
        assert outcome.superseded == []
    assert len(world.active()) == len(texts)


def test_an_accepted_recommendation_replaces_what_was_used_before(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "我一直用搜狗输入法。"))
    world.c.pipeline.ingest(turn("m2", "输入法用哪个好？", "推荐你用微信输入法，免费、没广告。", hours=1))
    outcome = world.c.pipeline.ingest(turn("m3", "就装这个。", "好的。", hours=1.1))
    contents = [r.content for r in world.active()]
    assert any("微信输入法" in c and c.startswith("我") for c in contents)
    assert "我一直用搜狗输入法。" not in contents and len(outcome.superseded) == 1


def test_recall_down_ranks_and_labels_an_older_contradicted_memory(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Leeds."))
    world.c.pipeline.ingest(turn("m2", "We settled in York in March.", hours=24))
    # Both active, as if the write path had missed the change (e.g. an older release wrote them).
    for record in world.records():
        if record.status is Status.SUPERSEDED:
            world.store.update(
                record.evolve(now=T0, status=Status.ACTIVE, superseded_by=None, valid_to=None), record.version
            )
    newer = next(r for r in world.records() if "York" in r.content)
    world.store.update(replace(newer.evolve(now=T0), supersedes=()), newer.version)
    world.drain()
    recalled = world.c.recall.recall(S, "Which city do I live in?", k=5, now=T0).memories
    assert recalled[0].record.content == "We settled in York in March."
    stale = [m for m in recalled if "Leeds" in m.record.content]
    assert stale and any(c.startswith(f"{STALE_CHANNEL}:") for c in stale[0].channels)
