"""The embedded graph store's walk cache (adapters/embedded/graph_store.py): a repeated walk is
answered without reading the edges again, and any change of the file — through this instance,
another instance in this process, or another process's connection — is seen by the next walk."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from agentmem.adapters.embedded.graph_store import LocalGraphStore
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs, Status
from agentmem.ports import Edge

S = Scope("t", "u")
OTHER = Scope("t", "v")
T0 = datetime(2026, 1, 5, tzinfo=UTC)
VIA = ("FOLLOWS", "SIMILAR_TO")


def _record(n: int, scope: Scope = S, content: str | None = None) -> MemoryRecord:
    return MemoryRecord(
        scope=scope,
        memory_id=f"m{n:03d}",
        content=content or f"fact {n}",
        category=Category.FACT,
        source_refs=SourceRefs("s1", (f"msg{n}",)),
        created_at=T0,
    )


def _chain(store: LocalGraphStore, count: int, scope: Scope = S) -> None:
    for n in range(count):
        store.upsert_memory(_record(n, scope))
    store.link(scope, [Edge(f"m{n:03d}", f"m{n + 1:03d}", "FOLLOWS") for n in range(count - 1)])


def _ids(store: LocalGraphStore, seed: str = "m000", scope: Scope = S) -> list[str]:
    return [n.memory_id for n in store.neighbours(scope, [seed], 2, 20, via=VIA)]


def test_a_repeated_walk_reads_no_edges(tmp_path: Path) -> None:
    store = LocalGraphStore(tmp_path / "graph.db")
    _chain(store, 5)
    first = store.neighbours(S, ["m000"], 2, 20, via=VIA)
    conn = store._db._connection()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        again = store.neighbours(S, ["m000"], 2, 20, via=VIA)
    finally:
        conn.set_trace_callback(None)
    assert again == first
    assert [n.memory_id for n in first] == ["m001", "m002"]
    assert not [sql for sql in statements if "edges" in sql or "vertices" in sql]


def test_the_answer_is_a_copy(tmp_path: Path) -> None:
    store = LocalGraphStore(tmp_path / "graph.db")
    _chain(store, 3)
    store.neighbours(S, ["m000"], 2, 20, via=VIA).clear()
    assert _ids(store) == ["m001", "m002"]


def test_a_write_through_the_same_instance_is_seen(tmp_path: Path) -> None:
    store = LocalGraphStore(tmp_path / "graph.db")
    _chain(store, 3)
    assert _ids(store) == ["m001", "m002"]
    store.upsert_memory(_record(9))
    store.link(S, [Edge("m000", "m009", "SIMILAR_TO", weight=2.0)])
    assert _ids(store)[0] == "m009"
    store.upsert_memory(replace(_record(1), status=Status.SUPERSEDED, version=2))
    assert "m001" not in _ids(store)  # walked through, no longer returned
    store.erase_scope(S)
    assert _ids(store) == []


def test_a_write_through_another_instance_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    reader, writer = LocalGraphStore(path), LocalGraphStore(path)
    _chain(writer, 3)
    assert _ids(reader) == ["m001", "m002"]
    writer.delete_memory(S, "m002", version=5)
    assert _ids(reader) == ["m001"]
    writer.upsert_memory(_record(7))
    writer.link(S, [Edge("m001", "m007", "FOLLOWS")])
    assert _ids(reader) == ["m001", "m007"]


def test_a_commit_of_another_connection_is_seen(tmp_path: Path) -> None:
    """Another process writes through its own connection: SQLite's data_version moves."""
    path = tmp_path / "graph.db"
    store = LocalGraphStore(path)
    _chain(store, 3)
    assert _ids(store) == ["m001", "m002"]
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute(
            "UPDATE vertices SET status = 'quarantined' WHERE pk = ? AND vertex_id = 'm001'", (S.key,)
        )
    finally:
        other.close()
    assert _ids(store) == ["m002"]


def test_walks_are_kept_per_scope_and_query(tmp_path: Path) -> None:
    store = LocalGraphStore(tmp_path / "graph.db")
    _chain(store, 4)
    _chain(store, 2, OTHER)
    assert _ids(store) == ["m001", "m002"]
    assert _ids(store, scope=OTHER) == ["m001"]
    assert [n.memory_id for n in store.neighbours(S, ["m000"], 1, 20, via=VIA)] == ["m001"]
    assert [n.memory_id for n in store.neighbours(S, ["m000"], 2, 1, via=VIA)] == ["m001"]
    assert store.neighbours(S, ["m000"], 2, 20, via=("CAUSES",)) == []
    assert _ids(store, seed="m001") == ["m002", "m000", "m003"]  # newer id first within a hop
