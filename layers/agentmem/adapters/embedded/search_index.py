"""Embedded search index: cosine k-NN (numpy; an HNSW graph past 20k vectors of a scope) and
Okapi BM25 over CJK-aware terms.

A projection of the active memories, in its own SQLite file so it can be dropped and rebuilt
(tables and upgrades: :mod:`.index_schema`): ``docs`` (pk, memory_id, version, content_hash,
doc_len, the attribute reading of :mod:`agentmem.adapters.readings`, the card of
:mod:`.index_cards`), ``doc_vectors`` (model and float32 vector, apart so a ``docs`` row stays
small), ``doc_terms`` (each document's BM25 term counts) and ``tombstones`` (the version a document was
deleted at, so a late replay of an older version cannot resurrect it — what OpenSearch's
external versioning keeps).
Writes follow :class:`~agentmem.ports.ProjectionOutcome`: an older version, or the same version
with the same hash, is STALE; the same version with another hash is a CONFLICT (nothing written);
a newer version is APPLIED. A non-active record is not indexed: its upsert deletes the document.

Queries run on a per-scope in-memory cache, loaded lazily from SQLite (each part on its first
query): per (model, dimension) a float32 matrix of L2-normalised vectors (:mod:`.vectors`: the
exact scan, and from ``ann_min_vectors`` live vectors a graph whose candidates the matrix
re-scores, built on a thread while the scan answers), and an inverted index (term → slot and tf
arrays) with document lengths (:mod:`.text_index`: a query costs the postings of its terms). Writes
through this instance update the cache in place; each write also bumps a per-scope generation
counter in SQLite and stamps the rows it writes (documents, tombstones) with it, and a query that
finds the stored generation ahead of its cache's (another process or instance wrote: the projector
of ``agentmem serve --workers``) takes just the rows stamped since into the cache, matrix and graph
included — at 100k a reload costs seconds and the graph's build many more. Past an erase
(``reset_gen``) or :data:`CATCH_UP_LIMIT` changes the scope is reloaded. Updated or deleted text
documents leave dead slots behind (masked at query time); when they outnumber the live ones the
inverted index is reloaded. Only the most recently used scopes stay cached. Measured at 100k
memories of one user (hash embedder, 256-d; docs/performance.md, "100k"): the exact k-NN ~8–10 ms
of CPU, through the graph a few ms; BM25 ~1 ms; cold loads ~1.5 s (vectors) and ~2.5 s (terms),
then the graph's build on its thread.

BLAS threads: a k-NN query is one matrix-vector product, which OpenBLAS splits over the cores;
its idle workers spin, which doubled a context call's CPU time on 2 cores and took the caller's
core under load. So loading a scope's vectors limits the process's BLAS pools to
``blas_threads`` (1; ``None`` leaves them; ``threadpoolctl``): a server process handles one
request at a time, like a Lambda execution environment.

The module runs over 400 lines: the writes, the generation stamps they leave and the caches that
follow those stamps share one transaction, so they share one class; the vectors and their graph
are :mod:`.vectors`, the terms and BM25 :mod:`.text_index`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.adapters import record_json
from agentmem.adapters.embedded import index_cards, index_readings, index_schema
from agentmem.adapters.embedded.sqlite_base import (
    SqliteDatabase,
    bump_generation,
    projection_states,
)
from agentmem.adapters.embedded.text_index import InvertedIndex, bm25_terms
from agentmem.adapters.embedded.vectors import (
    ANN_MIN_VECTORS,
    VectorMatrix,
    limit_blas_threads,
    load_vectors,
    normalised,
    search_each,
    write_vector,
)
from agentmem.adapters.readings import reading_doc
from agentmem.domain.models import MemoryRecord, Scope
from agentmem.ports import Hit, ProjectionOutcome, ProjectionState, Reading

log = logging.getLogger(__name__)

CATCH_UP_LIMIT = 2000
"""Changes another writer made that a cached scope takes in place; more, and it is reloaded."""


def document_text(record: MemoryRecord) -> str:
    """What BM25 sees of a memory: its content, key and tags."""
    return " ".join([record.content, record.key or "", *record.tags])


@dataclass
class _ScopeCache:
    """What is cached of one scope; each part is loaded on its first query."""

    gen: int
    text: InvertedIndex | None = None
    vectors: dict[tuple[str, int], VectorMatrix] | None = None
    vector_key: dict[str, tuple[str, int]] = field(default_factory=dict)
    ann: dict[str, Any] = field(default_factory=dict)  # VectorMatrix options (the graph's threshold)
    cards: OrderedDict[str, MemoryRecord] = field(default_factory=OrderedDict)  # decoded, bounded
    # the ids of each listing, by (category, limit): index_cards.listing
    listings: dict[tuple[str, int], list[str] | None] = field(default_factory=dict)

    def drop(self, timeout: float | None = 0.0) -> None:
        """Stop the graph builds this cache started (waiting at most ``timeout`` s for each)."""
        for matrix in (self.vectors or {}).values():
            matrix.close(timeout)

    def remove(self, memory_id: str) -> None:
        self.cards.pop(memory_id, None)
        self.listings.clear()  # every change of a document passes here
        if self.text is not None:
            self.text.remove(memory_id)
        key = self.vector_key.pop(memory_id, None)
        if key is not None and self.vectors is not None:
            self.vectors[key].remove(memory_id)

    def add(
        self, memory_id: str, counts: dict[str, int], model: str | None, vector: np.ndarray | None
    ) -> None:
        self.remove(memory_id)
        if self.text is not None:
            self.text.add(memory_id, counts)
        if self.vectors is not None and model is not None and vector is not None and vector.size:
            key = (model, int(vector.size))
            if key not in self.vectors:
                self.vectors[key] = VectorMatrix(key[1], **self.ann)
            self.vectors[key].put(memory_id, vector)
            self.vector_key[memory_id] = key


class LocalSearchIndex:
    """:class:`agentmem.ports.SearchIndex` over one SQLite file (or ``":memory:"``)."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_cached_scopes: int = 64,
        blas_threads: int | None = 1,
        ann_min_vectors: int = ANN_MIN_VECTORS,
        ann_background: bool = True,
    ) -> None:
        self._db = SqliteDatabase(
            path, index_schema.SCHEMA, name="search_index", migrate=index_schema.migrate
        )
        self._ann = {"ann_min": ann_min_vectors, "background": ann_background}
        self._blas_threads = blas_threads
        self._lock = threading.RLock()
        self._caches: OrderedDict[str, _ScopeCache] = OrderedDict()
        self._max_cached = max(1, max_cached_scopes)

    def compact(self, min_free_fraction: float) -> bool:
        """:class:`agentmem.ports.Compactable`: this adapter's file."""
        return self._db.compact(min_free_fraction)

    def close(self) -> None:
        with self._lock:
            for cache in self._caches.values():
                cache.drop(timeout=30.0)  # a graph build on a thread must not outlive the process
            self._caches.clear()
            self._db.close()

    # ------------------------------------------------------------------ cache

    @staticmethod
    def _generation(conn: Any, pk: str) -> tuple[int, int]:
        """The scope's stored generation and the last one that reset it (an erase)."""
        row = conn.execute("SELECT gen, reset_gen FROM generations WHERE pk = ?", (pk,)).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def _scope(self, conn: Any, pk: str) -> _ScopeCache:
        """The scope's cache at the stored generation: what another writer changed since is taken
        in place (:meth:`_catch_up`); past a reset, or too much of it, the cache starts over."""
        gen, reset = self._generation(conn, pk)
        cache = self._caches.get(pk)
        if cache is not None and (
            cache.gen == gen or (reset <= cache.gen < gen and self._catch_up(conn, pk, cache, gen))
        ):
            self._caches.move_to_end(pk)
            return cache
        if cache is not None:
            cache.drop()
        cache = self._caches[pk] = _ScopeCache(gen=gen, ann=self._ann)
        while len(self._caches) > self._max_cached:
            self._caches.popitem(last=False)[1].drop()
        return cache

    @staticmethod
    def _catch_up(conn: Any, pk: str, cache: _ScopeCache, gen: int) -> bool:
        """Apply the documents written and deleted after ``cache.gen`` (inside the caller's read);
        ``False`` (nothing applied) when they are more than :data:`CATCH_UP_LIMIT`."""
        changed = conn.execute(
            "SELECT d.memory_id, v.model, v.vector FROM docs AS d INDEXED BY docs_by_gen"
            " LEFT JOIN doc_vectors AS v ON v.pk = d.pk AND v.memory_id = d.memory_id"
            f" WHERE d.pk = ? AND d.gen > ? LIMIT {CATCH_UP_LIMIT + 1}",
            (pk, cache.gen),
        ).fetchall()
        removed = conn.execute(
            "SELECT memory_id FROM tombstones INDEXED BY tombstones_by_gen WHERE pk = ? AND gen > ?"
            f" LIMIT {CATCH_UP_LIMIT + 1}",
            (pk, cache.gen),
        ).fetchall()
        if len(changed) + len(removed) > CATCH_UP_LIMIT:
            return False
        for (memory_id,) in removed:
            cache.remove(memory_id)
        for memory_id, model, blob in changed:
            counts: dict[str, int] = {}
            if cache.text is not None:
                row = conn.execute(
                    "SELECT terms FROM doc_terms WHERE pk = ? AND memory_id = ?", (pk, memory_id)
                ).fetchone()
                counts = {} if row is None else json.loads(row[0])
            vector = np.frombuffer(blob, dtype="<f4") if blob else None
            cache.add(memory_id, counts, model if vector is not None else None, vector)
        cache.gen = gen
        if cache.text is not None and cache.text.dead > max(1000, len(cache.text.slot_of)):
            cache.text = None  # compact, as after this instance's own writes
        return True

    def _text(self, pk: str) -> InvertedIndex:
        with self._db.read() as conn:  # one snapshot: generation and data agree
            cache = self._scope(conn, pk)
            if cache.text is None:
                cache.text = InvertedIndex.load(conn, pk)
            return cache.text

    def _vectors(self, pk: str) -> dict[tuple[str, int], VectorMatrix]:
        with self._db.read() as conn:
            cache = self._scope(conn, pk)
            if cache.vectors is None:
                limit_blas_threads(self._blas_threads)
                cache.vectors, cache.vector_key = load_vectors(conn, pk, **cache.ann)
            return cache.vectors

    def _after_write(self, pk: str, gen: int, change: Callable[[_ScopeCache], None]) -> None:
        cache = self._caches.get(pk)
        if cache is None:
            return
        if cache.gen != gen - 1:
            del self._caches[pk]
            return
        change(cache)
        cache.gen = gen
        if cache.text is not None and cache.text.dead > max(1000, len(cache.text.slot_of)):
            cache.text = None  # compact: reload from SQLite on the next keyword query

    # ------------------------------------------------------------------ writes

    def upsert_many(self, records: Sequence[MemoryRecord]) -> list[ProjectionOutcome | None]:
        return [self.upsert(r) for r in records]  # local writes are cheap; no batch to save

    def upsert(self, record: MemoryRecord) -> ProjectionOutcome:
        pk, memory_id = record.scope.key, record.memory_id
        counts = dict(Counter(bm25_terms(document_text(record))))
        reading = reading_doc(record)
        vector = None if record.embedding is None else np.asarray(record.embedding, dtype="<f4")
        model = record.embedding_model if vector is not None else None
        with self._lock:
            with self._db.write() as conn:
                row = conn.execute(
                    "SELECT version, content_hash FROM docs WHERE pk = ? AND memory_id = ?", (pk, memory_id)
                ).fetchone()
                tomb = None
                if row is not None:
                    if record.version < row[0]:
                        return ProjectionOutcome.STALE
                    if record.version == row[0]:
                        same = row[1] == record.content_hash
                        return ProjectionOutcome.STALE if same else ProjectionOutcome.CONFLICT
                else:
                    tomb = conn.execute(
                        "SELECT version FROM tombstones WHERE pk = ? AND memory_id = ?", (pk, memory_id)
                    ).fetchone()
                    if tomb is not None and record.version <= tomb[0]:
                        return ProjectionOutcome.STALE
                if not record.is_active:
                    if row is None:  # nothing was indexed; the tombstone guards replays
                        self._remove_rows(conn, pk, memory_id, record.version, 0)
                        return ProjectionOutcome.STALE
                    gen = bump_generation(conn, pk)
                    self._remove_rows(conn, pk, memory_id, record.version, gen)

                    def change(cache: _ScopeCache) -> None:
                        cache.remove(memory_id)
                else:
                    if tomb is not None:
                        conn.execute("DELETE FROM tombstones WHERE pk = ? AND memory_id = ?", (pk, memory_id))
                    gen = bump_generation(conn, pk)
                    kept = index_readings.write(conn, pk, memory_id, reading)  # and its key rows
                    conn.execute(
                        "INSERT OR REPLACE INTO docs"
                        " (pk, memory_id, version, content_hash, doc_len, gen, reading, card, category)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            pk,
                            memory_id,
                            record.version,
                            record.content_hash,
                            sum(counts.values()),
                            gen,
                            kept,
                            record_json.card(record),
                            record.category.value,
                        ),
                    )
                    write_vector(conn, pk, memory_id, model, vector)
                    conn.execute(
                        "INSERT OR REPLACE INTO doc_terms (pk, memory_id, terms) VALUES (?, ?, ?)",
                        (pk, memory_id, json.dumps(counts, ensure_ascii=False, separators=(",", ":"))),
                    )

                    def change(cache: _ScopeCache) -> None:
                        cache.add(memory_id, counts, model, vector)

            self._after_write(pk, gen, change)
        return ProjectionOutcome.APPLIED

    @staticmethod
    def _remove_rows(conn: Any, pk: str, memory_id: str, tombstone: int, gen: int) -> None:
        """Delete the document and remember the version it was deleted at, stamped with ``gen``
        (0: nothing was indexed, no cache holds it; a stamp never moves back)."""
        conn.execute("DELETE FROM docs WHERE pk = ? AND memory_id = ?", (pk, memory_id))
        conn.execute("DELETE FROM doc_terms WHERE pk = ? AND memory_id = ?", (pk, memory_id))
        write_vector(conn, pk, memory_id, None, None)
        index_readings.remove(conn, pk, memory_id)
        conn.execute(
            "INSERT INTO tombstones (pk, memory_id, version, gen) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (pk, memory_id) DO UPDATE SET version = MAX(version, excluded.version),"
            " gen = MAX(gen, excluded.gen)",
            (pk, memory_id, tombstone, gen),
        )

    def delete(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        pk = scope.key
        with self._lock:
            with self._db.write() as conn:
                row = conn.execute(
                    "SELECT version FROM docs WHERE pk = ? AND memory_id = ?", (pk, memory_id)
                ).fetchone()
                if row is not None and row[0] > version:
                    return ProjectionOutcome.STALE
                if row is None:
                    self._remove_rows(conn, pk, memory_id, version, 0)
                    return ProjectionOutcome.STALE
                gen = bump_generation(conn, pk)
                self._remove_rows(conn, pk, memory_id, version, gen)
            self._after_write(pk, gen, lambda c: c.remove(memory_id))
        return ProjectionOutcome.APPLIED

    def erase_scope(self, scope: Scope) -> int:
        pk = scope.key
        with self._lock:
            with self._db.write() as conn:
                count = int(conn.execute("SELECT COUNT(*) FROM docs WHERE pk = ?", (pk,)).fetchone()[0])
                for table in ("docs", "doc_vectors", "doc_terms", "tombstones"):
                    conn.execute(f"DELETE FROM {table} WHERE pk = ?", (pk,))
                index_readings.erase(conn, pk)
                bump_generation(conn, pk, reset=True)  # deleted rows leave no stamp: caches start over
            dropped = self._caches.pop(pk, None)
            if dropped is not None:
                dropped.drop()
        self._db.checkpoint()  # no page image of the erased text is left in the WAL
        return count

    # ------------------------------------------------------------------ queries

    def knn(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> list[Hit]:
        with self._lock:
            return search_each(self._vectors(scope.key), [vector], k, model)[0]

    def knn_many(self, scope: Scope, vectors: Sequence[np.ndarray], k: int, model: str) -> list[list[Hit]]:
        """The queries of one dimension scanned together (:func:`~.vectors.search_each`)."""
        with self._lock:
            return search_each(self._vectors(scope.key), vectors, k, model)

    def similarities(
        self, scope: Scope, vector: np.ndarray, memory_ids: Sequence[str], model: str
    ) -> dict[str, float]:
        query = np.asarray(vector, dtype=np.float32).ravel()
        if not memory_ids or query.size == 0 or not np.all(np.isfinite(query)) or not np.any(query):
            return {}
        with self._lock:
            vectors = self._vectors(scope.key).get((model, int(query.size)))
            if vectors is None:
                return {}
            found = [(m, s) for m in dict.fromkeys(memory_ids) if (s := vectors.slot_of.get(m)) is not None]
            if not found:
                return {}
            scores = vectors.matrix[[s for _, s in found]] @ normalised(query)
        return {m: float(x) for (m, _), x in zip(found, scores.tolist(), strict=True)}

    def settle(self, scope: Scope, timeout: float | None = None) -> bool:
        """Load the scope's vectors and wait for the graph builds they start (benchmarks, tests);
        ``True`` when every matrix past the threshold answers through its graph."""
        with self._lock:
            matrices = list(self._vectors(scope.key).values())
            return all(m.wait(timeout) for m in matrices if 0 < m.ann_min <= len(m.slot_of))

    def approximate(self, scope: Scope) -> bool:
        """Whether a k-NN query of ``scope`` goes through a graph now (for one of its models)."""
        with self._lock:
            return any(m.approximate() for m in self._vectors(scope.key).values())

    def keyword(self, scope: Scope, text: str, k: int) -> list[Hit]:
        terms = bm25_terms(text)
        if k <= 0 or not terms:
            return []
        with self._lock:
            return self._text(scope.key).search(terms, k)

    def readings(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, Reading]:
        with self._db.read() as conn:
            return index_readings.readings(conn, scope.key, memory_ids)

    def stating(self, scope: Scope, keys: Sequence[str], k: int) -> list[str]:
        with self._db.read() as conn:
            return index_readings.stating(conn, scope.key, keys, k)

    def cards(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        with self._lock, self._db.read() as conn:
            cache = self._scope(conn, scope.key)  # in step with other writers' generations
            found = index_cards.read(conn, scope, memory_ids, cache.cards)
        return {m: found[m] for m in dict.fromkeys(memory_ids) if m in found}

    def listing(self, scope: Scope, category: str, limit: int) -> list[MemoryRecord] | None:
        if limit <= 0:
            return []
        with self._lock, self._db.read() as conn:
            cache = self._scope(conn, scope.key)  # in step with other writers' generations
            return index_cards.listing(conn, scope, str(category), limit, cache.listings, cache.cards)

    _STATES = "SELECT memory_id, version, content_hash FROM docs WHERE pk = ?"

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        return {s.memory_id: s for s in projection_states(self._db, self._STATES, scope.key, memory_ids)}

    def all_states(self, scope: Scope) -> list[ProjectionState]:
        return projection_states(self._db, self._STATES, scope.key)
