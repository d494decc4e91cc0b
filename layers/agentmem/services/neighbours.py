"""The neighbour pool of a turn: the stored memories its new facts are judged against (dedup,
conflict, supersede — :mod:`agentmem.domain.conflict`).

Taken from the search index, so its cost follows the turn's facts, not the user's size: each
fact's nearest by k-NN on its vector and by BM25 on its text, plus every active memory sharing a
fact's key (a same-key conflict may be worded quite differently), plus the few newest memories
from the store, which the projector may not have indexed yet (read-your-writes). Without an
index, or while it is down, the bounded fallback: the newest memories of the store.

Cost per turn: one k-NN and one BM25 query per fact, one ``find_by_key`` per distinct key, and
the records decoded (at most ``RECENT + facts x (FROM_KNN + FROM_KEYWORD)``, fewer after
overlaps) — independent of how many memories the user holds.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentmem.domain.extraction import Candidate
from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import StoreUnavailable
from agentmem.ports import MemoryStore, SearchIndex

log = logging.getLogger(__name__)

RECENT = 20  # newest memories read from the store: read-your-writes ahead of the projector
FROM_KNN = 10  # per fact, nearest by vector (the rules judge the 3 most similar: margin for ANN)
FROM_KEYWORD = 5  # per fact, best by BM25 (exact rewordings, records of another embedding model)
FALLBACK = 200  # newest memories compared when there is no search index, or it is down


@dataclass(frozen=True)
class NeighbourPool:
    store: MemoryStore
    index: SearchIndex | None
    recent: int = RECENT
    from_knn: int = FROM_KNN
    from_keyword: int = FROM_KEYWORD
    fallback: int = FALLBACK

    def gather(
        self, scope: Scope, candidates: Sequence[Candidate], vectors: np.ndarray, model_id: str
    ) -> list[MemoryRecord]:
        """The active memories of ``scope`` near ``candidates`` (``vectors`` their embeddings by
        ``model_id``, one row each), newest first (the order :func:`~agentmem.domain.conflict.rank`
        keeps for ties). Raises ``StoreUnavailable`` only when the memory store is down."""
        if self.index is None:
            return self.store.scan_active(scope, self.fallback)
        try:
            hit_ids: list[str] = []
            for cand, vector in zip(candidates, vectors, strict=True):
                hits = self.index.knn(scope, vector, self.from_knn, model_id)
                hits += self.index.keyword(scope, cand.content, self.from_keyword)
                hit_ids.extend(h.memory_id for h in hits)
        except StoreUnavailable:
            log.warning("ingest.neighbours_from_store", extra={"reason": "search_index_unavailable"})
            return self.store.scan_active(scope, self.fallback)
        pool = {r.memory_id: r for r in self.store.scan_active(scope, self.recent)}
        pool.update(self.store.get_many(scope, [i for i in dict.fromkeys(hit_ids) if i not in pool]))
        for key in dict.fromkeys(c.key for c in candidates if c.key):
            pool.update((r.memory_id, r) for r in self.store.find_by_key(scope, key))
        # Memory ids sort by creation time.
        return [pool[i] for i in sorted(pool, reverse=True) if pool[i].is_active]
