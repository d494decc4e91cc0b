"""Recall's graph and period channels on the fakes: a memory found through the conversation
around a seed carries the graph bonus; a query naming a period lifts that period's memories."""

from __future__ import annotations

from datetime import timedelta

from agentmem.domain.models import ScoredMemory
from agentmem.services.recall import RecallService
from support.fake_world import T0, S, World, turn


def by_content(memories: list[ScoredMemory]) -> dict[str, ScoredMemory]:
    return {m.record.content: m for m in memories}


def test_the_line_after_a_seed_comes_through_the_graph_with_its_bonus(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I went to a poetry reading last Friday."))
    world.c.pipeline.ingest(
        turn("m2", "It was about transgender stories and finding your voice.", hours=0.01)
    )
    world.c.pipeline.ingest(turn("m3", "我周末在家做了番茄炒蛋。", hours=0.02, session="s2"))
    world.drain()
    result = world.c.recall.recall(S, "poetry reading", k=3, now=T0 + timedelta(days=1))
    found = by_content(result.memories)
    after = found["It was about transgender stories and finding your voice."]
    assert any(c.startswith("graph:") for c in after.channels)
    assert after.components["graph"] > 0
    assert result.memories[0].record.content == "I went to a poetry reading last Friday."
    other = found.get("我周末在家做了番茄炒蛋。")  # another session: no edge to the seeds
    assert other is None or "graph" not in other.components


def test_without_a_graph_the_same_recall_has_no_graph_component(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "我上周去了一个诗歌朗诵会。"))
    world.c.pipeline.ingest(turn("m2", "主题是关于勇气和自我接纳。", hours=0.01))
    world.drain()
    with_graph = world.c.recall.recall(S, "诗歌朗诵会", k=3, now=T0 + timedelta(days=1))
    assert any("graph" in m.components for m in with_graph.memories)
    bare = RecallService(
        store=world.store, embedder=world.c.embedder, scorer=world.c.scorer, index=world.index
    )
    plain = bare.recall(S, "诗歌朗诵会", k=3, now=T0 + timedelta(days=1))
    assert all("graph" not in m.components for m in plain.memories)


def test_a_query_naming_a_period_lifts_the_memories_of_that_period(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I ran a half marathon in the rain."))
    world.clock.set(T0 + timedelta(days=40))
    world.c.pipeline.ingest(turn("m2", "我给邻居烤了酸面包。", hours=24 * 40, session="s2"))
    world.drain()
    now = T0 + timedelta(days=41)
    for query, wanted in (
        ("What did I do yesterday?", "我给邻居烤了酸面包。"),
        ("我昨天做了什么？", "我给邻居烤了酸面包。"),
        ("What did I do last month?", "I ran a half marathon in the rain."),
        ("我上个月做了什么？", "I ran a half marathon in the rain."),
    ):
        result = world.c.recall.recall(S, query, k=2, now=now)
        top = result.memories[0]
        assert top.record.content == wanted, query
        assert top.components["period"] == 1.0
        # the other memory is outside the period (and may fall under the relevance floor)
        assert all("period" not in m.components for m in result.memories[1:])
