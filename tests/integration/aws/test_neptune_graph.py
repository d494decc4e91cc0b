"""Neptune adapter without a server: the Gremlin it builds (bytecode translated to Groovy text),
the scope on every traversal it submits, Neptune's set cardinality (the fake models it), retries
with full jitter on Neptune's transient errors, every kind of broken connection mapped to
StoreUnavailable and redialled, the connection options (a pool of one), SigV4 headers signed anew
on each dial, and parsing of realistic results. Graph semantics are in
test_contract_graph_store.py (the live run, on a real Gremlin Server); real outages in
test_neptune_live.py. (Over 400 lines: one adapter's Gremlin text, failure table and connection
options, which read best side by side.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from botocore.credentials import Credentials
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.remote_connection import RemoteConnection, RemoteTraversal
from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.translator import Translator
from gremlin_python.process.traversal import Direction, T, TraversalStrategies, Traverser
from gremlin_python.structure.graph import Graph

from agentmem.adapters.aws import gremlin_client, neptune_graph
from agentmem.adapters.aws import neptune_traversals as nt
from agentmem.adapters.aws.gremlin_client import Backoff, connection_factory, gremlin_url, signed_headers
from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.errors import ConfigurationError, StoreUnavailable, ValidationFailed
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


HALF = Backoff(random=lambda: 0.5)  # the jitter pinned to the middle of its range


def store_on(server: RemoteConnection, sleeps: list[float] | None = None) -> NeptuneGraphStore:
    return NeptuneGraphStore(
        lambda: server, sleep=(sleeps if sleeps is not None else []).append, backoff=HALF
    )


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


class Failing(RemoteConnection):
    """Raises ``errors`` on its first submits, then serves from ``inner``; records ``close()``."""

    def __init__(self, inner: RemoteConnection, errors: list[BaseException]) -> None:
        super().__init__("failing", "g")
        self.inner, self.errors, self.closed = inner, list(errors), False
        self.headers: dict[str, str] | None = None

    def submit(self, bytecode: Any) -> RemoteTraversal:
        if self.errors:
            raise self.errors.pop(0)
        return self.inner.submit(bytecode)

    def close(self) -> None:
        self.closed = True


def gremlin_status(code: int, message: str) -> GremlinServerError:
    return GremlinServerError({"code": code, "message": message, "attributes": {}})


def test_concurrent_modification_is_retried_with_full_jitter() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("ConcurrentModificationException", times=2)
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED
    assert sleeps == [0.5 * 0.025, 0.5 * 0.05]  # uniform(0, base·2ⁿ), pinned to its middle here
    assert store.states(S, ["m1"])["m1"].version == 1


def test_backoff_grows_to_its_cap_and_jitters_over_the_whole_range() -> None:
    top = Backoff(base_s=0.1, cap_s=0.3, random=lambda: 1.0)
    assert [top.delay(n) for n in range(4)] == pytest.approx([0.1, 0.2, 0.3, 0.3])
    assert Backoff(random=lambda: 0.0).delay(5) == 0.0


def test_retries_are_bounded() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("ConcurrentModificationException", times=HALF.attempts)
    with pytest.raises(StoreUnavailable) as caught:
        store.upsert_memory(rec("m1"))
    assert caught.value.details["code"] == "ConcurrentModificationException"
    assert len(sleeps) == HALF.attempts - 1


@pytest.mark.parametrize("code", ["ThrottlingException", "TimeLimitExceededException"])
def test_other_transient_neptune_errors_are_retried(code: str) -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next(code)
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED and len(sleeps) == 1


def test_a_server_side_timeout_is_retried_a_server_fault_is_unavailable() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(Failing(server, [gremlin_status(598, "evaluation exceeded 30000 ms")]), sleeps)
    assert store.states(S, ["m1"]) == {} and len(sleeps) == 1
    sleeps.clear()
    store = store_on(Failing(server, [gremlin_status(500, "java.lang.NullPointerException")]), sleeps)
    with pytest.raises(StoreUnavailable) as caught:
        store.states(S, ["m1"])
    assert caught.value.details["code"] == 500 and sleeps == []


def test_invalid_requests_are_not_retried() -> None:
    server, sleeps = FakeGremlinServer(), []  # type: ignore[var-annotated]
    store = store_on(server, sleeps)
    server.fail_next("MalformedQueryException")
    with pytest.raises(StoreUnavailable) as caught:
        store.states(S, ["m1"])
    assert caught.value.details["code"] == "MalformedQueryException" and sleeps == []
    sent = len(server.submitted)
    with pytest.raises(ValidationFailed):
        store.link(S, [Edge("a", "b", "LIKES")])
    assert len(server.submitted) == sent and sleeps == []


def test_a_bug_is_not_mistaken_for_an_outage() -> None:
    store = store_on(Failing(FakeGremlinServer(), [TypeError("unsupported operand")]))
    with pytest.raises(TypeError):
        store.states(S, ["m1"])


def _handshake(status: int) -> aiohttp.WSServerHandshakeError:
    return aiohttp.WSServerHandshakeError(None, (), status=status, message="Invalid response status")  # type: ignore[arg-type]


BROKEN: dict[str, BaseException] = {
    "handshake-503": _handshake(503),
    "handshake-403": Exception("Failed to connect to server: HTTP Error code 403 - Forbidden."),
    "server-disconnected": aiohttp.ServerDisconnectedError(),
    "connection-reset": ConnectionResetError(104, "Connection reset by peer"),
    "read-timeout": TimeoutError(),
    "closed-by-server": RuntimeError("Connection was closed by server."),
}


@pytest.mark.parametrize("error", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_connection_is_dropped_and_redialled(error: BaseException) -> None:
    server, built = FakeGremlinServer(), []  # type: ignore[var-annotated]

    def connect() -> RemoteConnection:
        built.append(Failing(server, [] if built else [error]))
        return built[-1]

    store = NeptuneGraphStore(connect, sleep=lambda _: None, backoff=HALF)
    assert built == []  # nothing connects before the first call
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED
    assert len(built) == 2 and built[0].closed and not built[1].closed


@pytest.mark.parametrize("error", BROKEN.values(), ids=BROKEN.keys())
def test_an_outage_is_unavailable_and_the_call_after_it_redials(error: BaseException) -> None:
    server, built, sleeps, down = FakeGremlinServer(), [], [], [True]  # type: ignore[var-annotated]

    def connect() -> RemoteConnection:
        built.append(Failing(server, [error] * 9 if down[0] else []))
        return built[-1]

    store = NeptuneGraphStore(connect, sleep=sleeps.append, backoff=HALF)
    with pytest.raises(StoreUnavailable) as caught:
        store.neighbours(S, ["m1"], 2, 10)
    assert caught.value.details["error"] == type(error).__name__
    assert len(built) == HALF.redials + 1 and all(c.closed for c in built)
    assert len(sleeps) == HALF.redials
    down[0] = False
    assert store.neighbours(S, ["m1"], 2, 10) == []
    assert len(built) == HALF.redials + 2


def test_a_failover_redials_before_retrying() -> None:
    from support.fakes.fake_gremlin import neptune_error

    server, built = FakeGremlinServer(), []  # type: ignore[var-annotated]

    def connect() -> RemoteConnection:
        failover = neptune_error("ReadOnlyViolationException", "the writer is now a reader")
        built.append(Failing(server, [] if built else [failover]))
        return built[-1]

    store = NeptuneGraphStore(connect, sleep=lambda _: None, backoff=HALF)
    assert store.upsert_memory(rec("m1")) is ProjectionOutcome.APPLIED
    assert len(built) == 2 and built[0].closed


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


# ------------------------------------------------------------------ connections and IAM


class Dialled:
    """Stands in for ``DriverRemoteConnection``: records the url and options of every dial."""

    def __init__(self, server: RemoteConnection | None = None) -> None:
        self.server = server or FakeGremlinServer()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.conns: list[Failing] = []

    def __call__(self, url: str, source: str, **options: Any) -> RemoteConnection:
        self.calls.append((url, options))
        self.conns.append(Failing(self.server, []))
        self.conns[-1].headers = options["headers"]
        return self.conns[-1]


class Session:
    def __init__(self) -> None:
        self.region_name = "us-east-1"
        self.lookups = 0

    def get_credentials(self) -> Credentials:
        self.lookups += 1
        return Credentials("AKIDEXAMPLE", "secret", "token")


def test_one_connection_per_process_with_timeouts() -> None:
    dial = Dialled()
    connect = connection_factory("db.example", port=8182, dial=dial)
    assert dial.calls == []
    connect()
    url, options = dial.calls[0]
    assert url == "wss://db.example:8182/gremlin" and options["headers"] is None
    assert options["pool_size"] == 1 and options["max_workers"] == gremlin_client.WORKERS <= 2
    assert options["read_timeout"] > 0 and options["write_timeout"] > 0


def test_the_driver_takes_those_options_without_dialling() -> None:
    conn = connection_factory("ws://127.0.0.1:1/gremlin")()  # nothing listens there: nothing dials yet
    try:
        assert conn._client._pool_size == 1  # type: ignore[attr-defined]
        assert conn._client._executor._max_workers == gremlin_client.WORKERS  # type: ignore[attr-defined]
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("db.example", "wss://db.example:8182/gremlin"),
        ("wss://db.example:8182/gremlin", "wss://db.example:8182/gremlin"),
        ("ws://127.0.0.1:8183/gremlin", "ws://127.0.0.1:8183/gremlin"),
        ("https://db.example", "wss://db.example:8182/gremlin"),
    ],
)
def test_endpoints_become_gremlin_urls(endpoint: str, url: str) -> None:
    assert gremlin_url(endpoint, 8182)[0] == url


def test_a_non_gremlin_endpoint_refuses_to_start() -> None:
    with pytest.raises(ConfigurationError):
        connection_factory("ftp://db.example")


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


def test_a_reconnect_after_the_clock_advances_signs_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm container that lost its connection must not replay the cold start's signature
    (Neptune refuses one older than five minutes): every dial signs with the time of the dial."""
    now = [datetime(2026, 1, 5, 9, 0)]
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda *a, **k: now[0])
    session, dial = Session(), Dialled()
    connect = connection_factory(
        "db.cluster-abc.us-east-1.neptune.amazonaws.com", iam=True, session=session, dial=dial
    )
    assert session.lookups == 0  # nothing resolved or signed before the first call
    store = NeptuneGraphStore(connect, sleep=lambda _: None, backoff=HALF)
    store.upsert_memory(rec("m1"))
    now[0] += timedelta(minutes=6)
    dial.conns[0].errors.append(RuntimeError("Connection was closed by server."))
    assert store.states(S, ["m1"])["m1"].version == 1
    first, second = (c.headers or {} for c in dial.conns)
    assert (first["X-Amz-Date"], second["X-Amz-Date"]) == ("20260105T090000Z", "20260105T090600Z")
    assert first["Authorization"] != second["Authorization"] and session.lookups == 2


def test_the_adapter_module_still_exports_the_factory() -> None:
    assert neptune_graph.connection_factory is connection_factory  # the wiring imports it from there
