"""GraphStore contract, parametrised over implementations.

``embedded`` is the embedded SQLite graph; ``fake`` is the in-memory fake of the service unit tests
(:mod:`support.fakes.memory`); ``live`` is the Neptune adapter over a real Gremlin server: the
project's engine (:mod:`support.engine_run`: TinkerPop Gremlin Server on loopback, TinkerGraph
with string ids and Neptune's *set* default cardinality) or the one ``AGENTMEM_GREMLIN_URL``
names (Neptune, say); skipped with the reason where neither can be had. The live run shares one server between xdist workers (and CI runs),
so the tenants are unique to each process (``RUN``) and erased before and after each test. (Not
``xdist_group``: with pytest 9, pytest-xdist 3.8's loadgroup never applies its group suffix, so
"grouped" tests still spread over workers.) The fake Gremlin server
(:mod:`support.fakes.fake_gremlin`) is kept for what a real server cannot do on demand (fault
injection, Neptune's per-request rollback): see tests/integration/aws/test_neptune_graph.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
from agentmem.adapters.embedded.graph_store import LocalGraphStore, entity_vertex_id
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs, Status
from agentmem.errors import ValidationFailed
from agentmem.ports import Edge, GraphStore, Neighbour, ProjectionOutcome, ProjectionState
from support import engine_run
from support.fakes import live
from support.fakes.memory import InMemoryGraphStore

RUN = uuid.uuid4().hex[:8]  # per process: live tests on two workers never share a scope
S1 = Scope(f"t1-{RUN}", "u1")
S2 = Scope(f"t2-{RUN}", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


PARAMS: list[Any] = ["embedded", "fake", engine_run.param("gremlin", "live")]


@pytest.fixture(params=PARAMS)
def graph(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "fake":
        yield InMemoryGraphStore()
        return
    if request.param == "embedded":
        adapter = LocalGraphStore(tmp_path / "graph.sqlite3")
        yield adapter
        adapter.close()
        return
    remote = NeptuneGraphStore(live.gremlin_connection(engine_run.engine_url("gremlin")))
    for scope in (S1, S2):
        remote.erase_scope(scope)
    yield remote
    for scope in (S1, S2):
        remote.erase_scope(scope)


def rec(
    memory_id: str,
    scope: Scope = S1,
    session: str | None = "s1",
    minute: int = 0,
    entities: tuple[str, ...] = (),
    **changes: Any,
) -> MemoryRecord:
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=f"memory {memory_id}",
        category=Category.FACT,
        source_refs=SourceRefs(session_id=session),
        created_at=T0 + timedelta(minutes=minute),
        entities=entities,
    )
    return replace(record, **changes, content_hash="") if changes else record


def bump(record: MemoryRecord, **changes: Any) -> MemoryRecord:
    return record.evolve(now=T0 + timedelta(hours=record.version), **changes)


def chain(graph: GraphStore, *names: str, scope: Scope = S1) -> None:
    for i, name in enumerate(names):
        graph.upsert_memory(rec(name, scope, minute=i))


# ------------------------------------------------------------------ version guards


def test_vertex_version_never_goes_backwards(graph: GraphStore) -> None:
    v1 = rec("m1")
    assert graph.upsert_memory(v1) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(v1) is ProjectionOutcome.STALE
    v3 = bump(bump(v1))
    assert graph.upsert_memory(v3) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(bump(v1)) is ProjectionOutcome.STALE  # out of order
    drift = replace(v3, content="drift", content_hash="")
    assert graph.upsert_memory(drift) is ProjectionOutcome.CONFLICT
    assert graph.states(S1, ["m1", "absent"]) == {"m1": ProjectionState("m1", 3, v3.content_hash)}


def test_delete_guard_and_no_resurrection(graph: GraphStore) -> None:
    chain(graph, "a", "b")
    v2 = bump(rec("a"))
    graph.upsert_memory(v2)
    graph.link(S1, [Edge("a", "b", "FOLLOWS")])
    assert graph.delete_memory(S1, "a", 1) is ProjectionOutcome.STALE
    assert graph.degree(S1, ["a"]) == {"a": 1}
    assert graph.delete_memory(S1, "a", 2) is ProjectionOutcome.APPLIED
    assert graph.delete_memory(S1, "a", 2) is ProjectionOutcome.STALE
    assert graph.degree(S1, ["a", "b"]) == {"a": 0, "b": 0}
    assert graph.upsert_memory(v2) is ProjectionOutcome.STALE
    assert graph.states(S1, ["a"]) == {}


# ------------------------------------------------------------------ edges


def test_link_is_idempotent_and_scoped(graph: GraphStore) -> None:
    chain(graph, "a", "b", "c")
    graph.upsert_memory(rec("x", S2))
    assert graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("b", "c", "SIMILAR_TO", 0.9)]) == 2
    assert graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("a", "b", "CAUSES")]) == 1
    assert graph.link(S1, [Edge("a", "x", "SIMILAR_TO"), Edge("a", "missing", "CAUSES")]) == 0
    assert graph.link(S2, [Edge("x", "a", "SIMILAR_TO")]) == 0
    assert graph.link(S1, [Edge("a", "a", "SIMILAR_TO")]) == 0
    with pytest.raises(ValidationFailed):
        graph.link(S1, [Edge("a", "b", "LIKES")])
    assert graph.degree(S1, ["a", "b", "c", "x"]) == {"a": 2, "b": 3, "c": 1, "x": 0}


def test_neighbours_one_and_two_hops_both_directions(graph: GraphStore) -> None:
    chain(graph, "a", "b", "c", "d", "e")
    graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("c", "b", "CAUSES"), Edge("c", "d", "SIMILAR_TO")])
    # within a hop: strongest edge first, then the larger (newer) id
    assert graph.neighbours(S1, ["b"], 1, 10) == [Neighbour("c", 1, "CAUSES"), Neighbour("a", 1, "FOLLOWS")]
    assert graph.neighbours(S1, ["a"], 1, 10) == [Neighbour("b", 1, "FOLLOWS")]
    assert graph.neighbours(S1, ["a"], 2, 10) == [Neighbour("b", 1, "FOLLOWS"), Neighbour("c", 2, "CAUSES")]
    assert graph.neighbours(S1, ["a", "c"], 2, 10) == [  # seeds excluded
        Neighbour("d", 1, "SIMILAR_TO"),
        Neighbour("b", 1, "FOLLOWS"),
    ]
    assert graph.neighbours(S1, ["a"], 5, 10) == graph.neighbours(S1, ["a"], 2, 10)  # clamped to 2
    assert graph.neighbours(S1, ["a"], 2, 1) == [Neighbour("b", 1, "FOLLOWS")]
    assert graph.neighbours(S1, ["e"], 2, 10) == []
    assert graph.neighbours(S1, ["missing"], 2, 10) == []


def test_each_memory_is_reached_once_at_its_smallest_hop(graph: GraphStore) -> None:
    chain(graph, "a", "b", "c")
    graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("b", "c", "FOLLOWS"), Edge("a", "c", "SIMILAR_TO")])
    result = graph.neighbours(S1, ["a"], 2, 10)
    assert sorted((n.memory_id, n.hops) for n in result) == [("b", 1), ("c", 1)]


def test_neighbours_are_nearest_first_then_strongest(graph: GraphStore) -> None:
    chain(graph, "seed", "weak", "strong", "far")
    graph.link(
        S1,
        [
            Edge("seed", "weak", "SIMILAR_TO", 0.3),
            Edge("seed", "strong", "SIMILAR_TO", 0.9),
            Edge("weak", "far", "SIMILAR_TO", 1.0),
        ],
    )
    assert [n.memory_id for n in graph.neighbours(S1, ["seed"], 2, 10)] == ["strong", "weak", "far"]


# ------------------------------------------------------------------ entities


def test_shared_entity_links_memories_at_two_hops(graph: GraphStore) -> None:
    graph.upsert_memory(rec("a", entities=("Alice",)))
    graph.upsert_memory(rec("b"))
    assert graph.link_entities(S1, "b", ["  ALICE ", "Paris"]) == 2
    assert graph.link_entities(S1, "b", ["alice"]) == 0  # normalised name, same vertex
    assert graph.link_entities(S1, "missing", ["alice"]) == 0
    assert graph.neighbours(S1, ["a"], 1, 10) == []  # memory -> entity is one hop, not a memory
    assert graph.neighbours(S1, ["a"], 2, 10) == [Neighbour("b", 2, "BELONGS_TO")]
    assert graph.degree(S1, ["a", "b"]) == {"a": 1, "b": 2}


def test_a_walk_via_some_edge_types_skips_the_others(graph: GraphStore) -> None:
    """``via`` restricts every hop: no entity hop, so the entity's memories neither come back nor
    take the seed's ``limit`` ahead of a second hop over the wanted types."""
    chain(graph, "a", "b", "c")
    graph.upsert_memory(rec("p", entities=("Alice",)))
    graph.upsert_memory(rec("q", entities=("Alice",)))
    graph.upsert_memory(rec("s", entities=("Alice",)))
    graph.link_entities(S1, "a", ["Alice"])
    graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("b", "c", "SIMILAR_TO", 0.5), Edge("a", "s", "CAUSES")])
    everything = graph.neighbours(S1, ["a"], 2, 3)
    assert [n.via for n in everything] == ["CAUSES", "FOLLOWS", "BELONGS_TO"]  # the entity hop fills it
    via = frozenset({"FOLLOWS", "SIMILAR_TO"})
    assert graph.neighbours(S1, ["a"], 2, 3, via=via) == [
        Neighbour("b", 1, "FOLLOWS"),
        Neighbour("c", 2, "SIMILAR_TO"),
    ]
    assert graph.neighbours(S1, ["a"], 2, 10, via=frozenset({"BELONGS_TO"})) == [
        Neighbour("s", 2, "BELONGS_TO"),
        Neighbour("q", 2, "BELONGS_TO"),
        Neighbour("p", 2, "BELONGS_TO"),
    ]
    assert graph.neighbours(S1, ["a"], 2, 10, via=frozenset()) == []


def test_same_entity_name_in_two_tenants_never_links_them(graph: GraphStore) -> None:
    graph.upsert_memory(rec("a", S1, entities=("Alice",)))
    graph.upsert_memory(rec("b", S1, entities=("Alice",)))
    graph.upsert_memory(rec("x", S2, entities=("Alice",)))
    graph.upsert_memory(rec("b", S2, entities=("alice",)))  # same memory id too
    assert entity_vertex_id(S1, "Alice") != entity_vertex_id(S2, "Alice")
    assert graph.neighbours(S1, ["a"], 2, 10) == [Neighbour("b", 2, "BELONGS_TO")]
    assert graph.neighbours(S2, ["x"], 2, 10) == [Neighbour("b", 2, "BELONGS_TO")]
    graph.delete_memory(S2, "b", 1)
    assert graph.neighbours(S1, ["a"], 2, 10) == [Neighbour("b", 2, "BELONGS_TO")]
    assert graph.neighbours(S2, ["x"], 2, 10) == []


def test_entity_edges_follow_the_record_and_orphans_go(graph: GraphStore) -> None:
    v1 = rec("a", entities=("Alice", "Bob"))
    graph.upsert_memory(v1)
    graph.upsert_memory(rec("b", entities=("Bob",)))
    graph.upsert_memory(rec("c", entities=("Alice",)))
    assert {n.memory_id for n in graph.neighbours(S1, ["a"], 2, 10)} == {"b", "c"}
    graph.upsert_memory(bump(v1, entities=("Bob",)))
    assert [n.memory_id for n in graph.neighbours(S1, ["a"], 2, 10)] == ["b"]
    assert graph.degree(S1, ["a"]) == {"a": 1}
    graph.delete_memory(S1, "c", 1)
    if isinstance(graph, LocalGraphStore):
        assert _entity_count(graph) == 1  # only Bob is left
    elif isinstance(graph, InMemoryGraphStore):
        assert graph.entity_names(S1) == ["bob"]
    elif isinstance(graph, NeptuneGraphStore):  # white-box: one query for the scope's entity names
        names = graph._run(lambda g, scope: g.V().has("entity", "pk", scope.key).values("name"), S1)
        assert names == ["bob"]


def _entity_count(graph: LocalGraphStore) -> int:
    with graph._db.read() as conn:  # white-box: orphan entity vertices must be gone
        return int(conn.execute("SELECT COUNT(*) FROM vertices WHERE kind = 'entity'").fetchone()[0])


def test_inactive_memories_are_walked_through_but_not_returned(graph: GraphStore) -> None:
    chain(graph, "a", "c")
    graph.upsert_memory(rec("b", status=Status.SUPERSEDED))
    graph.link(S1, [Edge("a", "b", "FOLLOWS"), Edge("b", "c", "FOLLOWS")])
    assert graph.neighbours(S1, ["a"], 2, 10) == [Neighbour("c", 2, "FOLLOWS")]


# ------------------------------------------------------------------ sessions, states, erase


def test_previous_in_session(graph: GraphStore) -> None:
    graph.upsert_memory(rec("m3", minute=3))
    graph.upsert_memory(rec("m1", minute=1))
    graph.upsert_memory(rec("m2", minute=2, session="other"))
    graph.upsert_memory(rec("m0", S2, minute=0))
    graph.upsert_memory(rec("m9", S2, minute=9))
    graph.upsert_memory(rec("m5", minute=5))
    graph.upsert_memory(rec("m4", minute=3))  # same timestamp as m3: ordered by id
    assert graph.previous_in_session(S1, "s1", "m5") == "m4"
    assert graph.previous_in_session(S1, "s1", "m4") == "m3"
    assert graph.previous_in_session(S1, "s1", "m3") == "m1"
    assert graph.previous_in_session(S1, "s1", "m1") is None
    assert graph.previous_in_session(S1, "other", "m2") is None
    assert graph.previous_in_session(S2, "s1", "m9") == "m0"  # never S1's m5
    assert graph.previous_in_session(S2, "s1", "m0") is None
    assert graph.previous_in_session(S1, "s1", "m9") == "m5"  # not projected yet: by id


def test_all_states_and_erase_scope(graph: GraphStore) -> None:
    graph.upsert_memory(rec("a", entities=("Alice",)))
    graph.upsert_memory(rec("b", entities=("Alice",)))
    graph.link(S1, [Edge("a", "b", "SIMILAR_TO")])
    graph.upsert_memory(rec("a", S2, entities=("Alice",)))
    assert [s.memory_id for s in graph.all_states(S1)] == ["a", "b"]  # entity vertices excluded
    assert graph.erase_scope(S1) == 2
    assert graph.all_states(S1) == []
    assert graph.degree(S1, ["a"]) == {"a": 0}
    assert [s.memory_id for s in graph.all_states(S2)] == ["a"]
    assert graph.degree(S2, ["a"]) == {"a": 1}
    assert graph.erase_scope(S1) == 0


def test_a_hub_entity_gives_its_newest_memories_first(graph: GraphStore) -> None:
    """An entity shared by many memories: expansion through it returns ``limit`` of them, the
    newest first (equal edge weights), and the inactive ones are left out."""
    for i in range(120):
        status = Status.SUPERSEDED if i % 10 == 9 else Status.ACTIVE
        graph.upsert_memory(rec(f"m{i:03d}", minute=i, entities=("Alice",), status=status))
    got = graph.neighbours(S1, ["m000"], 2, 15)
    expected = [f"m{i:03d}" for i in range(119, 0, -1) if i % 10 != 9][:15]
    assert [n.memory_id for n in got] == expected
    assert {(n.hops, n.via) for n in got} == {(2, "BELONGS_TO")}
