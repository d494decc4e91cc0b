"""Against a real Gremlin server (Neptune, or TinkerPop's Gremlin Server) — only when
``AGENTMEM_GREMLIN_URL`` is set (see docs/aws.md "Live checks"; the GraphStore contract suite
also gains a ``live`` run then). Fresh scopes per process, erased afterwards, so xdist workers
and concurrent runs can share one server. The outage tests take
the server away for real: a closed port, and a loopback proxy (:mod:`support.tcp_proxy`) that
resets every connection mid-use and later comes back."""

from __future__ import annotations

import dataclasses
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlparse

import pytest

from agentmem.adapters.aws.gremlin_client import Backoff, connection_factory
from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
from agentmem.bootstrap import Container, bootstrap
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs, Turn
from agentmem.errors import StoreUnavailable
from agentmem.ports import Edge, Neighbour, ProjectionOutcome
from agentmem_dev.emulator.runner import LocalRunner
from support import engine_run
from support.fakes import live
from support.tcp_proxy import TcpProxy

pytestmark = [
    pytest.mark.gremlin,
    pytest.mark.skipif(
        engine_run.skip_reason("gremlin") is not None,
        reason=f"gremlin engine: {engine_run.skip_reason('gremlin')}",
    ),
]
S = Scope("live", f"u-{uuid.uuid4().hex[:8]}")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NO_WAIT = Backoff(random=lambda: 0.0)


@pytest.fixture
def graph() -> Iterator[NeptuneGraphStore]:
    store = NeptuneGraphStore(live.gremlin_connection(engine_run.engine_url("gremlin")))
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


def test_updates_keep_one_value_per_property(graph: NeptuneGraphStore) -> None:
    """The server runs with *set* cardinality by default, as Neptune does: each update must replace."""
    graph.upsert_memory(rec("a"))
    graph.upsert_memory(rec("a").evolve(now=T0, content="v2"))
    vid = f"{S.key}#MEM#a"
    assert graph._run(lambda g, key: g.V(key).values("version"), vid) == [2]
    assert len(graph._run(lambda g, key: g.V(key).values("content_hash"), vid)) == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _with_graph(container: Container, graph: NeptuneGraphStore) -> Container:
    return bootstrap(
        container.settings, dataclasses.replace(container.adapters, graph=graph), container.clock
    )


def _turns(c: Container, scope: Scope) -> None:
    for i, text in enumerate(["My sister lives in Auckland.", "My sister has a dog called Rex."]):
        at = T0 + timedelta(minutes=i)
        turn = Turn(scope=scope, session_id="s1", user=text, assistant="", at=at, message_id=f"m{i}")
        c.pipeline.ingest(turn)
    LocalRunner(c).drain()


def test_a_closed_port_is_degraded_not_an_error(container: Container, api: Any) -> None:
    down = NeptuneGraphStore(
        connection_factory(f"ws://127.0.0.1:{_closed_port()}/gremlin"), backoff=NO_WAIT, sleep=lambda _: None
    )
    with pytest.raises(StoreUnavailable) as caught:
        down.neighbours(S, ["a"], 2, 10)
    assert caught.value.details["error"] in (
        "ClientConnectorError",
        "ClientOSError",
        "ConnectionRefusedError",
    )
    _turns(container, Scope("t1", "u1"))
    c = _with_graph(container, down)
    result = c.recall.recall(Scope("t1", "u1"), "where does my sister live", k=3, now=T0 + timedelta(days=1))
    assert result.degraded == ["graph"] and result.memories
    status, body = type(api)(c)("POST", "/v1/recall", {"query": "where does my sister live", "k": 3})
    assert status == 200 and body["degraded"] == ["graph"]


def test_a_server_lost_mid_use_degrades_and_the_next_call_reconnects(container: Container) -> None:
    url = urlparse(engine_run.engine_url("gremlin"))
    scope = Scope(f"live-{uuid.uuid4().hex[:8]}", "u1")
    with TcpProxy(url.hostname or "127.0.0.1", url.port or 8182) as proxy:
        target = f"{url.scheme}://127.0.0.1:{proxy.port}{url.path}"
        graph = NeptuneGraphStore(
            connection_factory(target, read_timeout_s=10), backoff=NO_WAIT, sleep=lambda _: None
        )
        c = _with_graph(container, graph)
        try:
            _turns(c, scope)  # projected into the real server through the proxy
            later = T0 + timedelta(days=1)
            assert c.recall.recall(scope, "my sister", k=3, now=later).degraded == []
            assert len(graph.all_states(scope)) == 2

            proxy.cut()  # every socket reset, the port closed
            result = c.recall.recall(scope, "my sister", k=3, now=later)
            assert result.degraded == ["graph"] and result.memories
            with pytest.raises(StoreUnavailable):
                graph.all_states(scope)

            proxy.resume()  # the server is back: the adapter dials anew
            assert c.recall.recall(scope, "my sister", k=3, now=later).degraded == []
            assert len(graph.all_states(scope)) == 2
        finally:
            proxy.resume()
            graph.erase_scope(scope)


def test_the_tombstone_version_travels_as_a_long(graph: NeptuneGraphStore) -> None:
    """The projector deletes erased memories at 2**53, beyond a 32-bit Int on the wire."""
    from agentmem.services.projector import TOMBSTONE_VERSION

    graph.upsert_memory(rec("big"))
    assert graph.delete_memory(S, "big", TOMBSTONE_VERSION) is ProjectionOutcome.APPLIED
    assert graph.upsert_memory(rec("big")) is ProjectionOutcome.STALE  # the tombstone holds
    assert graph.delete_memory(S, "never-seen", TOMBSTONE_VERSION) is not None
