"""The embedded search index's graph (HNSW) k-NN past its threshold: close to the exact scan,
exact scores, kept in step with writes (also those made while it is built), duplicates as one
node, and the index wired to it. Below the threshold the scan answers, as before."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.embedded import vectors
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedded.vectors import VectorMatrix
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import Hit

DIM = 32
RNG_SEED = 11


def clustered(n: int, seed: int = RNG_SEED) -> np.ndarray:
    """``n`` vectors around 20 centres (what model embeddings look like), L2-normalised."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, DIM))
    rows = centres[rng.integers(0, 20, n)] + 0.35 * rng.normal(size=(n, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def matrix_of(rows: np.ndarray, **options: object) -> VectorMatrix:
    return VectorMatrix(DIM, [f"m{i:05d}" for i in range(len(rows))], rows, **options)  # type: ignore[arg-type]


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def recall_at(found: list[Hit], exact: list[Hit], k: int) -> float:
    """Share of ``found[:k]`` scoring at least the exact k-th score (ties count as found)."""
    kth = exact[k - 1].score
    return sum(1 for h in found[:k] if h.score >= kth - 1e-6) / k


def test_below_the_threshold_the_scan_answers() -> None:
    rows = clustered(300)
    graphless, scanning = matrix_of(rows, ann_min=0), matrix_of(rows, ann_min=10_000, background=False)
    for q in clustered(10, seed=3):
        assert scanning.search(q, 10) == graphless.search(q, 10)
    assert not scanning.approximate()


def test_past_the_threshold_the_graph_finds_what_the_scan_finds_with_exact_scores() -> None:
    rows = clustered(3000)
    exact, graph = matrix_of(rows, ann_min=0), matrix_of(rows, ann_min=1000, background=False)
    queries = clustered(50, seed=5)
    total = 0.0
    for q in queries:
        found, truth = graph.search(q, 10), exact.search(q, 10)
        total += recall_at(found, truth, 10)
        for hit in found:  # the graph proposes, the matrix scores: the exact cosine
            row = rows[int(hit.memory_id[1:])]
            assert abs(hit.score - float(row @ q)) < 1e-5
    assert graph.approximate()
    assert total / len(queries) >= 0.98


def test_the_graph_follows_puts_updates_and_removes() -> None:
    rows = clustered(1500)
    graph = matrix_of(rows, ann_min=1000, background=False)
    assert graph.wait()
    rng = np.random.default_rng(2)
    new = unit(rng.normal(size=DIM))
    graph.put("fresh", new)
    assert graph.search(new, 1)[0].memory_id == "fresh"
    moved = unit(rng.normal(size=DIM))
    graph.put("m00007", moved)  # an update: the old place no longer answers
    assert graph.search(moved, 1)[0].memory_id == "m00007"
    assert "m00007" not in [h.memory_id for h in graph.search(rows[7], 5)]
    graph.remove("fresh")
    assert "fresh" not in [h.memory_id for h in graph.search(new, 20)]


def test_identical_vectors_are_one_node_and_every_copy_answers() -> None:
    rows = clustered(1200)
    rows[100:400] = rows[100]  # 300 copies of one vector
    graph = matrix_of(rows, ann_min=1000, background=False)
    hits = graph.search(rows[100], 50)
    assert len(hits) == 50 and all(abs(h.score - 1.0) < 1e-5 for h in hits)
    for i in range(100, 399):
        graph.remove(f"m{i:05d}")
    assert [h.memory_id for h in graph.search(rows[100], 1)] == ["m00399"]
    graph.remove("m00399")
    assert all(h.score < 0.9999 for h in graph.search(rows[100], 5))


def test_writes_made_while_the_graph_is_built_are_replayed_onto_it(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    build = vectors._Graph.build

    def held(cls: type, *args: Any) -> Any:  # the build finishes only when the test says so
        gate.wait(60)
        return build(*args)

    monkeypatch.setattr(vectors._Graph, "build", classmethod(held))
    rows = clustered(2500)
    graph = matrix_of(rows, ann_min=1000)  # built on a thread
    exact = matrix_of(rows, ann_min=0)
    q = clustered(1, seed=9)[0]
    assert graph.search(q, 10) == exact.search(q, 10)  # the scan answers until the graph is ready
    assert not graph.approximate()
    rng = np.random.default_rng(4)
    late = unit(rng.normal(size=DIM))
    graph.put("late", late)
    graph.remove("m00001")
    gate.set()
    assert graph.wait(timeout=60)
    assert graph.search(late, 1)[0].memory_id == "late"
    assert "m00001" not in [h.memory_id for h in graph.search(rows[1], 10)]


def test_many_removes_wear_the_graph_out_and_it_is_built_again() -> None:
    rows = clustered(2400)
    graph = matrix_of(rows, ann_min=1000, background=False)
    assert graph.wait()
    for i in range(1300):
        graph.remove(f"m{i:05d}")
    assert not graph.approximate()  # 1300 removed nodes against 1100 live: dropped
    hits = graph.search(rows[2000], 5)  # the next query builds it again (here in the foreground)
    assert graph.approximate()
    assert hits[0].memory_id == "m02000"
    assert all(int(h.memory_id[1:]) >= 1300 for h in hits)


def test_the_index_answers_through_the_graph_past_its_threshold(tmp_path: Path) -> None:
    scope = Scope("t1", "u1")
    at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    rows = clustered(1200)
    path = tmp_path / "search.db"
    index = LocalSearchIndex(path, ann_min_vectors=1000)
    for i, row in enumerate(rows):
        index.upsert(
            MemoryRecord(
                scope=scope,
                memory_id=f"m{i:05d}",
                content=f"memory {i}",
                category=Category.FACT,
                embedding=tuple(float(x) for x in row),
                embedding_model="test",
                created_at=at,
            )
        )
    exact = LocalSearchIndex(path, ann_min_vectors=0)
    assert index.settle(scope, timeout=60)
    q = clustered(1, seed=8)[0]
    found, truth = index.knn(scope, q, 10, "test"), exact.knn(scope, q, 10, "test")
    assert recall_at(found, truth, 10) >= 0.9
    index.delete(scope, found[0].memory_id, 1)
    assert found[0].memory_id not in [h.memory_id for h in index.knn(scope, q, 10, "test")]


def test_a_readers_graph_follows_another_writers_changes_without_a_rebuild(tmp_path: Path) -> None:
    scope = Scope("t1", "u1")
    at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    path = tmp_path / "search.db"
    writer = LocalSearchIndex(path, ann_min_vectors=0)
    reader = LocalSearchIndex(path, ann_min_vectors=1000, ann_background=False)

    def record(memory_id: str, row: np.ndarray) -> MemoryRecord:
        return MemoryRecord(
            scope=scope,
            memory_id=memory_id,
            content=memory_id,
            category=Category.FACT,
            embedding=tuple(float(x) for x in row),
            embedding_model="test",
            created_at=at,
        )

    for i, row in enumerate(clustered(1100)):
        writer.upsert(record(f"m{i:05d}", row))
    assert reader.settle(scope, timeout=60)
    matrix = next(iter(reader._caches[scope.key].vectors.values()))  # type: ignore[union-attr]
    graph = matrix._graph
    new = unit(np.random.default_rng(6).normal(size=DIM))
    writer.upsert(record("late", new))
    assert reader.knn(scope, new, 1, "test")[0].memory_id == "late"
    assert matrix._graph is graph and reader.approximate(scope)


def test_close_stops_a_build_between_chunks_and_the_scan_still_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors, "BUILD_CHUNK", 100)
    entered, gate = threading.Event(), threading.Event()
    chunks: list[int] = []
    new_graph = vectors._Graph.__init__

    def slow_graph(self: Any, dim: int) -> None:
        new_graph(self, dim)
        add = self.index.add

        def held_add(keys: Any, rows: Any, **options: Any) -> Any:
            chunks.append(len(keys))
            entered.set()
            gate.wait(60)  # the first chunk holds until the test has asked to close
            return add(keys, rows, **options)

        self.index.add = held_add

    monkeypatch.setattr(vectors._Graph, "__init__", slow_graph)
    rows = clustered(2500)
    graph = matrix_of(rows, ann_min=1000)  # built on a thread
    exact = matrix_of(rows, ann_min=0)
    q = clustered(1, seed=9)[0]
    graph.search(q, 10)  # starts the build
    assert entered.wait(60)
    building = graph._building
    assert isinstance(building, threading.Thread)
    threading.Timer(0.2, gate.set).start()
    graph.close(timeout=60)
    assert not building.is_alive()
    assert chunks == [100]  # stopped after the chunk it was in, not the 24 left
    assert graph.search(q, 10) == exact.search(q, 10)
    assert not graph.approximate() and not graph.wait(timeout=1)


def test_a_process_that_exits_during_a_build_exits_cleanly() -> None:
    """usearch inside a build on a daemon thread at interpreter exit aborted the process
    (C++: "terminate called without an active exception", signal 6); the atexit hook stops it."""
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "from agentmem.adapters.embedded.vectors import VectorMatrix\n"
        "rng = np.random.default_rng(1)\n"
        "rows = rng.normal(size=(20000, 64)).astype(np.float32)\n"
        "m = VectorMatrix(64, [f'm{i}' for i in range(20000)], rows, ann_min=1000)\n"
        "m.search(rows[0], 5)\n"
        "assert m._building is not None\n"
        # A slow teardown, so the build returns while the interpreter finalises (what aborted).
        "junk = [{i: str(i)} for i in range(3_000_000)]\n"
        "assert m._building.is_alive()\n"
        "print('exiting during the build', flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "exiting during the build" in done.stdout
    assert "terminate called" not in done.stderr
