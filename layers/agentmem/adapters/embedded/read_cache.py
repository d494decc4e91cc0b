"""The memory store's per-process read cache: decoded records (without vectors) and listing
results, per scope, valid at the scope's stored generation.

Every write transaction of :class:`~agentmem.adapters.embedded.memory_store.SqliteMemoryStore`
bumps the scope's row in ``generations`` and stamps the rows it writes with the new value.
:meth:`ReadCache.scope`, called inside a read transaction, compares that generation with the
cached one: equal, the cache is served; moved on, only the rows written since (``gen > cached``,
through ``memories_by_gen``) are dropped and the listings cleared; moved past a ``reset_gen`` (a
hard delete or an erase: rows gone leave no stamp) or backwards, the scope starts over. So a write
by another process sharing the file is seen by the next read, at the cost of one indexed lookup.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from agentmem.adapters.embedded import rows
from agentmem.adapters.embedded.sqlite_base import chunks, placeholders
from agentmem.domain.models import MemoryRecord, Scope

MAX_CACHED_SCOPES = 64
MAX_CACHED_RECORDS = 50_000
"""Decoded records kept per scope; beyond it the oldest-cached quarter is dropped (a user of 100k
memories no longer loses every cached record, and its listings, each time it passes the bound)."""


@dataclass
class ScopeCache:
    """Decoded records (without vectors) and listing results of one scope at generation ``gen``."""

    gen: int
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    listings: dict[tuple[Any, ...], tuple[list[str], str | None]] = field(default_factory=dict)


class ReadCache:
    """The scopes' caches, most recently used kept (:data:`MAX_CACHED_SCOPES`)."""

    def __init__(self) -> None:
        self._scopes: OrderedDict[str, ScopeCache] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._scopes.clear()

    def drop(self, pk: str) -> None:
        with self._lock:
            self._scopes.pop(pk, None)

    def scope(self, conn: Any, pk: str) -> ScopeCache:
        """The scope's cache brought up to the stored generation (inside the caller's read)."""
        row = conn.execute("SELECT gen, reset_gen FROM generations WHERE pk = ?", (pk,)).fetchone()
        gen, reset = (0, 0) if row is None else (int(row[0]), int(row[1]))
        with self._lock:
            cache = self._scopes.get(pk)
            if cache is not None and cache.gen == gen:
                self._scopes.move_to_end(pk)
                return cache
            if cache is None or reset > cache.gen or cache.gen > gen:
                cache = ScopeCache(gen=gen)
            else:  # rows written since the cache's generation are dropped; the rest stays valid
                for (memory_id,) in conn.execute(
                    "SELECT memory_id FROM memories INDEXED BY memories_by_gen WHERE pk = ? AND gen > ?",
                    (pk, cache.gen),
                ):
                    cache.records.pop(memory_id, None)
                cache.listings.clear()
                cache.gen = gen
            self._scopes[pk] = cache
            self._scopes.move_to_end(pk)
            while len(self._scopes) > MAX_CACHED_SCOPES:
                self._scopes.popitem(last=False)
            return cache

    @staticmethod
    def records(
        conn: Any, scope: Scope, cache: ScopeCache, memory_ids: Sequence[str]
    ) -> dict[str, MemoryRecord]:
        """Records (without vectors) by id from ``cache``, reading and caching the missing ones."""
        cached = cache.records
        missing = [m for m in memory_ids if m not in cached]
        for part in chunks(missing):
            for memory_id, doc in conn.execute(
                f"SELECT memory_id, doc FROM memories WHERE pk = ? AND memory_id IN ({placeholders(len(part))})",
                (scope.key, *part),
            ):
                cached[memory_id] = rows.decode(scope, doc)
        found = {m: cached[m] for m in memory_ids if m in cached}
        if len(cached) > MAX_CACHED_RECORDS:
            drop = len(cached) - MAX_CACHED_RECORDS * 3 // 4
            for memory_id in list(islice(cached, drop)):  # insertion order: the oldest cached first
                del cached[memory_id]
        return found
