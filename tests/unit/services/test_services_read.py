"""Recall and context on the fakes: what a caller gets back, and how each outage degrades it."""

from __future__ import annotations

from datetime import timedelta

from agentmem.domain.context import Mode
from agentmem.domain.models import Scope
from agentmem.services.recall import QUERY_CHARS, RecallResult
from support.fake_world import T0, S, World, turn

OTHER = Scope("t1", "u2")


def written(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    world.c.pipeline.ingest(turn("m2", "My sister Ana lives in Madrid.", hours=1))
    world.c.pipeline.ingest(turn("x1", "I live in Oslo.", scope=OTHER))
    world.drain()


def contents(result: RecallResult) -> list[str]:
    return [m.record.content for m in result.memories]


def test_recall_finds_a_memory_by_vector_and_keyword(world: World) -> None:
    written(world)
    result = world.c.recall.recall(S, "Porto", k=3, now=T0 + timedelta(days=1))
    assert result.degraded == []
    top = result.memories[0]
    assert top.record.content == "I live in Porto."
    assert {"vector", "keyword"} <= set(top.channels)
    assert "I live in Oslo." not in contents(result)  # another user's memory, same words


def test_with_the_index_down_recall_scans_the_store_and_says_so(world: World) -> None:
    written(world)
    world.index.down = True
    result = world.c.recall.recall(S, "Porto", k=3, now=T0)
    assert result.degraded == ["search_index"]
    assert result.memories[0].record.content == "I live in Porto."
    # found by the scan (the graph may lift it too: it names the hop that did)
    assert {c for c in result.memories[0].channels if not c.startswith("graph:")} == {"store_scan"}
    assert "I live in Oslo." not in contents(result)


def test_with_the_graph_down_recall_still_answers_and_says_so(world: World) -> None:
    written(world)
    healthy = contents(world.c.recall.recall(S, "cello", k=3, now=T0))
    world.graph.down = True
    result = world.c.recall.recall(S, "cello", k=3, now=T0)
    assert result.degraded == ["graph"]
    assert contents(result)[0] == healthy[0] == "I play the cello."


def test_a_lagging_index_never_brings_back_a_superseded_memory(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    world.c.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))  # not projected yet
    assert len(world.index.all_states(S)) == 1  # the index still shows Porto
    result = world.c.recall.recall(S, "Porto Lisbon", k=5, now=T0 + timedelta(hours=2))
    assert contents(result) == ["I moved to Lisbon."]  # the newest write, read from the store


def test_context_is_empty_when_nothing_is_recalled(world: World) -> None:
    written(world)
    stranger = Scope("t1", "nobody")
    built = world.c.context.build(stranger, "where do I live?", mode=Mode.CHAT, now=T0)
    assert built.context.text == "" and built.memories == [] and built.degraded == []
    assert world.audit.list(stranger) == []  # nothing injected, nothing audited


def test_context_injects_recalled_memories_and_audits_which(world: World) -> None:
    written(world)
    built = world.c.context.build(S, "Porto", mode=Mode.CHAT, now=T0, session_id="s1")
    assert "I live in Porto." in built.context.text
    assert "Oslo" not in built.context.text
    [event] = [e for e in world.audit.list(S) if e.action == "context_injected"]
    assert event.details["memory_ids"] == list(built.context.used_memory_ids)
    assert {m.record.memory_id for m in built.memories} == set(built.context.used_memory_ids)


def test_context_with_every_projection_down_still_comes_from_the_store(world: World) -> None:
    written(world)
    world.index.down = world.graph.down = world.runtime_state.down = True
    built = world.c.context.build(S, "Porto", mode=Mode.CHAT, now=T0, session_id="s1")
    assert "I live in Porto." in built.context.text
    assert built.degraded == ["graph", "runtime_state", "search_index"]


def test_retrieval_reads_a_query_up_to_its_bound(world: World) -> None:
    written(world)
    asked: list[str] = []
    embed_query = world.c.recall.embedder.embed_query

    def spy(text: str):  # type: ignore[no-untyped-def]
        asked.append(text)
        return embed_query(text)

    world.c.recall.embedder.embed_query = spy  # type: ignore[method-assign]
    pasted = "Porto " + "lorem ipsum " * 5000
    result = world.c.recall.recall(S, pasted, k=3, now=T0)
    world.c.context.build(S, pasted, mode=Mode.CHAT, now=T0)
    assert asked and all(len(q) == QUERY_CHARS for q in asked)  # never the whole 60,000 characters
    assert contents(result)[0] == "I live in Porto."  # what it read still finds the memory
