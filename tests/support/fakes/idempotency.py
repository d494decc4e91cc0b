"""The in-memory :class:`~agentmem.ports.IdempotencyStore`: the first request of each
``Idempotency-Key`` by (scope, key), its answer once complete, until it expires (an expired record
is replaced by the next claim and pruned, as DynamoDB's TTL and the embedded retention pass do)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agentmem.domain.models import Scope
from agentmem.ports import IdempotencyRecord, IdempotencyStore
from support.fakes.memory import Switchable, _drop_scope


class InMemoryIdempotencyStore(Switchable, IdempotencyStore):
    """:class:`~agentmem.ports.IdempotencyStore`: the first live claim of a key wins."""

    store_name = "idempotency"

    def __init__(self) -> None:
        super().__init__()
        self._records: dict[tuple[str, str], IdempotencyRecord] = {}

    def claim(self, scope: Scope, candidate: IdempotencyRecord, now: datetime) -> IdempotencyRecord:
        with self._lock:
            self._enter("claim")
            held = self._records.get((scope.key, candidate.key))
            if held is not None and held.expires_at > now:
                return held
            self._records[(scope.key, candidate.key)] = candidate
            return candidate

    def complete(self, scope: Scope, key: str, status: int, body: str) -> None:
        with self._lock:
            self._enter("complete")
            held = self._records.get((scope.key, key))
            if held is not None:
                self._records[(scope.key, key)] = replace(held, status=status, body=body)

    def prune_idempotency(self, now: datetime) -> int:
        with self._lock:
            self._enter("prune_idempotency")
            expired = [k for k, r in self._records.items() if r.expires_at <= now]
            for key in expired:
                del self._records[key]
            return len(expired)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            return _drop_scope(self._records, scope)
