"""The in-memory :class:`~agentmem.ports.ScopeLedger`: the consolidation counters, the scope walk,
the reconcile cursors and the erase barriers of :class:`~support.fakes.memory.InMemoryMemoryStore`,
by composition over its state (its lock, its switch, its records for the walk), as the real
ledgers share the store's table or file. The store reads :attr:`InMemoryScopeLedger.barriers` in
the same step as a create, and drops the counter of a scope it erases."""

from __future__ import annotations

import builtins
import itertools
from datetime import datetime
from typing import TYPE_CHECKING

from agentmem.domain.models import Scope
from agentmem.domain.scope_walk import PENDING_READY_WRITES, ReconcileCursor, check_segment, in_segment
from agentmem.ports import ScopeLedger
from support.fakes.cursors import decode_cursor, encode_cursor

if TYPE_CHECKING:
    from support.fakes.memory import InMemoryMemoryStore


class InMemoryScopeLedger(ScopeLedger):
    """:class:`~agentmem.ports.ScopeLedger` over ``store``'s state; down when the store is."""

    def __init__(self, store: InMemoryMemoryStore) -> None:
        self._store = store
        self._lock = store._lock
        self.pending: dict[str, tuple[int, int]] = {}  # pk -> (writes, tick of the first mark)
        self.barriers: dict[str, datetime] = {}  # pk -> erase time; erasing the scope leaves them
        self._cursors: dict[tuple[int, int], ReconcileCursor] = {}
        self._ticks = itertools.count(1)

    def _enter(self, method: str) -> None:
        self._store._enter(method)

    def set_erase_barrier(self, scope: Scope, at: datetime) -> datetime:
        with self._lock:
            self._enter("set_erase_barrier")
            current = self.barriers.get(scope.key)
            self.barriers[scope.key] = at if current is None or at > current else current
            return self.barriers[scope.key]

    def erase_barrier(self, scope: Scope) -> datetime | None:
        with self._lock:
            self._enter("erase_barrier")
            return self.barriers.get(scope.key)

    def mark_pending(self, scope: Scope, writes: int) -> int:
        with self._lock:
            self._enter("mark_pending")
            count, since = self.pending.get(scope.key, (0, 0))
            count += int(writes)
            self.pending[scope.key] = (count, since or next(self._ticks))
            self._store._scopes[scope.key] = scope
            return count

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Ready first, then longest waiting."""
        with self._lock:
            self._enter("pending_scopes")
            rows = sorted(
                ((pk, writes, tick) for pk, (writes, tick) in self.pending.items() if writes > 0),
                key=lambda row: (row[1] < PENDING_READY_WRITES, row[2], row[0]),
            )
            return [(self._store._scopes[pk], writes) for pk, writes, _ in rows[: max(0, limit)]]

    def clear_pending(self, scope: Scope) -> None:
        with self._lock:
            self._enter("clear_pending")
            self.pending.pop(scope.key, None)

    def all_scopes(
        self, limit: int, cursor: str | None = None, *, segment: int = 0, segments: int = 1
    ) -> tuple[builtins.list[Scope], str | None]:
        with self._lock:
            self._enter("all_scopes")
            check_segment(segment, segments)
            after = decode_cursor("scopes", cursor) if cursor is not None else ""
            if limit <= 0:
                return [], None
            pks = sorted(
                {
                    pk
                    for pk, _ in self._store._records
                    if pk > after and in_segment(self._store._scopes[pk], segment, segments)
                }
            )
            page = pks[:limit]
            more = len(pks) > limit
            return [self._store._scopes[pk] for pk in page], (
                encode_cursor("scopes", page[-1]) if more else None
            )

    def reconcile_cursor(self, segment: int = 0, segments: int = 1) -> ReconcileCursor | None:
        with self._lock:
            self._enter("reconcile_cursor")
            check_segment(segment, segments)
            return self._cursors.get((segment, segments))

    def save_reconcile_cursor(self, cursor: ReconcileCursor) -> None:
        with self._lock:
            self._enter("save_reconcile_cursor")
            check_segment(cursor.segment, cursor.segments)
            self._cursors[(cursor.segment, cursor.segments)] = cursor
