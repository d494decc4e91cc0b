"""Recall (DESIGN §5.2-5.3): k-NN + BM25 candidates, 1-2 hop graph expansion, one scorer.

Candidates are merged by memory id keeping every channel that found them; records are read
back from the source of truth, so a memory superseded a moment ago is never returned even if a
projection lags. Each store that fails is reported in ``degraded`` and recall goes on with
what is left; with the search index down it scores a bounded scan of the source of truth.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from agentmem.domain.models import Category, MemoryRecord, Scope, ScoredMemory
from agentmem.domain.scoring import Scorer
from agentmem.domain.text import lexical_match
from agentmem.errors import AgentMemError
from agentmem.ports import Embedder, GraphStore, MemoryStore, SearchIndex

log = logging.getLogger(__name__)

FALLBACK_SCAN_LIMIT = 2000
QUERY_CHARS = 2000
"""Retrieval reads a query up to this many characters: a longer text (a pasted document) is not a
better question, and what recall costs (embedding, BM25 terms) must not grow with what a caller
sends — one user's 16,000-character queries would otherwise cost 7x a normal call."""


def bounded(query: str) -> str:
    """The part of ``query`` retrieval reads (:data:`QUERY_CHARS`)."""
    return query[:QUERY_CHARS]


@dataclass(frozen=True, slots=True)
class RecallResult:
    memories: list[ScoredMemory]
    degraded: list[str] = field(default_factory=list)


@dataclass
class RecallService:
    store: MemoryStore
    embedder: Embedder
    scorer: Scorer
    index: SearchIndex | None = None
    graph: GraphStore | None = None
    candidate_pool: int = 50
    graph_seeds: int = 5
    graph_hops: int = 2
    graph_limit: int = 20
    recent_window: int = 20
    _last_query: tuple[str, np.ndarray] | None = field(default=None, repr=False)

    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        k: int,
        now: datetime,
        categories: Iterable[Category] | None = None,
    ) -> RecallResult:
        degraded: list[str] = []
        query = bounded(query)
        wanted = set(categories) if categories else None
        vector = self._embed(query, degraded)
        channels: dict[str, list[str]] = {}
        bm25: dict[str, float] = {}
        records: dict[str, MemoryRecord] = {}
        pool = max(self.candidate_pool, 4 * k)

        if self.index is not None:
            try:
                if vector is not None:
                    for hit in self.index.knn(scope, vector, pool, self.embedder.model_id):
                        channels.setdefault(hit.memory_id, []).append("vector")
                keyword_hits = self.index.keyword(scope, query, pool)
                top = keyword_hits[0].score if keyword_hits else 0.0
                for hit in keyword_hits:
                    channels.setdefault(hit.memory_id, []).append("keyword")
                    bm25[hit.memory_id] = hit.score / top if top > 0 else 0.0
            except AgentMemError as exc:
                log.warning("recall.index_unavailable", extra={"error": type(exc).__name__})
                degraded.append("search_index")
                channels.clear()
        if self.index is None or "search_index" in degraded:
            for record in self.store.scan_active(scope, FALLBACK_SCAN_LIMIT):
                records[record.memory_id] = record
                channels.setdefault(record.memory_id, []).append("store_scan")
        else:
            # Read-your-writes: the newest memories may not be projected yet.
            for record in self.store.scan_active(scope, self.recent_window):
                records[record.memory_id] = record
                channels.setdefault(record.memory_id, []).append("recent")
        records.update(self.store.get_many(scope, [i for i in channels if i not in records]))
        scored = self._score(records, channels, bm25, query, vector, now, wanted)

        if self.graph is not None and scored:
            seeds = [s.record.memory_id for s in scored[: self.graph_seeds]]
            try:
                neighbours = self.graph.neighbours(scope, seeds, self.graph_hops, self.graph_limit)
            except AgentMemError as exc:
                log.warning("recall.graph_unavailable", extra={"error": type(exc).__name__})
                degraded.append("graph")
                neighbours = []
            new_ids = [n.memory_id for n in neighbours if n.memory_id not in records]
            extra = self.store.get_many(scope, new_ids)
            for n in neighbours:
                channels.setdefault(n.memory_id, []).append(f"graph:{n.hops}")
            if extra:
                scored += self._score(extra, channels, bm25, query, vector, now, wanted)
                scored.sort(key=_rank_key, reverse=True)
        return RecallResult(memories=scored[:k], degraded=degraded)

    def rank(
        self, records: Iterable[MemoryRecord], query: str, *, now: datetime, degraded: list[str]
    ) -> list[ScoredMemory]:
        """Score given records (e.g. a slot's category listing) for ``query`` with the one scorer."""
        query = bounded(query)
        vector = self._embed(query, degraded)
        by_id = {r.memory_id: r for r in records}
        return self._score(by_id, {}, {}, query, vector, now, None)

    def _embed(self, query: str, degraded: list[str]) -> np.ndarray | None:
        if not query.strip():
            return None
        cached = self._last_query
        if cached is not None and cached[0] == query:
            return cached[1]
        try:
            vector = self.embedder.embed_query(query)
        except AgentMemError as exc:
            log.warning("recall.embedder_unavailable", extra={"error": type(exc).__name__})
            if "embedder" not in degraded:
                degraded.append("embedder")
            return None
        self._last_query = (query, vector)
        return vector

    def _score(
        self,
        records: dict[str, MemoryRecord],
        channels: dict[str, list[str]],
        bm25: dict[str, float],
        query: str,
        vector: np.ndarray | None,
        now: datetime,
        wanted: set[Category] | None,
    ) -> list[ScoredMemory]:
        calibration = self.embedder.calibration
        out: list[ScoredMemory] = []
        for memory_id, record in records.items():
            if not record.is_active or (wanted is not None and record.category not in wanted):
                continue
            similarity = 0.0
            if (
                vector is not None
                and record.embedding is not None
                and record.embedding_model == self.embedder.model_id
            ):
                cosine = float(np.dot(vector, np.asarray(record.embedding, dtype=np.float32)))
                similarity = calibration.query(cosine)
            lexical = max(lexical_match(query, record.content), bm25.get(memory_id, 0.0))
            out.append(
                self.scorer.score(
                    record,
                    now=now,
                    query=query,
                    similarity=similarity,
                    lexical=lexical,
                    channels=tuple(channels.get(memory_id, ())),
                )
            )
        out.sort(key=_rank_key, reverse=True)
        return out


def _rank_key(item: ScoredMemory) -> tuple[float, str]:
    return (round(item.score, 9), item.record.memory_id)
