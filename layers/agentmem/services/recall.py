"""Recall (docs/recall.md): k-NN + BM25 candidates, 1-2 hop graph expansion, one scorer.

Two steps over the call's read session (:class:`~agentmem.services.reads.ReadSession`):
:meth:`RecallService.gather` finds the candidates (:class:`Candidates`: merged by memory id,
keeping every channel that found them, known from the search index's cards) and
:meth:`RecallService.rank` scores them on the session's copies. :meth:`RecallService.recall`
confirms its answer against the store and ranks again when a card was stale, so a memory
superseded a moment ago is never returned even if a projection lags; a context call confirms only
what it shows (``services/context.py``). Each store that fails is added to the session's
``degraded`` and recall goes on with what is left; with the search index down it scores a
bounded scan of the source of truth. It is over 400 lines: finding, ranking and scoring one
query's candidates are one responsibility, and splitting them would pass their state around.

Two bounded channels on top of the one scorer (docs/recall.md): the period a query names
(:func:`~agentmem.domain.temporal.query_period`) lifts the memories of that span, and the best
:attr:`RecallService.graph_seeds` pass a decaying bonus to their conversation neighbours
(:data:`GRAPH_EDGES`, :meth:`~agentmem.domain.scoring.Scorer.propagate`).

Time travel (``as_of``): the answer holds the memories valid at that time
(:meth:`~agentmem.domain.models.MemoryRecord.valid_at`: ``valid_from <= t < valid_to``), scored
as of then. The projections hold active memories only, so the superseded ones come from the
source of truth (its newest :data:`HISTORY_SCAN`, channel ``history``); every channel's
candidates (k-NN, BM25, recent, graph) are read back and kept only if valid at ``t``, so a memory
created after ``t`` never answers and a replaced value answers for the time it was true.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from agentmem.domain.asked import asked, states
from agentmem.domain.attributes import STALE_CHANNEL, STALE_FACTOR, stale_pairs
from agentmem.domain.models import Category, MemoryRecord, Scope, ScoredMemory, Status
from agentmem.domain.reading.stored import demote_third_party, slot_first
from agentmem.domain.score_block import ScoreBlock, best
from agentmem.domain.scoring import RelevanceFloor, Scorer
from agentmem.domain.temporal import query_period
from agentmem.errors import AgentMemError
from agentmem.ports import Embedder, GraphStore, MemoryStore, SearchIndex
from agentmem.services.caches import QueryVectors, ScoreBlocks
from agentmem.services.reads import Degraded, ReadSession

log = logging.getLogger(__name__)

FALLBACK_SCAN_LIMIT = 2000
HISTORY_SCAN = 500  # superseded memories (newest first) an as_of recall considers
GRAPH_EDGES = frozenset({"FOLLOWS", "SIMILAR_TO"})
"""Edges the graph channel walks: the conversation around a memory (FOLLOWS, both ways) and
near-duplicates. Entity edges (BELONGS_TO, memory -> entity <- memory) are not walked: in a
conversation every memory shares the speakers' names, so entity co-occurrence reached the hubs and
lowered LoCoMo R@10 (conversation 0: 0.693 -> 0.636). They were once walked and discarded, which
cost most of the graph channel's time (at 10k memories 2.2 ms a context call, 0.38 ms without them)
and let the entity hop's memories (weight 1.0) fill a seed's ``graph_limit`` ahead of its second
FOLLOWS / SIMILAR_TO hop."""
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
class Candidates:
    """What :meth:`RecallService.gather` found for one query: every candidate (a card, or the
    store's copy where it was read) with the channels that found it, the k-NN cosines and the
    normalised BM25 scores. :meth:`RecallService.rank` scores them; ranking again (after a
    confirmation found a card stale) searches nothing again."""

    scope: Scope
    query: str
    vector: np.ndarray | None
    now: datetime
    k: int
    records: dict[str, MemoryRecord]
    channels: dict[str, list[str]] = field(default_factory=dict)
    bm25: dict[str, float] = field(default_factory=dict)
    cosines: dict[str, float] = field(default_factory=dict)
    wanted: set[Category] | None = None
    as_of: datetime | None = None


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
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)
    query_vectors: QueryVectors = field(default_factory=QueryVectors, repr=False)
    score_blocks: ScoreBlocks = field(default_factory=ScoreBlocks, repr=False)  # the listings' (rank_listing)

    def session(self, scope: Scope) -> ReadSession:
        """A read session over this recall's store and cards, for one call in ``scope``."""
        return ReadSession(self.store, self.index, scope)

    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        k: int,
        now: datetime,
        categories: Iterable[Category] | None = None,
        as_of: datetime | None = None,
    ) -> RecallResult:
        """The ``k`` best memories for ``query`` (valid at ``as_of`` when given, see the module),
        each the store's own copy."""
        session = self.session(scope)
        found = self.gather(session, query, k=k, now=now, categories=categories, as_of=as_of)
        return RecallResult(self.rank_confirmed(session, found), session.degraded.names())

    def gather(
        self,
        session: ReadSession,
        query: str,
        *,
        k: int,
        now: datetime,
        categories: Iterable[Category] | None = None,
        as_of: datetime | None = None,
    ) -> Candidates:
        """The candidates for ``query``: k-NN and BM25 hits from the search index (as cards),
        the store's newest memories (read-your-writes), and for ``as_of`` the superseded ones;
        without the index, a bounded scan of the store. What fails is added to the session's
        ``degraded``."""
        scope, degraded = session.scope, session.degraded
        if as_of is not None:
            now = as_of  # recency as of then
        query = bounded(query)
        found = Candidates(
            scope, query, self._embed(query, degraded), now, k, records={},
            wanted=set(categories) if categories else None, as_of=as_of,
        )  # fmt: skip
        channels, records = found.channels, found.records
        pool = max(self.candidate_pool, 4 * k)
        if self.index is not None:
            try:
                if found.vector is not None:
                    for hit in self.index.knn(scope, found.vector, pool, self.embedder.model_id):
                        channels.setdefault(hit.memory_id, []).append("vector")
                        found.cosines[hit.memory_id] = hit.score
                keyword_hits = self.index.keyword(scope, query, pool)
                top = keyword_hits[0].score if keyword_hits else 0.0
                for hit in keyword_hits:
                    channels.setdefault(hit.memory_id, []).append("keyword")
                    found.bm25[hit.memory_id] = hit.score / top if top > 0 else 0.0
            except AgentMemError as exc:
                log.warning("recall.index_unavailable", extra={"error": type(exc).__name__})
                degraded.add("search_index")
                channels.clear()
                found.cosines.clear()
        if self.index is None or "search_index" in degraded:
            # No index to score with: the bounded scan brings the vectors along.
            for record in self.store.scan_active(scope, FALLBACK_SCAN_LIMIT):
                records[record.memory_id] = record
                channels.setdefault(record.memory_id, []).append("store_scan")
            session.read(records.values())
        else:
            # Read-your-writes: the newest memories may not be projected yet.
            for record in self.store.scan_active(scope, self.recent_window, embeddings=False):
                records[record.memory_id] = record
                channels.setdefault(record.memory_id, []).append("recent")
            session.read(records.values())
            records.update(session.light([i for i in channels if i not in records]))
        if as_of is not None:
            history = [r for r in self._history(scope) if r.memory_id not in records]
            session.read(history)
            for record in history:
                records[record.memory_id] = record
                channels.setdefault(record.memory_id, []).append("history")
        return found

    def rank(self, session: ReadSession, found: Candidates) -> list[ScoredMemory]:
        """The best ``found.k`` of the candidates, scored on the session's copies (the store's
        where it was read, else the card), with the graph channel, the stale-value net and the
        relevance floor. Unconfirmed: a caller shows them only after :meth:`ReadSession.confirm`."""
        records = session.current(found.records)
        # Only the best k can end in the answer (the graph adds its own candidates below).
        top = max(found.k, self.graph_seeds)
        scored = self._score(records, found, session.degraded, top)
        if self.graph is not None and scored:
            scored = self._expand(self.graph, session, found, scored, records)
        ranked = slot_first(demote_third_party(demote_stale(scored), found.query))
        if found.query.strip() and "embedder" not in session.degraded:  # else relevance cannot be measured
            ranked = self.floor.apply(self.scorer, ranked)
        return ranked[: found.k]

    def rank_confirmed(self, session: ReadSession, found: Candidates) -> list[ScoredMemory]:
        """:meth:`rank`, confirmed: ranked again until every memory of the answer is the store's
        own copy. Each round that finds a card stale has read it from the store, and an id read
        is never a card again, so the rounds end (at most one per candidate; one in practice)."""
        while True:
            ranked = self.rank(session, found)
            if not session.confirm(s.record.memory_id for s in ranked):
                return ranked

    def _expand(
        self,
        graph: GraphStore,
        session: ReadSession,
        found: Candidates,
        scored: list[ScoredMemory],
        records: dict[str, MemoryRecord],
    ) -> list[ScoredMemory]:
        """The graph channel: each of the best :attr:`graph_seeds` passes a bonus
        (:meth:`~agentmem.domain.scoring.Scorer.propagate`) to the memories within
        :attr:`graph_hops` of it over :data:`GRAPH_EDGES`, at most :attr:`graph_limit` per seed
        (the adapter's fan-out cap bounds a hub); a memory reached from several seeds keeps the
        best. Neighbours not scored yet are read and scored; all are ranked again."""
        channels = found.channels
        propagated: dict[str, float] = {}
        try:
            for seed in scored[: self.graph_seeds]:
                near = graph.neighbours(
                    session.scope, [seed.record.memory_id], self.graph_hops, self.graph_limit, via=GRAPH_EDGES
                )
                for n in near:
                    channels.setdefault(n.memory_id, []).append(f"graph:{n.hops}")
                    value = self.scorer.propagate(seed.score, n.hops)
                    if value > propagated.get(n.memory_id, 0.0):
                        propagated[n.memory_id] = value
        except AgentMemError as exc:
            log.warning("recall.graph_unavailable", extra={"error": type(exc).__name__})
            session.degraded.add("graph")
        if not propagated:
            return scored
        have = {s.record.memory_id for s in scored}
        missing = [m for m in propagated if m not in have]
        unread = [m for m in missing if m not in records]
        fetched = {m: records[m] for m in missing if m in records}
        fetched.update(session.light(unread) if unread else {})
        out = [
            self.scorer.with_graph(s, propagated[m], tuple(dict.fromkeys(channels.get(m, ()))))
            if (m := s.record.memory_id) in propagated
            else s
            for s in [*scored, *(self._score(fetched, found, session.degraded) if fetched else [])]
        ]
        out.sort(key=_rank_key, reverse=True)
        return out

    def rank_listing(
        self,
        records: Iterable[MemoryRecord],
        query: str,
        *,
        now: datetime,
        degraded: Degraded,
        top: int | None = None,
        as_of: datetime | None = None,
    ) -> list[ScoredMemory]:
        """Score given records (e.g. a slot's category listing) for ``query`` with the one scorer,
        best first; ``top``: only the best ``top`` (the rest are scored, not explained);
        ``as_of``: only those valid then, scored as of then. The listing's score block is kept
        (:class:`~agentmem.services.caches.ScoreBlocks`): the same listing is ranked call after call."""
        query = bounded(query)
        vector = self._embed(query, degraded)
        by_id = {r.memory_id: r for r in records}
        if not by_id:
            return []
        scope = next(iter(by_id.values())).scope
        listing = Candidates(scope, query, vector, as_of or now, 0, by_id, as_of=as_of)
        return self._score(by_id, listing, degraded, top, cached=True)

    def _history(self, scope: Scope) -> list[MemoryRecord]:
        """The newest :data:`HISTORY_SCAN` superseded memories (the projections hold none)."""
        found: list[MemoryRecord] = []
        cursor: str | None = None
        while len(found) < HISTORY_SCAN:
            page = self.store.list(
                scope, statuses=(Status.SUPERSEDED,), limit=100, cursor=cursor, embeddings=False
            )
            found += page.items
            cursor = page.next_cursor
            if not cursor:
                break
        return found[:HISTORY_SCAN]

    def _embed(self, query: str, degraded: Degraded) -> np.ndarray | None:
        if not query.strip():
            return None
        vector = self.query_vectors.get(query)
        if vector is not None:
            return vector
        try:
            vector = self.embedder.embed_query(query)
        except AgentMemError as exc:
            log.warning("recall.embedder_unavailable", extra={"error": type(exc).__name__})
            degraded.add("embedder")
            return None
        self.query_vectors.put(query, vector)
        return vector

    def _cosines(
        self,
        scope: Scope,
        records: dict[str, MemoryRecord],
        vector: np.ndarray,
        known: dict[str, float],
        degraded: Degraded,
    ) -> dict[str, float]:
        """Cosine of ``vector`` with each record stored with the query's model: from ``known``
        (k-NN hits), the record's own vector when the read brought it, else the search index's
        vector; a record the index does not hold yet (projection lag) is read with its vector."""
        model = self.embedder.model_id
        out: dict[str, float] = {}
        ask: list[str] = []
        for memory_id, record in records.items():
            if record.embedding_model != model:
                continue
            if memory_id in known:
                out[memory_id] = known[memory_id]
            elif record.embedding is not None:
                out[memory_id] = float(np.dot(vector, np.asarray(record.embedding, dtype=np.float32)))
            else:
                ask.append(memory_id)
        if ask and self.index is not None and "search_index" not in degraded:
            try:
                out.update(self.index.similarities(scope, vector, ask, model))
            except AgentMemError as exc:
                log.warning("recall.index_unavailable", extra={"error": type(exc).__name__})
                degraded.add("search_index")
        unindexed = [m for m in ask if m not in out]
        if unindexed:
            for memory_id, record in self.store.get_many(scope, unindexed).items():
                if record.embedding is not None and record.embedding_model == model:
                    out[memory_id] = float(np.dot(vector, np.asarray(record.embedding, dtype=np.float32)))
        return out

    def _score(
        self,
        records: dict[str, MemoryRecord],
        found: Candidates,
        degraded: Degraded,
        top: int | None = None,
        *,
        cached: bool = False,
    ) -> list[ScoredMemory]:
        """The best ``top`` of ``records`` (all when None) for ``found``'s query, explained
        (:func:`~agentmem.domain.score_block.best`); ``cached``: ``records`` is a listing ranked
        again and again (its block is kept in :attr:`score_blocks`)."""
        as_of, wanted, query, now = found.as_of, found.wanted, found.query, found.now
        usable = [
            r
            for r in records.values()
            if (r.is_active if as_of is None else r.valid_at(as_of))
            and (wanted is None or r.category in wanted)
        ]
        if not usable or (top is not None and top <= 0):
            return []
        cosines: dict[str, float] = {}
        if found.vector is not None:
            cosines = self._cosines(
                usable[0].scope, {r.memory_id: r for r in usable}, found.vector, found.cosines, degraded
            )
        n, nan = len(usable), float("nan")
        similarity = self.embedder.calibration.query_array(
            np.fromiter((cosines.get(r.memory_id, nan) for r in usable), np.float64, n)
        )
        bm25 = found.bm25
        floor = (
            np.fromiter((bm25.get(r.memory_id, 0.0) for r in usable), np.float64, n) if bm25 else np.zeros(n)
        )
        question = asked(query)
        scorer = self.scorer
        ranked = best(
            scorer,
            self.score_blocks.of(usable) if cached else ScoreBlock(usable),
            now=now,
            query=query,
            similarity=similarity,
            lexical_floor=floor,
            period=query_period(query, now),
            top=top,
            states=(lambda text: states(text, question)) if question is not None else None,
        )
        channels = found.channels
        out = []
        for item in ranked:
            scored = scorer.explain(item.record, item.parts, tuple(channels.get(item.record.memory_id, ())))
            if item.in_period:
                scored = scorer.with_period(scored)
            out.append(scorer.with_slot(scored) if item.fills else scored)
        return out


def demote_stale(scored: list[ScoredMemory]) -> list[ScoredMemory]:
    """The read-time net (:func:`~agentmem.domain.attributes.stale_pairs`): a memory that a newer
    user statement in the same answer replaces keeps at most :data:`STALE_FACTOR` of its score,
    and never more than the newer one (the newer wins), and carries ``stale:<newer id>`` among
    its channels; the order is settled again."""
    stale = stale_pairs([s.record for s in scored])
    if not stale:
        return scored
    score_of = {s.record.memory_id: s.score for s in scored}
    out = [
        replace(
            s,
            score=min(s.score * STALE_FACTOR, score_of[stale[s.record.memory_id]] * (1 - 1e-6)),
            channels=(*s.channels, f"{STALE_CHANNEL}:{stale[s.record.memory_id]}"),
        )
        if s.record.memory_id in stale
        else s
        for s in scored
    ]
    return sorted(out, key=_rank_key, reverse=True)


def _rank_key(item: ScoredMemory) -> tuple[float, str]:
    return (round(item.score, 9), item.record.memory_id)
