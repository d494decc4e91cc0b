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

The pool is first read without vectors (``embeddings=False``: the store's cheap copies; the
embedded store serves them from its per-process cache), then completed from a
:class:`RecordCache` of full records the store decoded for earlier turns: a cached record is used
only while it equals the store's current vector-less copy field for field, so the pool is the one
a full read would give. A user's recent window is mostly the same from one turn to the next:
decoding every vector of it again each turn was a tenth of the write path. A record erased by
another process is never served again (the store no longer returns it) and leaves the bounded
cache as newer records come in; a turn that meets its user's erase empties the user's entries.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

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
CACHED_RECORDS = 512  # full records kept between turns (a vector of 384 floats is ~12 kB)


class RecordCache:
    """Full records (vectors included) exactly as the store returned them, most recently used
    kept, each with its vector-less copy to compare against the store's current one."""

    def __init__(self, capacity: int = CACHED_RECORDS) -> None:
        self.capacity = max(0, capacity)
        self._records: OrderedDict[tuple[str, str], tuple[MemoryRecord, MemoryRecord]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._records)

    def remember(self, records: Iterable[MemoryRecord]) -> None:
        """Keep ``records`` (full, as the store decoded them)."""
        with self._lock:
            for record in records:
                slot = (record.scope.key, record.memory_id)
                self._records[slot] = (replace(record, embedding=None), record)
                self._records.move_to_end(slot)
            while len(self._records) > self.capacity:
                self._records.popitem(last=False)

    def forget(self, scope: Scope) -> None:
        """Drop every record of ``scope`` (its user was erased)."""
        with self._lock:
            for slot in [slot for slot in self._records if slot[0] == scope.key]:
                del self._records[slot]

    def complete(
        self, store: MemoryStore, scope: Scope, light: dict[str, MemoryRecord]
    ) -> dict[str, MemoryRecord]:
        """The full records of ``light`` (the store's current copies, maybe without vectors):
        cached ones that equal them, the rest read from the store (and kept). A record deleted
        in between is left out; one changed in between comes back as its newer version."""
        full: dict[str, MemoryRecord] = {}
        missing: list[str] = []
        with self._lock:
            for memory_id, current in light.items():
                if current.embedding is not None or current.embedding_model is None:
                    full[memory_id] = current  # complete already (or never had a vector)
                    continue
                cached = self._records.get((scope.key, memory_id))
                if cached is not None and cached[0] == current:
                    self._records.move_to_end((scope.key, memory_id))
                    full[memory_id] = cached[1]
                    self.hits += 1
                else:
                    missing.append(memory_id)
            self.misses += len(missing)
        if missing:
            fetched = store.get_many(scope, missing)
            self.remember(fetched.values())
            full.update(fetched)
        return {m: full[m] for m in light if m in full}


@dataclass(frozen=True)
class NeighbourPool:
    store: MemoryStore
    index: SearchIndex | None
    recent: int = RECENT
    from_knn: int = FROM_KNN
    from_keyword: int = FROM_KEYWORD
    fallback: int = FALLBACK
    cache: RecordCache = field(default_factory=RecordCache)  # the write pipeline's, across turns

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
        light = {r.memory_id: r for r in self.store.scan_active(scope, self.recent, embeddings=False)}
        wanted = [i for i in dict.fromkeys(hit_ids) if i not in light]
        light.update(self.store.get_many(scope, wanted, embeddings=False))
        pool = self.cache.complete(self.store, scope, light)
        for key in dict.fromkeys(c.key for c in candidates if c.key):
            pool.update((r.memory_id, r) for r in self.store.find_by_key(scope, key))
        # Memory ids sort by creation time.
        return [pool[i] for i in sorted(pool, reverse=True) if pool[i].is_active]
