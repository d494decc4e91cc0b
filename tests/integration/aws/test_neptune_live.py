"""Against a real Gremlin server (Neptune, or TinkerPop's Gremlin Server) — only when
``AGENTMEM_GREMLIN_URL`` is set (see docs/aws.md "Live checks"; the GraphStore contract suite
also gains a ``live`` run then). A fresh scope per run, erased afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.ports import Edge, Neighbour, ProjectionOutcome
from support.fakes import live

pytestmark = [
    pytest.mark.gremlin,
    pytest.mark.skipif(
        not live.gremlin_url(), reason="set AGENTMEM_GREMLIN_URL to run against a Gremlin server"
    ),
]
S = Scope("live", f"u-{uuid.uuid4().hex[:8]}")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def graph() -> Iterator[NeptuneGraphStore]:
    store = NeptuneGraphStore(live.gremlin_connection(str(live.gremlin_url())))
    yield store
    store.erase_scope(S)


def rec(memory_id: str, minute: int = 0, **kw: object) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=memory_id,
        category=Category.FACT,
        source_refs=SourceRefs(session_id="s1"),
        created_at=T0.replace(minute=minute),
        **kw,  # type: ignore[arg-type]
    )


def test_a_projection_round_trip(graph: NeptuneGraphStore) -> None:
    assert graph.upsert_memory(rec("a", entities=("Alice",))) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(rec("b", 1, entities=("alice",))) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(rec("a")) is ProjectionOutcome.STALE
    assert graph.previous_in_session(S, "s1", "b") == "a"
    assert graph.link(S, [Edge("a", "b", "FOLLOWS")]) == 1
    assert graph.link(S, [Edge("a", "b", "FOLLOWS")]) == 0
    assert graph.neighbours(S, ["a"], 2, 10) == [Neighbour("b", 1, "FOLLOWS")]
    assert graph.degree(S, ["a", "b"]) == {"a": 2, "b": 2}
    assert graph.delete_memory(S, "a", 1) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(rec("a")) is ProjectionOutcome.STALE
    assert [s.memory_id for s in graph.all_states(S)] == ["b"]
    assert graph.erase_scope(S) == 1
