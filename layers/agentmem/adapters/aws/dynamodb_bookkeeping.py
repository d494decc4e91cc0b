""":class:`DynamoScopeLedger`, the :class:`~agentmem.ports.ScopeLedger` of the AWS backend: per-scope
items of the memory table, over the table handle it shares with
:class:`~agentmem.adapters.aws.dynamodb_store.DynamoMemoryStore` (which registers a scope before
its first record and checks the erase barrier in the same transaction as a create). Written so
that no index key changes on an ordinary turn and no index partition carries every user.

* ``PENDING`` — writes since the scope's last consolidation (``ADD writes``): one
  ``UpdateItem`` per turn that changes no index key. The item also carries the keys of the
  sparse, keys-only ``dirty_users`` GSI: ``dirty_shard`` (a hash of the scope over
  :data:`DIRTY_SHARDS` partitions) and ``dirty_rank`` (``0#<since>`` once the count reached
  :data:`~agentmem.ports.PENDING_READY_WRITES`, ``1#<since>`` before; ``since`` is when the scope
  became dirty). A second, conditional ``UpdateItem`` sets them only when they change: on the
  first write after a consolidation and on the write that makes the scope ready — twice between
  two consolidations, not on every turn (each index key change is a delete and an insert in the
  index). :meth:`DynamoScopeLedger.pending_scopes` queries the shards (ready first, then longest
  waiting: a scope below the trigger never holds up one above it) and reads the counts of the
  few it returns with one ``BatchGetItem``.
* ``SCOPE`` — the registry entry written (idempotently, once per process and scope) before a
  scope's first record, keyed into the sparse ``scopes`` GSI under ``scope_shard =
  SCOPES#<nn>``, one of :data:`~agentmem.domain.scope_walk.SCOPE_SHARDS` partitions by a hash
  of the scope: a burst of new users spreads over them. :meth:`DynamoScopeLedger.all_scopes`
  walks the shards of a reconcile segment in order (one small query per page and shard), then,
  for segment 0, the single ``SCOPES`` partition of the older layout, so entries written before
  the change are still walked until their scope writes again (which re-registers it).
* ``RECONCILE`` / ``CURSOR#<segments>#<segment>`` — the reconcile walk's saved cursor (its own
  partition: the stream filter and the codec skip it, as they skip every non-``MEM#`` item).
* ``ERASED`` — the scope's erase barrier (``erased_us``, microseconds since the epoch), which
  erasing the scope keeps.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import contextlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from agentmem.adapters.aws.dynamodb_base import (
    ConditionFailed,
    DynamoTable,
    Item,
    n,
    number,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_schema import MEMORY_GSI_DIRTY, MEMORY_GSI_SCOPES
from agentmem.adapters.codec import format_sortable, parse_datetime, scope_from_partition_key
from agentmem.domain.models import Scope
from agentmem.domain.scope_walk import (
    PENDING_READY_WRITES,
    ReconcileCursor,
    ReconcilePass,
    scope_shard,
    segment_shards,
    shard_of,
)
from agentmem.errors import ValidationFailed

PENDING_SK = "PENDING"
ERASED_SK = "ERASED"  # the scope's erase barrier; erase_scope keeps it
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SCOPE_SK = "SCOPE"
LEGACY_SCOPES_SHARD = "SCOPES"  # the one registry partition of the older layout
DIRTY_SHARDS = 16  # dirty_users partitions: written only when a scope's rank changes
CURSOR_PK = "RECONCILE"
_SCOPE_KEY_NAMES = ("scope_shard", "scope_key", "pk", "sk")


def epoch_us(value: datetime) -> int:
    """Microseconds since the epoch (the barrier's and the condition's unit)."""
    return (value.astimezone(UTC) - _EPOCH) // timedelta(microseconds=1)


def item_key(scope: Scope, sk: str) -> Item:
    return {"pk": s(scope.key), "sk": s(sk)}


def registry_shard(scope: Scope) -> str:
    return f"SCOPES#{scope_shard(scope):02d}"


def dirty_shard(scope: Scope) -> str:
    return f"DIRTY#{shard_of(scope.key, DIRTY_SHARDS):02d}"


def dirty_rank(writes: int, since: str) -> str:
    """Ascending order = ready (count at the trigger) first, then longest waiting."""
    return f"{0 if writes >= PENDING_READY_WRITES else 1}#{since}"


def _cursor_key(segment: int, segments: int) -> Item:
    return {"pk": s(CURSOR_PK), "sk": s(f"CURSOR#{segments}#{segment}")}


def _encode_walk(shard: int, start: Item | None) -> str:
    plain = {"i": shard, "k": {k: v["S"] for k, v in start.items()} if start else None}
    return base64.urlsafe_b64encode(json.dumps(plain, sort_keys=True).encode("utf-8")).decode("ascii")


def _decode_walk(cursor: str, shards: int) -> tuple[int, Item | None]:
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8"))
        shard, start = plain["i"], plain["k"]
    except (binascii.Error, UnicodeError, ValueError, KeyError, TypeError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc
    valid_start = start is None or (
        isinstance(start, dict) and all(isinstance(start.get(k), str) for k in _SCOPE_KEY_NAMES)
    )
    if not isinstance(shard, int) or not 0 <= shard < shards or not valid_start:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
    return shard, ({k: s(start[k]) for k in _SCOPE_KEY_NAMES} if start else None)


class DynamoScopeLedger:
    """:class:`agentmem.ports.ScopeLedger` over the memory table's handle ``table``."""

    def __init__(self, table: DynamoTable, clock: Callable[[], datetime]) -> None:
        self._t = table
        self._clock = clock
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    def forget(self, scope: Scope) -> None:
        """The scope was erased: register it again before its next record."""
        with self._lock:
            self._registered.discard(scope.key)

    def register(self, scope: Scope) -> None:
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
                ":shard": s(registry_shard(scope)),
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

    def all_scopes(
        self, limit: int, cursor: str | None = None, *, segment: int = 0, segments: int = 1
    ) -> tuple[builtins.list[Scope], str | None]:
        """From the scope registry (GSI ``scopes``): the segment's shards in order, each in
        scope-key order (then, for segment 0, the older layout's single partition)."""
        shards = [f"SCOPES#{i:02d}" for i in segment_shards(segment, segments)]
        if segment == 0:
            shards.append(LEGACY_SCOPES_SHARD)
        if limit <= 0:
            return [], None
        index, start = _decode_walk(cursor, len(shards)) if cursor is not None else (0, None)
        scopes: list[Scope] = []
        while index < len(shards) and len(scopes) < limit:
            want = limit - len(scopes)
            kwargs: dict[str, Any] = {
                "IndexName": MEMORY_GSI_SCOPES,
                "KeyConditionExpression": "scope_shard = :shard",
                "ExpressionAttributeValues": {":shard": s(shards[index])},
                "Limit": want + 1,
            }
            if start is not None:
                kwargs["ExclusiveStartKey"] = start
            items = list(self._t.query(limit=want + 1, **kwargs))
            scopes.extend(scope_from_partition_key(text(i, "pk")) for i in items[:want])
            if len(items) > want:  # more in this shard: resume after the last one returned
                last = items[want - 1]
                return scopes, _encode_walk(index, {k: last[k] for k in _SCOPE_KEY_NAMES})
            index, start = index + 1, None
        return scopes, (_encode_walk(index, None) if index < len(shards) else None)

    # ------------------------------------------------------------------ consolidation counters

    def mark_pending(self, scope: Scope, writes: int) -> int:
        now = format_sortable(self._clock())
        result = self._t.call(
            "update_item",
            Key=item_key(scope, PENDING_SK),
            UpdateExpression="ADD writes :n SET updated_at = :now, tenant_id = :t, user_id = :u,"
            " dirty_since = if_not_exists(dirty_since, :now)",
            ExpressionAttributeValues={
                ":n": n(int(writes)),
                ":now": s(now),
                ":t": s(scope.tenant_id),
                ":u": s(scope.user_id),
            },
            ReturnValues="ALL_NEW",
        )
        item = result.get("Attributes") or {}
        count = number(item, "writes")
        try:  # index the scope only when its index keys change; a concurrent mark indexes its own
            if count > 0:
                shard, rank = dirty_shard(scope), dirty_rank(count, text(item, "dirty_since", now))
                if text(item, "dirty_shard") != shard or text(item, "dirty_rank") != rank:
                    ready = count >= PENDING_READY_WRITES
                    self._t.call(
                        "update_item",
                        Key=item_key(scope, PENDING_SK),
                        UpdateExpression="SET dirty_shard = :shard, dirty_rank = :rank",
                        ConditionExpression="writes >= :ready"
                        if ready
                        else "writes > :zero AND writes < :ready",
                        ExpressionAttributeValues={
                            ":shard": s(shard),
                            ":rank": s(rank),
                            ":ready": n(PENDING_READY_WRITES),
                            **({} if ready else {":zero": n(0)}),
                        },
                    )
            elif "dirty_shard" in item:
                self._t.call(
                    "update_item",
                    Key=item_key(scope, PENDING_SK),
                    UpdateExpression="REMOVE dirty_shard, dirty_rank",
                    ConditionExpression="writes <= :zero",
                    ExpressionAttributeValues={":zero": n(0)},
                )
        except ConditionFailed:
            pass
        return count

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Ready first, then longest waiting, merged over the dirty-users shards; the counts of
        those returned come from one eventually consistent batch read."""
        if limit <= 0:
            return []
        ranked: list[tuple[str, str]] = []
        for shard in range(DIRTY_SHARDS):
            for entry in self._t.query(
                limit=limit,
                IndexName=MEMORY_GSI_DIRTY,
                KeyConditionExpression="dirty_shard = :shard",
                ExpressionAttributeValues={":shard": s(f"DIRTY#{shard:02d}")},
                Limit=limit,
            ):
                ranked.append((text(entry, "dirty_rank"), text(entry, "pk")))
        ranked.sort()
        chosen = [pk for _, pk in ranked[:limit]]
        counts = self._pending_counts(chosen)
        return [(scope_from_partition_key(pk), counts[pk]) for pk in chosen if counts.get(pk, 0) > 0]

    def _pending_counts(self, pks: builtins.list[str]) -> dict[str, int]:
        keys = [{"pk": s(pk), "sk": s(PENDING_SK)} for pk in pks]
        return {text(i, "pk"): number(i, "writes") for i in self._t.batch_get(keys, projection="pk, writes")}

    def clear_pending(self, scope: Scope) -> None:
        self._t.call("delete_item", Key=item_key(scope, PENDING_SK))

    # ------------------------------------------------------------------ reconcile cursors

    def reconcile_cursor(self, segment: int = 0, segments: int = 1) -> ReconcileCursor | None:
        segment_shards(segment, segments)  # validates
        item = self._t.call("get_item", Key=_cursor_key(segment, segments), ConsistentRead=True).get("Item")
        if not item:
            return None
        last = None
        if "last_completed_at" in item:
            last = ReconcilePass(
                started_at=parse_datetime(text(item, "last_started_at")),
                completed_at=parse_datetime(text(item, "last_completed_at")),
                scopes_checked=number(item, "last_scopes"),
            )
        return ReconcileCursor(
            segment=segment,
            segments=segments,
            position=text(item, "position") or None,
            skip=number(item, "skip"),
            pass_started_at=parse_datetime(text(item, "pass_started_at"))
            if "pass_started_at" in item
            else None,
            pass_scopes=number(item, "pass_scopes"),
            last_pass=last,
        )

    def save_reconcile_cursor(self, cursor: ReconcileCursor) -> None:
        segment_shards(cursor.segment, cursor.segments)  # validates
        item: Item = {
            **_cursor_key(cursor.segment, cursor.segments),
            "pass_scopes": n(cursor.pass_scopes),
            "skip": n(cursor.skip),
            "updated_at": s(format_sortable(self._clock())),
        }
        if cursor.position:
            item["position"] = s(cursor.position)
        if cursor.pass_started_at is not None:
            item["pass_started_at"] = s(format_sortable(cursor.pass_started_at))
        if cursor.last_pass is not None:
            item["last_started_at"] = s(format_sortable(cursor.last_pass.started_at))
            item["last_completed_at"] = s(format_sortable(cursor.last_pass.completed_at))
            item["last_scopes"] = n(cursor.last_pass.scopes_checked)
        self._t.call("put_item", Item=item)

    # ------------------------------------------------------------------ erase barriers

    def set_erase_barrier(self, scope: Scope, at: datetime) -> datetime:
        value = epoch_us(at)
        with contextlib.suppress(ConditionFailed):  # a later barrier is in force already
            self._t.call(
                "put_item",
                Item={**item_key(scope, ERASED_SK), "erased_us": n(value)},
                ConditionExpression="attribute_not_exists(erased_us) OR erased_us < :at",
                ExpressionAttributeValues={":at": n(value)},
            )
        barrier = self.erase_barrier(scope)
        assert barrier is not None  # written just now, or a later one was there
        return barrier

    def erase_barrier(self, scope: Scope) -> datetime | None:
        result = self._t.call("get_item", Key=item_key(scope, ERASED_SK), ConsistentRead=True)
        item = result.get("Item")
        if not item:
            return None
        return _EPOCH + timedelta(microseconds=number(item, "erased_us"))
