"""Neptune adapter without a server: the Gremlin it builds (bytecode translated to Groovy text),
the scope on every traversal it submits, retries on Neptune's ConcurrentModificationException,
reconnection with fresh SigV4 headers, parsing of realistic results, and the IAM handshake
headers. Graph semantics are in test_contract_graph_store.py (run on the fake Gremlin server)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.credentials import Credentials
from gremlin_python.driver.remote_connection import RemoteConnection, RemoteTraversal
from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.translator import Translator
from gremlin_python.process.traversal import Direction, T, TraversalStrategies, Traverser
from gremlin_python.structure.graph import Graph

from agentmem.adapters.aws import neptune_graph
from agentmem.adapters.aws import neptune_traversals as nt
from agentmem.adapters.aws.neptune_graph import WRITE_RETRIES, NeptuneGraphStore, signed_headers
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.errors import StoreUnavailable
from agentmem.ports import Edge, Neighbour, ProjectionOutcome
from support.fakes.fake_gremlin import FakeGremlinServer

S = Scope("acme", "alice")
PK = "TENANT#acme#USER#alice"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
g = GraphTraversalSource(Graph(), TraversalStrategies())


def groovy(traversal: Any) -> str:
    return str(Translator("g").translate(traversal.bytecode))


def rec(memory_id: str, **kw: Any) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=f"memory {memory_id}",
        category=Category.FACT,
        source_refs=SourceRefs(session_id="s1"),
        created_at=T0,
        **kw,
    )


def store_on(server: RemoteConnection, sleeps: list[float] | None = None) -> NeptuneGraphStore:
    return NeptuneGraphStore(lambda: server, sleep=(sleeps if sleeps is not None else []).append)


# ------------------------------------------------------------------ the Gremlin text


def test_vertex_write_is_an_idempotent_version_guarded_upsert() -> None:
    text = groovy(nt.write_memory(g, rec("m1"), 0))
    assert text.startswith(
        f"g.V('{PK}#MEM#m1').has('pk','{PK}').fold().coalesce(__.unfold(),__.addV('memory')"
        f".property(T.id,'{PK}#MEM#m1').property('pk','{PK}').property('memory_id','m1').property('version',0)"
    )
    assert ".property('tombstone',false)).has('version',0).property(Cardinality.single,'version',1)" in text
    assert ".property(Cardinality.single,'session_id','s1')" in text
    assert text.endswith(".property(Cardinality.single,'tombstone',false).id()")


def test_tombstone_keeps_the_vertex_and_drops_its_edges() -> None:
    assert groovy(nt.write_tombstone(g, S, "m1", 9, 2)).endswith(
        ".property('tombstone',true)).has('version',2).property(Cardinality.single,'version',9)"
        ".property(Cardinality.single,'status','deleted').property(Cardinality.single,'tombstone',true)"
        ".sideEffect(__.bothE().drop()).id()"
    )


def test_edges_are_added_once_by_id() -> None:
    assert groovy(nt.add_edge(g, S, f"{PK}#MEM#a", "FOLLOWS", f"{PK}#MEM#b", 0.5)) == (
        f"g.E('{PK}#MEM#a|FOLLOWS|{PK}#MEM#b').has('pk','{PK}').fold().coalesce(__.unfold().constant(false),"
        f"__.V('{PK}#MEM#a').has('pk','{PK}').addE('FOLLOWS').to(__.V('{PK}#MEM#b').has('pk','{PK}'))"
        f".property(T.id,'{PK}#MEM#a|FOLLOWS|{PK}#MEM#b').property('pk','{PK}').property('weight',0.5d).constant(true))"
    )


def test_reads_start_from_the_scope() -> None:
    assert groovy(nt.frontier_edges(g, S, [f"{PK}#MEM#a"], 5000)) == (
        f"g.V('{PK}#MEM#a').has('pk','{PK}').bothE().has('pk','{PK}').order().by('weight',Order.desc)"
        ".limit(5000).elementMap('weight')"
    )
    assert groovy(nt.live_states(g, S, None)) == (
        f"g.V().has('memory','pk','{PK}').has('tombstone',false).elementMap('memory_id','version','content_hash')"
    )
    assert groovy(nt.session_previous(g, S, "s1", "2026-01-05T09:00:00.000000Z", "m5")) == (
        f"g.V().has('memory','pk','{PK}').has('session_id','s1').has('tombstone',false)"
        ".has('created_at','2026-01-05T09:00:00.000000Z').has('memory_id',lt('m5'))"
        ".order().by('created_at',Order.desc).by('memory_id',Order.desc).limit(1).values('memory_id')"
    )
    assert groovy(nt.degrees(g, S, [f"{PK}#MEM#a"])) == (
        f"g.V('{PK}#MEM#a').has('pk','{PK}').project('id','degree').by(__.id()).by(__.bothE().count())"
    )
    assert groovy(nt.drop_scope_batch(g, S, 500)) == f"g.V().has('pk','{PK}').limit(500).drop()"


def test_every_submitted_traversal_is_scoped() -> None:
    server = FakeGremlinServer()
    store = store_on(server)
    store.upsert_memory(rec("a", entities=("Alice",)))
    store.upsert_memory(rec("b"))
    store.link(S, [Edge("a", "b", "FOLLOWS")])
    store.neighbours(S, ["a"], 2, 10)
    store.previous_in_session(S, "s1", "b")
    store.degree(S, ["a"])
    store.states(S, ["a"])
    store.all_states(S)
    store.delete_memory(S, "a", 1)
    store.erase_scope(S)
    for bytecode in server.submitted:
        text = str(Translator("g").translate(bytecode))
        if text.startswith("g.V()."):
            assert text.startswith((f"g.V().has('pk','{PK}')", f"g.V().has('memory','pk','{PK}')")), text
        else:
            ids, rest = text.split(").", 1)
            assert all(i.strip("'[ ").startswith(PK) for i in ids[4:].split(",")), text  # ids embed the scope
            assert rest.startswith(f"has('pk','{PK}')"), text


def test_single_cardinality_keeps_one_value_per_property() -> None:
    """Neptune's default cardinality is *set*: without ``single`` a second version would be added
    next to the first. The fake models that, so this checks the adapter writes ``single``."""
    server = FakeGremlinServer()
    store = store_on(server)
    store.upsert_memory(rec("m1"))
    store.upsert_memory(rec("m1").evolve(now=T0, content="v2"))
    assert server.vertices[f"{PK}#MEM#m1"].props["version"] == [2]


# ------------------------------------------------------------------ retries and failures


def test_concurrent_modification_is_retried() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("ConcurrentModificationException", times=2)
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED
    assert len(sleeps) == 2 and store.states(S, ["m1"])["m1"].version == 1


def test_retries_are_bounded() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("ConcurrentModificationException", times=WRITE_RETRIES + 1)
    with pytest.raises(StoreUnavailable) as caught:
        store.upsert_memory(rec("m1"))
    assert caught.value.details["code"] == "ConcurrentModificationException"
    assert len(sleeps) == WRITE_RETRIES


def test_other_server_errors_are_not_retried() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("MalformedQueryException")
    with pytest.raises(StoreUnavailable):
        store.states(S, ["m1"])
    assert sleeps == []


class Flaky(RemoteConnection):
    """Fails with a transport error on its first submit."""

    def __init__(self, inner: FakeGremlinServer, failures: int) -> None:
        super().__init__("flaky", "g")
        self.inner, self.failures, self.closed = inner, failures, False

    def submit(self, bytecode: Any) -> RemoteTraversal:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("Connection was closed by server.")
        return self.inner.submit(bytecode)

    def close(self) -> None:
        self.closed = True


def test_a_dropped_connection_is_rebuilt_once() -> None:
    server = FakeGremlinServer()
    built: list[Flaky] = []

    def connect() -> RemoteConnection:
        built.append(Flaky(server, 1 if not built else 0))
        return built[-1]

    store = NeptuneGraphStore(connect, sleep=lambda _: None)
    assert built == []  # nothing connects before the first call
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED
    assert len(built) == 2 and built[0].closed

    always = NeptuneGraphStore(lambda: Flaky(server, 99), sleep=lambda _: None)
    with pytest.raises(StoreUnavailable) as caught:
        always.states(S, ["m1"])
    assert caught.value.details["error"] == "RuntimeError"


# ------------------------------------------------------------------ realistic results


class Scripted(RemoteConnection):
    """Returns canned results (as gremlinpython deserialises Neptune's GraphBinary) in order."""

    def __init__(self, results: list[list[Any]]) -> None:
        super().__init__("scripted", "g")
        self.results = results

    def submit(self, bytecode: Any) -> RemoteTraversal:
        return RemoteTraversal(iter([Traverser(r, 1) for r in self.results.pop(0)]))


def test_parses_element_maps_of_edges_and_vertices() -> None:
    a, b, e = f"{PK}#MEM#a", f"{PK}#MEM#b", f"{PK}#ENT#0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    edges = [
        {
            T.id: f"{a}|SIMILAR_TO|{b}",
            T.label: "SIMILAR_TO",
            Direction.IN: {T.id: b, T.label: "memory"},
            Direction.OUT: {T.id: a, T.label: "memory"},
            "weight": 0.91,
        },
        {
            T.id: f"{a}|BELONGS_TO|{e}",
            T.label: "BELONGS_TO",
            Direction.IN: {T.id: e, T.label: "entity"},
            Direction.OUT: {T.id: a, T.label: "memory"},
            "weight": 1.0,
        },
    ]
    kinds = [
        {T.id: b, T.label: "memory", "status": "active", "tombstone": False},
        {T.id: e, T.label: "entity", "status": "active", "tombstone": False},
    ]
    store = store_on(Scripted([edges, kinds]))
    assert store.neighbours(S, ["a"], 1, 10) == [Neighbour("b", 1, "SIMILAR_TO")]
    store = store_on(Scripted([[{"id": a, "degree": 4}, {"id": b, "degree": 1}]]))
    assert store.degree(S, ["a", "b", "c"]) == {"a": 4, "b": 1, "c": 0}


# ------------------------------------------------------------------ IAM


def test_handshake_headers_are_sigv4_signed_for_neptune() -> None:
    headers = signed_headers(
        "db.cluster-abc.us-east-1.neptune.amazonaws.com",
        8182,
        "us-east-1",
        Credentials("AKIDEXAMPLE", "secret", "token"),
    )
    assert headers["Host"] == "db.cluster-abc.us-east-1.neptune.amazonaws.com:8182"
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/neptune-db/aws4_request" in headers["Authorization"]
    assert headers["X-Amz-Security-Token"] == "token" and "X-Amz-Date" in headers


def test_the_connection_factory_builds_nothing_until_called(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = neptune_graph.connection_factory(
        "wss://db.example:8182/gremlin", port=8182, region="us-east-1", iam=True
    )
    assert callable(factory)  # no socket, no credentials lookup yet
