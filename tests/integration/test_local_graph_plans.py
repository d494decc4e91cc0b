"""The embedded graph store's writes read by index, not by walking the user's edges: removing a
memory (and the entities it leaves orphaned) costs the same with 10 edges as with 10,000. Every
statement that touches ``edges`` while a memory is deleted is planned against an index on both of
its keys (``pk`` and ``src`` or ``dst``); "src = ? OR dst = ?" planned as a walk of the user's
whole ``pk`` range, and grew with the user."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from agentmem.adapters.embedded.graph_store import LocalGraphStore
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.ports import Edge

S = Scope("t", "u")
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def _record(n: int) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=f"m{n:03d}",
        content=f"fact {n}",
        category=Category.FACT,
        source_refs=SourceRefs("s1", (f"msg{n}",)),
        created_at=T0,
        entities=("tea",),
    )


def test_deleting_a_memory_reads_edges_by_index_only(tmp_path: Path) -> None:
    store = LocalGraphStore(tmp_path / "graph.db")
    for n in range(30):
        store.upsert_memory(_record(n))
        store.link_entities(S, f"m{n:03d}", ("tea",))
    store.link(S, [Edge(f"m{n:03d}", f"m{n + 1:03d}", "FOLLOWS") for n in range(29)])
    conn = store._db._connection()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        store.delete_memory(S, "m010", version=1)
    finally:
        conn.set_trace_callback(None)
    plans = []
    probe = sqlite3.connect(tmp_path / "graph.db")
    for sql in statements:
        if " edges " not in f" {sql} " and "FROM edges" not in sql:
            continue
        plans += [row[3] for row in probe.execute(f"EXPLAIN QUERY PLAN {sql}")]
    edge_steps = [p for p in plans if "edges" in p]
    assert edge_steps, statements
    assert all("src=?" in p or "dst=?" in p for p in edge_steps), edge_steps
    assert store.neighbours(S, ["m009"], 1, 10) and all(
        n.memory_id != "m010" for n in store.neighbours(S, ["m009"], 1, 10)
    )
