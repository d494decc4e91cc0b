"""The caches a process keeps between calls, each named for what it holds and sized where it is
built (:func:`agentmem.bootstrap.bootstrap`), then handed to the service that uses it:

- :class:`QueryVectors`: the vectors of the last queries embedded (a context call embeds its
  query once for recall and once more for each slot it ranks; the same text, the same vector);
- :class:`ScoreBlocks`: the query-free part of scoring a listing
  (:class:`~agentmem.domain.score_block.ScoreBlock`), for the listings ranked call after call;
- :class:`NeighbourRecords`: the full records (vectors included) the write path read for earlier
  turns' neighbour pools (``services/neighbours.py``).

The domain holds none of them: it stays pure values and functions (``docs/architecture.md``).
Each is safe to use from several threads (the AWS context call fetches its sources on a pool).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from agentmem.domain.models import MemoryRecord, Scope
from agentmem.domain.score_block import ScoreBlock
from agentmem.ports import MemoryStore

QUERY_VECTORS = 1  # the last query: a context call embeds it for recall and again for each slot it ranks
SCORE_BLOCKS = 16  # listings whose score blocks are kept (a user's three slot categories, a few users)
NEIGHBOUR_RECORDS = 512  # full records kept between turns (a vector of 384 floats is ~12 kB)


class QueryVectors:
    """The vector of each of the last ``size`` queries, by their text."""

    def __init__(self, size: int = QUERY_VECTORS) -> None:
        self.size = max(0, size)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, query: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(query)
            if vector is not None:
                self._vectors.move_to_end(query)
            return vector

    def put(self, query: str, vector: np.ndarray) -> None:
        with self._lock:
            self._vectors[query] = vector
            self._vectors.move_to_end(query)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


class ScoreBlocks:
    """The :class:`ScoreBlock` of each of the last ``size`` listings, by the identity of their
    records (a store that keeps decoded records per generation hands the same objects back until
    a write): a hit costs one tuple of ids. Sound because a block holds its records, so no id of
    a cached key can be reused by another object while it is cached; records are immutable."""

    def __init__(self, size: int = SCORE_BLOCKS) -> None:
        self.size = size
        self._blocks: OrderedDict[tuple[int, ...], ScoreBlock] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._blocks)

    def of(self, records: Sequence[MemoryRecord]) -> ScoreBlock:
        key = tuple(map(id, records))
        with self._lock:
            block = self._blocks.get(key)
            if block is not None:
                self._blocks.move_to_end(key)
                return block
        block = ScoreBlock(records, terms=True)
        with self._lock:
            self._blocks[key] = block
            while len(self._blocks) > self.size:
                self._blocks.popitem(last=False)
        return block


class NeighbourRecords:
    """Full records (vectors included) exactly as the store returned them, most recently used
    kept, each with its vector-less copy to compare against the store's current one."""

    def __init__(self, capacity: int = NEIGHBOUR_RECORDS) -> None:
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
