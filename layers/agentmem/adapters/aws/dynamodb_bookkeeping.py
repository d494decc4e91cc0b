"""Per-scope bookkeeping items of the memory table, mixed into
:class:`~agentmem.adapters.aws.dynamodb_store.DynamoMemoryStore`.

* ``PENDING`` — writes since the scope's last consolidation (``ADD writes``). While the count is
  positive the item also carries ``dirty_shard`` / ``dirty_rank``, the keys of the sparse
  ``dirty_users`` GSI, so :meth:`ScopeBookkeeping.pending_scopes` queries a few small index
  partitions instead of scanning the table. The rank sorts busiest first, then longest waiting.
* ``SCOPE`` — the registry entry written (idempotently, once per process and scope) before a
  scope's first record, keyed into the sparse ``scopes`` GSI that
  :meth:`ScopeBookkeeping.all_scopes` pages through for the reconciler. A registry GSI rather
  than a table scan: the reconciler's walk costs one small query per page, not a read of every
  memory.
"""

from __future__ import annotations

import builtins
import hashlib
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agentmem.adapters.aws.dynamodb_base import (
    ConditionFailed,
    DynamoTable,
    Item,
    decode_cursor,
    encode_cursor,
    n,
    number,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_schema import MEMORY_GSI_DIRTY, MEMORY_GSI_SCOPES
from agentmem.adapters.codec import format_sortable, scope_from_partition_key
from agentmem.domain.models import Scope

PENDING_SK = "PENDING"
SCOPE_SK = "SCOPE"
SCOPES_SHARD = "SCOPES"
DIRTY_SHARDS = 4  # dirty_users partitions: spreads mark_pending writes, queried and merged
_RANK_BASE = 10**12


def item_key(scope: Scope, sk: str) -> Item:
    return {"pk": s(scope.key), "sk": s(sk)}


def dirty_shard(scope: Scope) -> str:
    digest = hashlib.sha256(scope.key.encode("utf-8")).digest()
    return f"DIRTY#{int.from_bytes(digest[:4], 'big') % DIRTY_SHARDS}"


def dirty_rank(writes: int, updated_at: datetime, scope: Scope) -> str:
    """Ascending order = busiest first, then longest waiting, then by scope key."""
    return f"{_RANK_BASE - min(writes, _RANK_BASE - 1):012d}#{format_sortable(updated_at)}#{scope.key}"


class ScopeBookkeeping:
    """Pending counters and the scope registry (needs ``_t``, ``_clock``, ``_registered``, ``_lock``)."""

    _t: DynamoTable
    _clock: Callable[[], datetime]
    _registered: set[str]
    _lock: threading.Lock

    def _register(self, scope: Scope) -> None:
        """Put the scope in the registry the reconciler walks (once per process and scope)."""
        with self._lock:
            if scope.key in self._registered:
                return
        self._t.call(
            "update_item",
            Key=item_key(scope, SCOPE_SK),
            UpdateExpression="SET scope_shard = :shard, scope_key = :pk, tenant_id = :t, user_id = :u,"
            " first_seen = if_not_exists(first_seen, :now)",
            ExpressionAttributeValues={
                ":shard": s(SCOPES_SHARD),
                ":pk": s(scope.key),
                ":t": s(scope.tenant_id),
                ":u": s(scope.user_id),
                ":now": s(format_sortable(self._clock())),
            },
        )
        with self._lock:
            if len(self._registered) > 100_000:
                self._registered.clear()
            self._registered.add(scope.key)

    def all_scopes(self, limit: int, cursor: str | None = None) -> tuple[builtins.list[Scope], str | None]:
        """From the scope registry (GSI ``scopes``), in scope-key order."""
        if limit <= 0:
            return [], None
        kwargs: dict[str, Any] = {
            "IndexName": MEMORY_GSI_SCOPES,
            "KeyConditionExpression": "scope_shard = :shard",
            "ExpressionAttributeValues": {":shard": s(SCOPES_SHARD)},
            "Limit": limit + 1,
        }
        if cursor is not None:
            kwargs["ExclusiveStartKey"] = decode_cursor(cursor, ["scope_shard", "scope_key", "pk", "sk"])
        items = list(self._t.query(limit=limit + 1, **kwargs))
        more = len(items) > limit
        items = items[:limit]
        scopes = [scope_from_partition_key(text(i, "pk")) for i in items]
        next_cursor = None
        if more:
            last = items[-1]
            next_cursor = encode_cursor({k: last[k] for k in ("scope_shard", "scope_key", "pk", "sk")})
        return scopes, next_cursor

    # ------------------------------------------------------------------ consolidation counters

    def mark_pending(self, scope: Scope, writes: int) -> int:
        now = self._clock()
        result = self._t.call(
            "update_item",
            Key=item_key(scope, PENDING_SK),
            UpdateExpression="ADD writes :n SET updated_at = :now, tenant_id = :t, user_id = :u",
            ExpressionAttributeValues={
                ":n": n(int(writes)),
                ":now": s(format_sortable(now)),
                ":t": s(scope.tenant_id),
                ":u": s(scope.user_id),
            },
            ReturnValues="UPDATED_NEW",
        )
        count = number(result.get("Attributes") or {}, "writes")
        try:  # index the new count; a concurrent mark that moved it further indexes its own
            if count > 0:
                self._t.call(
                    "update_item",
                    Key=item_key(scope, PENDING_SK),
                    UpdateExpression="SET dirty_shard = :shard, dirty_rank = :rank",
                    ConditionExpression="writes = :count",
                    ExpressionAttributeValues={
                        ":shard": s(dirty_shard(scope)),
                        ":rank": s(dirty_rank(count, now, scope)),
                        ":count": n(count),
                    },
                )
            else:
                self._t.call(
                    "update_item",
                    Key=item_key(scope, PENDING_SK),
                    UpdateExpression="REMOVE dirty_shard, dirty_rank",
                    ConditionExpression="writes = :count",
                    ExpressionAttributeValues={":count": n(count)},
                )
        except ConditionFailed:
            pass
        return count

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Busiest first (then longest waiting), merged over the dirty-users shards."""
        if limit <= 0:
            return []
        rows: list[tuple[str, Scope, int]] = []
        for shard in range(DIRTY_SHARDS):
            for item in self._t.query(
                limit=limit,
                IndexName=MEMORY_GSI_DIRTY,
                KeyConditionExpression="dirty_shard = :shard",
                ExpressionAttributeValues={":shard": s(f"DIRTY#{shard}")},
                Limit=limit,
            ):
                rows.append(
                    (
                        text(item, "dirty_rank"),
                        Scope(text(item, "tenant_id"), text(item, "user_id")),
                        number(item, "writes"),
                    )
                )
        rows.sort(key=lambda row: row[0])
        return [(scope, writes) for _, scope, writes in rows[:limit] if writes > 0]

    def clear_pending(self, scope: Scope) -> None:
        self._t.call("delete_item", Key=item_key(scope, PENDING_SK))
