"""The embedded search index's vectors: one float32 matrix per (model, dimension) of a scope, exact
cosine k-NN over it, and above a size an approximate (HNSW) candidate search that the same matrix
re-scores.

:class:`VectorMatrix` holds L2-normalised rows; rows are reused after deletes. Its k-NN is one
matrix-vector product while the matrix holds fewer than ``ann_min`` live vectors: exact, what the
index has always answered. From ``ann_min`` on (20k by default) a scan reads the whole matrix per
query (100 MB at 100k × 256-d, ~8–10 ms on one core), so the matrix keeps an HNSW graph
(:class:`_Graph`, ``usearch``) of its distinct vectors: the graph proposes
:data:`ANN_CANDIDATES` (at least ``k``) nodes, the matrix scores each once (the rows of a node are
one vector) and the best ``k`` rows are returned — the scores are the exact cosines, only the
candidate set is approximate.

- **Duplicates.** Identical vectors (the same text stored twice) are one graph node standing for
  all their rows: HNSW's neighbour lists fill up with zero-distance copies otherwise, and the
  graph falls apart into cliques (on the bench's data, where 63 % of 100k rows repeat another,
  recall@10 stayed at 0.6–0.8 whatever the parameters).
- **Built off the query path.** Building the graph takes seconds (~15 s of one core for the
  bench's 37k distinct 256-d vectors; ``usearch`` releases the GIL while it builds), so the first query past the
  threshold starts a build on a thread from a copy of the live rows and the queries stay exact
  until it is done. Writes made meanwhile are remembered and replayed onto the graph when a query
  or a write installs it, so the graph never misses a row the matrix has. The build adds
  :data:`BUILD_CHUNK` nodes at a time and stops between chunks when the matrix is closed (the
  index closing, its scope evicted or erased) or the process exits (an ``atexit`` hook joins it):
  a build still inside ``usearch`` when the interpreter finalised aborted the process (signal 6).
- **Kept in step.** Every put and remove updates the graph; removed nodes are only marked by
  ``usearch``, so once they outnumber the live ones the graph is built again.

The graph's parameters (:data:`CONNECTIVITY`, :data:`EXPANSION_ADD`, :data:`EXPANSION_SEARCH`)
are set for the ``hash`` embedder's vectors, sparse and nearly orthogonal, the hard case for a
graph index: on the bench's 100k (37k distinct vectors, 200 queries) ``ef`` 128 found 0.90 of
the exact top 10, 256 all of them (0.995 of the top 50), 384 all of both, for ~3.4 ms of CPU
against ~8–10 ms for the scan on a quiet core (docs/performance.md, "100k"). Model embeddings
are dense and clustered, the case graph indexes are tuned for; they were not measured at 100k
here (filling that through an embedding model takes ~40 minutes).

The module runs over 400 lines: the matrix, its graph and the build's life cycle read together.
"""

from __future__ import annotations

import atexit
import heapq
import logging
import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentmem.adapters.embedded.text_index import top_hits
from agentmem.ports import Hit

log = logging.getLogger(__name__)

ANN_MIN_VECTORS = 20_000
"""Live vectors of one (scope, model) from which k-NN goes through the graph (0: never)."""
ANN_CANDIDATES = 100
PRODUCT_FROM = 3  # queries from which search_many scans with one matrix-matrix product
CONNECTIVITY = 32
EXPANSION_ADD = 256
EXPANSION_SEARCH = 384
BUILD_CHUNK = 2048  # nodes added per call while building: how soon a build stops on close


_RUNNING: set[VectorMatrix] = set()  # matrices with a build on a thread; stopped at exit


@atexit.register
def _stop_builds() -> None:
    """Stop and join every running build before the interpreter finalises (see
    :meth:`VectorMatrix.close`); atexit runs after non-daemon threads are joined, while the build
    threads still run."""
    for matrix in list(_RUNNING):
        matrix.close(timeout=10.0)


def normalised(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 and math.isfinite(norm) else np.zeros_like(vector)


def search_each(
    matrices: dict[tuple[str, int], VectorMatrix], vectors: Sequence[np.ndarray], k: int, model: str
) -> list[list[Hit]]:
    """The k-NN of each of ``vectors`` in a scope's ``matrices`` (by (model, dimension)), in
    order; one product per dimension (:meth:`VectorMatrix.search_many`). A vector that is empty,
    zero or not finite, or of a dimension the scope holds none of, finds nothing."""
    queries = [np.asarray(v, dtype=np.float32).ravel() for v in vectors]
    out: list[list[Hit]] = [[] for _ in queries]
    by_size: dict[int, list[int]] = {}
    for i, query in enumerate(queries):
        if k > 0 and query.size and np.all(np.isfinite(query)) and np.any(query):
            by_size.setdefault(int(query.size), []).append(i)
    for size, rows in by_size.items():
        matrix = matrices.get((model, size))
        if matrix is not None:
            found = matrix.search_many(np.stack([normalised(queries[i]) for i in rows]), k)
            for i, hits in zip(rows, found, strict=True):
                out[i] = hits
    return out


class _Graph:
    """An HNSW graph of distinct vectors; a node (key) stands for every slot with that vector."""

    def __init__(self, dim: int) -> None:
        from usearch.index import Index

        self.index = Index(
            ndim=dim,
            metric="ip",
            dtype="f32",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        self.key_of_vector: dict[bytes, int] = {}
        self.vector_of_key: dict[int, bytes] = {}
        self.slots_of: dict[int, list[int]] = {}
        self.key_of_slot: dict[int, int] = {}
        self.next_key = 0
        self.dead = 0

    @classmethod
    def build(
        cls, dim: int, slots: np.ndarray, rows: np.ndarray, stop: threading.Event | None = None
    ) -> _Graph | None:
        """The graph of ``rows`` (one per slot); runs without the index's lock (a copy). Added
        :data:`BUILD_CHUNK` nodes at a time, so that a set ``stop`` (the index closing) ends the
        build within one chunk: ``None`` then."""
        graph = cls(dim)
        keys: list[int] = []
        first: list[int] = []
        for i, slot in enumerate(slots.tolist()):
            raw = rows[i].tobytes()
            key = graph.key_of_vector.get(raw)
            if key is None:
                key = graph._new_key(raw)
                keys.append(key)
                first.append(i)
            graph.slots_of[key].append(slot)
            graph.key_of_slot[slot] = key
        for start in range(0, len(keys), BUILD_CHUNK):
            if stop is not None and stop.is_set():
                return None
            chunk = slice(start, start + BUILD_CHUNK)
            graph.index.add(np.asarray(keys[chunk], dtype=np.uint64), rows[first[chunk]], threads=1)
        return graph

    def _new_key(self, raw: bytes) -> int:
        key = self.key_of_vector[raw] = self.next_key
        self.vector_of_key[key] = raw
        self.slots_of[key] = []
        self.next_key += 1
        return key

    def add(self, slot: int, row: np.ndarray) -> None:
        raw = row.tobytes()
        key = self.key_of_vector.get(raw)
        if key is None:
            key = self._new_key(raw)
            self.index.add(key, row, threads=1)
        self.slots_of[key].append(slot)
        self.key_of_slot[slot] = key

    def remove(self, slot: int) -> None:
        key = self.key_of_slot.pop(slot, None)
        if key is None:
            return
        slots = self.slots_of[key]
        slots.remove(slot)
        if not slots:
            del self.slots_of[key]
            del self.key_of_vector[self.vector_of_key.pop(key)]
            self.index.remove(key)
            self.dead += 1

    @property
    def worn(self) -> bool:
        """Removed nodes outnumber the live ones: time to build again."""
        return self.dead > max(1000, len(self.slots_of))

    def nearest(self, query: np.ndarray, count: int) -> list[list[int]]:
        """The slots of each of the ``count`` nodes nearest to ``query`` (one list per node)."""
        if not self.slots_of:
            return []
        found = self.index.search(query, min(count, len(self.slots_of)), threads=1)
        slots_of = self.slots_of
        return [slots_of[key] for key in found.keys.tolist() if key in slots_of]


class VectorMatrix:
    """One (model, dimension) matrix of a scope: exact k-NN, through a graph from ``ann_min``
    live vectors (see the module). Callers serialise access (the search index's lock); only the
    graph's build runs on a thread of its own, on a copy."""

    def __init__(
        self,
        dim: int,
        ids: list[str] | None = None,
        matrix: np.ndarray | None = None,
        *,
        ann_min: int = ANN_MIN_VECTORS,
        background: bool = True,
    ) -> None:
        self.dim = dim
        self.ids: list[str | None] = list(ids or [])
        self.slot_of = {m: i for i, m in enumerate(self.ids) if m is not None}
        # Room for the writes after a load: growing copies the whole matrix (10 MB at 10k × 256-d),
        # which the first new memory of every loaded scope paid when the matrix was loaded full.
        size = len(self.ids) + max(16, len(self.ids) // 8)
        self.matrix = np.zeros((size, dim), dtype=np.float32)
        self.valid = np.zeros(size, dtype=bool)
        if matrix is not None and len(self.ids):
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self.matrix[: len(self.ids)] = np.divide(
                matrix, norms, out=np.zeros_like(matrix), where=norms > 0
            )
            self.valid[: len(self.ids)] = True
        self.free: list[int] = []
        self.ann_min = ann_min
        self.background = background
        self._graph: _Graph | None = None
        self._building: threading.Thread | None = None
        self._built: _Graph | None = None
        self._changed: set[int] = set()  # slots written while a build runs
        self._stop = threading.Event()  # set by close(): a running build gives up

    # ------------------------------------------------------------------ writes

    def put(self, memory_id: str, vector: np.ndarray) -> None:
        slot = self.slot_of.get(memory_id)
        if slot is None:
            if self.free:
                slot = self.free.pop()
            else:
                slot = len(self.ids)
                self.ids.append(None)
                if slot >= self.matrix.shape[0]:
                    grown = np.zeros((2 * self.matrix.shape[0], self.dim), dtype=np.float32)
                    grown[:slot] = self.matrix
                    self.matrix = grown
                    self.valid = np.concatenate([self.valid, np.zeros(self.valid.size, bool)])
            self.ids[slot] = memory_id
            self.slot_of[memory_id] = slot
        self.matrix[slot] = normalised(vector)
        self.valid[slot] = True
        self._touched(slot)

    def remove(self, memory_id: str) -> None:
        slot = self.slot_of.pop(memory_id, None)
        if slot is not None:
            self.ids[slot] = None
            self.valid[slot] = False
            self.free.append(slot)
            self._touched(slot)

    def _touched(self, slot: int) -> None:
        if self._building is not None:
            self._changed.add(slot)
        if self._graph is not None:
            self._graph.remove(slot)
            if self.valid[slot]:
                self._graph.add(slot, self.matrix[slot])
            if self._graph.worn:
                self._graph = None  # built again on the next query past the threshold

    # ------------------------------------------------------------------ queries

    def search(self, query: np.ndarray, k: int) -> list[Hit]:
        """The ``k`` nearest live rows to the normalised ``query``, best first (exact scores)."""
        graph = self._ready_graph()
        if graph is not None:
            return self._graph_search(graph, query, k)
        n = len(self.ids)
        scores = self.matrix[:n] @ query
        return top_hits(scores, self.ids, np.flatnonzero(self.valid[:n]), k)

    def search_many(self, queries: np.ndarray, k: int) -> list[list[Hit]]:
        """:meth:`search` of each row of ``queries`` (normalised): from :data:`PRODUCT_FROM`
        queries on, one matrix-matrix product over the rows for all of them; below, one
        matrix-vector product each (on one BLAS thread a product with 2 columns costs more than
        2 with one: 1.05 against 0.85 ms at 10k × 256-d; with 4, 1.08 against 1.84)."""
        graph = self._ready_graph()
        if graph is not None or len(queries) < PRODUCT_FROM:
            return [self._graph_search(graph, q, k) if graph else self.search(q, k) for q in queries]
        n = len(self.ids)
        live = np.flatnonzero(self.valid[:n])
        scores = np.ascontiguousarray((self.matrix[:n] @ queries.T).T)
        return [top_hits(row, self.ids, live, k) for row in scores]

    def _graph_search(self, graph: _Graph, query: np.ndarray, k: int) -> list[Hit]:
        """The graph's nearest nodes, each scored once on the matrix (its rows are one vector),
        best first; a node stands for all its rows, the newer ids first."""
        nodes = graph.nearest(query, max(k, ANN_CANDIDATES))
        if not nodes:
            return []
        scores = (self.matrix[[slots[0] for slots in nodes]] @ query).tolist()
        hits: list[Hit] = []
        for i in sorted(range(len(nodes)), key=scores.__getitem__, reverse=True):
            ids = [str(self.ids[s]) for s in nodes[i]]
            wanted = k - len(hits)
            best = heapq.nlargest(wanted, ids) if len(ids) > wanted else ids
            hits += [Hit(m, scores[i]) for m in best]
            if len(hits) >= k:
                break
        hits.sort(key=lambda h: h.memory_id, reverse=True)
        hits.sort(key=lambda h: -h.score)
        return hits

    def approximate(self) -> bool:
        """Whether k-NN goes through the graph now (starts nothing)."""
        return self._graph is not None and 0 < self.ann_min <= len(self.slot_of)

    def _ready_graph(self) -> _Graph | None:
        """The graph when it is built and the matrix is past the threshold; else ``None``, after
        starting (or, in the foreground, running) a build when one is due."""
        if self.ann_min <= 0 or len(self.slot_of) < self.ann_min:
            return None
        if self._built is not None:
            self._install(self._built)
        if self._graph is None and self._building is None:
            self._start_build()
            if self._built is not None:
                self._install(self._built)
        return self._graph

    def _start_build(self) -> None:
        n = len(self.ids)
        slots = np.flatnonzero(self.valid[:n])
        rows = self.matrix[slots].copy()
        self._changed = set()

        def build() -> None:
            try:
                self._built = _Graph.build(self.dim, slots, rows, self._stop)
            except (ImportError, RuntimeError, MemoryError, ValueError) as exc:  # the scan stays, for good
                log.warning(
                    "search_index.ann_build_failed",
                    extra={"vectors": int(slots.size), "error": type(exc).__name__},
                )
                self.ann_min = 0
                self._building = None
            finally:
                _RUNNING.discard(self)

        if not self.background:
            self._building = threading.current_thread()
            build()
            return
        self._building = threading.Thread(target=build, name="ann-build", daemon=True)
        _RUNNING.add(self)
        self._building.start()

    def _install(self, graph: _Graph) -> None:
        """Replay the writes made while ``graph`` was built, then use it."""
        for slot in sorted(self._changed):
            graph.remove(slot)
            if self.valid[slot]:
                graph.add(slot, self.matrix[slot])
        self._changed = set()
        self._built = None
        self._building = None
        self._graph = graph

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop a running build and wait for its thread (at most ``timeout`` s): a process must
        not exit while ``usearch`` is inside a build on a thread (C++ aborts the interpreter,
        "terminate called without an active exception", signal 6). The scan stays usable."""
        self._stop.set()
        building = self._building
        if isinstance(building, threading.Thread) and building is not threading.current_thread():
            building.join(timeout)
        self._built = None
        self._building = None
        self.ann_min = 0

    def wait(self, timeout: float | None = None) -> bool:
        """Start a build that is due and wait for it (tests, the bench); ``True`` when k-NN is
        approximate now."""
        self._ready_graph()
        building = self._building
        if isinstance(building, threading.Thread) and building is not threading.current_thread():
            building.join(timeout)
        if self._built is not None:
            self._install(self._built)
        return self.approximate()


def load_vectors(
    conn: Any, pk: str, **options: Any
) -> tuple[dict[tuple[str, int], VectorMatrix], dict[str, tuple[str, int]]]:
    """The scope's matrices by (model, dimension) and each memory's key, from ``doc_vectors``."""
    by_key: dict[tuple[str, int], tuple[list[str], list[bytes]]] = {}
    for memory_id, model, blob in conn.execute(
        "SELECT memory_id, model, vector FROM doc_vectors WHERE pk = ? ORDER BY memory_id", (pk,)
    ):
        if model is not None and blob:
            ids, blobs = by_key.setdefault((model, len(blob) // 4), ([], []))
            ids.append(memory_id)
            blobs.append(blob)
    vectors: dict[tuple[str, int], VectorMatrix] = {}
    keys: dict[str, tuple[str, int]] = {}
    for key, (ids, blobs) in by_key.items():
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), key[1])
        vectors[key] = VectorMatrix(key[1], ids, matrix, **options)
        keys.update(dict.fromkeys(ids, key))
    return vectors, keys


def write_vector(conn: Any, pk: str, memory_id: str, model: str | None, vector: np.ndarray | None) -> None:
    """Store ``vector`` (float32) as the document's, by ``model``; without either, the document
    has no vector row."""
    if model is None or vector is None or not vector.size:
        conn.execute("DELETE FROM doc_vectors WHERE pk = ? AND memory_id = ?", (pk, memory_id))
        return
    conn.execute(
        "INSERT OR REPLACE INTO doc_vectors (pk, memory_id, model, vector) VALUES (?, ?, ?, ?)",
        (pk, memory_id, model, np.asarray(vector, dtype="<f4").tobytes()),
    )


def limit_blas_threads(threads: int | None) -> None:
    """Limit the process's BLAS pools to ``threads`` (``None``: leave them): why, in
    :mod:`agentmem.adapters.embedded.search_index`."""
    if threads is None:
        return
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency
        log.warning("search_index.blas_threads_unlimited", extra={"reason": "threadpoolctl missing"})
        return
    # Set only when it differs: resizing a pool while another thread is inside BLAS is not safe.
    if any(p["user_api"] == "blas" and p["num_threads"] != threads for p in threadpool_info()):
        threadpool_limits(limits=threads, user_api="blas")
