"""DynamoDB source of truth for memory records (:class:`agentmem.ports.MemoryStore`).

One table (docs/aws.md, :mod:`.dynamodb_schema`), ``pk = scope.key`` on every item, so every
read and write is scoped by construction. Memory items are the codec's images
(:func:`agentmem.adapters.codec.record_to_image`, ``ttl`` for short-term records) without the
embedding, plus ``mem_key`` for the ``by_key`` index and, on active records of the slot
categories, ``slot_pk`` / ``slot_sk`` for the sparse ``slot_lists`` index. The embedding is in an
item of its own, ``VEC#<memory_id>``, written in the same transaction (:mod:`.dynamodb_vectors`:
a memory item is ≈0.6 KB instead of ≈2.7 KB, so reads without vectors and rewrites of a record
whose vector is unchanged cost a quarter). It is kept as float16 (``embedding_f16``, half the
bytes of float32: a 1024-dimension vector is 2 KB instead of 4 KB; cosines move by ~1e-4, far
below the dedup and conflict margins); ``embedding_precision="float32"`` keeps the codec's
float32 form. Both forms are read, and so are items of the older layout with the vector inline.

* ``create``: ``PutItem`` with ``attribute_not_exists(pk)``; ``update``: ``PutItem`` with
  ``version = :expected`` and the vector unchanged (the failed item comes back with the error,
  telling a version conflict from an absent record and from a new vector, which is written
  again as a transaction with the vector item);
* ``transact``: one ``TransactWriteItems`` with a condition on every record it touches (at most
  100 actions, 4 MB; a create's vector item is an action). A cancellation naming ``ConditionalCheckFailed`` is a
  :class:`~agentmem.errors.VersionConflict` carrying every cancellation reason; one caused only
  by ``TransactionConflict`` (another transaction held an item) is retried
  (:data:`TRANSACTION_CONFLICT_RETRIES` times) before it becomes one;
* the table's stream (NEW_AND_OLD_IMAGES) is the change feed: successful writes emit exactly one
  record per item, failed conditional writes emit nothing;
* ``PENDING`` counters and ``SCOPE`` registry items: :mod:`.dynamodb_bookkeeping`;
* a throttled transaction (``ThrottlingError`` reasons) is :class:`~agentmem.errors.StoreUnavailable`
  — transient, the event source retries the turn; anything else cancelled is a VersionConflict.

Erase is final by construction: ``set_erase_barrier`` writes an ``ERASED`` item in the scope's
partition (``erased_us``, the erase time in epoch microseconds, only ever raised) that
``erase_scope`` leaves in place. ``create`` is a ``TransactWriteItems`` of the conditional put
and a ``ConditionCheck`` on that item (``attribute_not_exists(erased_us) OR erased_us <
:created``), and ``transact`` adds the same check for every scope it creates records in, so a
turn that passed ingest before an erase and writes after it fails atomically
(``VersionConflict``, ``details["reason"] == "erased"``).

The reads live in :class:`~agentmem.adapters.aws.dynamodb_reads.MemoryReads`.

Consistency, per read (a strongly consistent read costs twice an eventually consistent one):

* strongly consistent: ``get`` (the write path reads its own writes and compares versions right
  after writing), ``scan_active`` and the partition ``list`` (the write path's recent neighbours
  must include what the previous turn of the same batch wrote; erase and the reconciler walk
  what is there now), ``find_by_key`` (same-key conflicts at write time), the erase barrier;
* eventually consistent: ``get_many`` — its ids come from the search index or the graph, which
  trail the table anyway (a stale version only makes a later conditional write fail, which the
  callers handle) — and the slot listings (the ``slot_lists`` GSI has no strongly consistent
  reads: a slot record written less than a second ago may be missing from one context call).

Listings read what they return (:mod:`.dynamodb_reads`). Every call's consumed capacity goes to
the table's :class:`~agentmem.adapters.aws.dynamodb_base.CapacityMeter` (``store.capacity``).

DynamoDB deletes expired (``ttl``) items only eventually (a short-term record may be read shortly
after its ``expires_at``, as the embedded store, which does not filter them either).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    ConditionFailed,
    DynamoTable,
    Item,
    dynamodb_client,
    n,
    number,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_bookkeeping import ScopeBookkeeping, item_key
from agentmem.adapters.aws.dynamodb_reads import (
    MAX_INDEXED_KEY_BYTES,
    MemoryReads,
    key_attribute,
    slot_partition,
)
from agentmem.adapters.aws.dynamodb_schema import SLOT_CATEGORIES
from agentmem.adapters.aws.dynamodb_vectors import (
    VEC_DIGEST,
    EmbeddingPrecision,
    RecentItems,
    digest,
    vector_actions,
    vector_attribute,
    vector_changed,
    vector_changes,
    vector_condition,
    vector_key,
)
from agentmem.adapters.aws.errors import LazyClient, error_code, translate
from agentmem.adapters.codec import SORT_KEY_PREFIX, image_to_wire, memory_sort_key, record_to_image
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import NotFound, StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import Put

MAX_TRANSACTION_ACTIONS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TRANSACTION_CONFLICT_RETRIES = 3  # re-sends of a transaction cancelled only by TransactionConflict
_VERSION = {"#v": "version"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ERASED_SK = "ERASED"  # the scope's erase barrier; erase_scope keeps it
_BARRIER_CONDITION = "attribute_not_exists(erased_us) OR erased_us < :created"


def epoch_us(value: datetime) -> int:
    """Microseconds since the epoch (the barrier's and the condition's unit)."""
    return (value.astimezone(UTC) - _EPOCH) // timedelta(microseconds=1)


def memory_item(record: MemoryRecord, precision: EmbeddingPrecision = "float16") -> Item:
    """The stored memory item: the codec image without the embedding, the digest of the vector
    item (:func:`~agentmem.adapters.aws.dynamodb_vectors.vector_item`) and the index keys."""
    item = record_to_image(record)
    item.pop("embedding", None)
    stored = vector_attribute(record, precision)
    if stored is not None:
        item[VEC_DIGEST] = s(digest(stored[1]))
    if record.key is not None:
        item["mem_key"] = s(key_attribute(record.key))
    if record.status is Status.ACTIVE and record.category.value in SLOT_CATEGORIES:
        item["slot_pk"] = s(slot_partition(record.scope, record.category.value))
        item["slot_sk"] = s(record.memory_id)
    return item


class DynamoMemoryStore(MemoryReads, ScopeBookkeeping):
    """:class:`agentmem.ports.MemoryStore` over one DynamoDB table."""

    def __init__(
        self,
        table_name: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        clock: Callable[[], datetime] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        meter: CapacityMeter | None = None,
        embedding_precision: EmbeddingPrecision = "float16",
    ) -> None:
        lazy = dynamodb_client(client, region)
        self._t = DynamoTable(lazy, table_name, store="dynamodb", sleep=sleep, meter=meter)
        self._precision: EmbeddingPrecision = embedding_precision
        self._recent = RecentItems()
        self._clock = clock or (lambda: datetime.now(UTC))
        self._sleep = sleep
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    @property
    def capacity(self) -> CapacityMeter:
        """The capacity DynamoDB reported for this store's calls."""
        return self._t.meter

    # ------------------------------------------------------------------ writes

    def create(self, record: MemoryRecord) -> None:
        """One transaction: the put if absent, and the scope's erase barrier checked."""
        self.transact([Put(record, None)])

    def _barrier_checks(self, puts: Sequence[Put]) -> list[dict[str, Any]]:
        """One ConditionCheck on the ERASED item per scope that gets a new record, against the
        oldest new record of that scope (a barrier after any of them cancels the transaction)."""
        oldest: dict[Scope, datetime] = {}
        for put in puts:
            at = put.record.created_at
            if put.expected_version is None and at is not None:  # no time: nothing to compare
                scope = put.record.scope
                oldest[scope] = min(at, oldest.get(scope, at))
        return [
            {
                "ConditionCheck": {
                    "TableName": self._t.name,
                    "Key": item_key(scope, ERASED_SK),
                    "ConditionExpression": _BARRIER_CONDITION,
                    "ExpressionAttributeValues": {":created": n(epoch_us(at))},
                }
            }
            for scope, at in sorted(oldest.items(), key=lambda kv: kv[0].key)
        ]

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

    def update(self, record: MemoryRecord, expected_version: int) -> None:
        """The memory item alone while the stored one names the same vector; a transaction with
        the vector item when it does not (a new embedding, an item of the older layout)."""
        same_vector, values = vector_condition(record, self._precision)
        self._recent.forget(record.scope, [record.memory_id])
        try:
            self._t.call(
                "put_item",
                Item=memory_item(record, self._precision),
                ConditionExpression=f"attribute_exists(pk) AND #v = :expected AND {same_vector}",
                ExpressionAttributeNames=_VERSION,
                ExpressionAttributeValues={":expected": n(expected_version), **values},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailed as exc:
            if not exc.item:
                raise NotFound("memory not found", details={"memory_id": record.memory_id}) from exc
            if number(exc.item, "version") == expected_version and vector_changed(
                exc.item, record, self._precision
            ):
                self._transact([Put(record, expected_version)], rewrite={0})
                return
            raise VersionConflict(
                "memory changed concurrently",
                details={
                    "memory_id": record.memory_id,
                    "expected": expected_version,
                    "actual": number(exc.item, "version"),
                },
            ) from exc

    def _transaction_items(self, puts: Sequence[Put], table: str, rewrite: set[int]) -> list[dict[str, Any]]:
        """The memory items' puts (in the order of ``puts``: a cancellation's reasons are read
        by that index), then the vector items of the creates and of the updates in ``rewrite``;
        the other updates are conditioned on their stored vector being the same."""
        actions: list[dict[str, Any]] = []
        vectors: list[dict[str, Any]] = []
        total = 0
        for i, put in enumerate(puts):
            item = memory_item(put.record, self._precision)
            action: dict[str, Any] = {
                "TableName": table,
                "Item": item,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
            if put.expected_version is None:
                action["ConditionExpression"] = "attribute_not_exists(pk)"
                vectors += (
                    [] if put.record.embedding is None else vector_actions(table, put.record, self._precision)
                )
            else:
                condition, values = (
                    "attribute_exists(pk) AND #v = :expected",
                    {":expected": n(put.expected_version)},
                )
                if i in rewrite:
                    vectors += vector_actions(table, put.record, self._precision)
                else:
                    same_vector, more = vector_condition(put.record, self._precision)
                    condition, values = f"{condition} AND {same_vector}", {**values, **more}
                action["ConditionExpression"] = condition
                action["ExpressionAttributeNames"] = _VERSION
                action["ExpressionAttributeValues"] = values
            actions.append({"Put": action})
        for action in [*actions, *vectors]:
            body = action.get("Put") or {}
            total += len(json.dumps(image_to_wire(body.get("Item", {}))))  # base64: an over-estimate
        if total > MAX_TRANSACTION_BYTES:
            raise ValidationFailed("transaction exceeds 4 MB", details={"bytes": total})
        return actions + vectors

    def transact(self, puts: Sequence[Put], *, also: Sequence[dict[str, Any]] = ()) -> None:
        """``also``: more actions of the same transaction, after the memory's (the audit lines)."""
        keys = [(p.record.scope.key, p.record.memory_id) for p in puts]
        if len(set(keys)) != len(keys):
            raise ValidationFailed("a transaction may touch each memory only once")
        if not puts:
            return
        self._transact(puts, rewrite=set(), also=also)

    def _transact(
        self, puts: Sequence[Put], *, rewrite: set[int], also: Sequence[dict[str, Any]] = ()
    ) -> None:
        """``rewrite``: the updates whose vector item is written too (it grows when a
        cancellation shows a stored vector other than the record's; then the transaction is
        sent again)."""
        for put in puts:
            self._recent.forget(put.record.scope, [put.record.memory_id])
        checks = self._barrier_checks(puts)
        actions = [*self._transaction_items(puts, self._t.name, rewrite), *checks, *also]
        if len(actions) > MAX_TRANSACTION_ACTIONS:
            raise ValidationFailed(
                "a transaction holds at most 100 writes (a vector item is one)",
                details={"writes": len(puts), "actions": len(actions)},
            )
        for scope in {p.record.scope for p in puts if p.expected_version is None}:
            self._register(scope)
        attempt = 0
        while True:
            try:
                result = self._t.client.get().transact_write_items(
                    TransactItems=actions, ClientRequestToken=uuid.uuid4().hex, ReturnConsumedCapacity="TOTAL"
                )
                self._t.meter.record(self._t.name, "transact_write_items", result)
                return
            except ClientError as exc:
                self._t.meter.record(self._t.name, "transact_write_items", exc.response)
                if error_code(exc) != "TransactionCanceledException":
                    raise translate(exc, store="dynamodb", operation="transact_write_items") from exc
                reasons = list(exc.response.get("CancellationReasons") or [])
                codes = [str(r.get("Code", "None")) for r in reasons]
                failed = [c for c in codes if c not in ("None", "")]
                changed = vector_changes(puts, reasons, rewrite, self._precision)
                if changed:  # stored vectors other than the records': again, with their items
                    self._transact(puts, rewrite=rewrite | changed, also=also)
                    return
                if (
                    failed
                    and all(c == "TransactionConflict" for c in failed)
                    and attempt < TRANSACTION_CONFLICT_RETRIES
                ):
                    self._sleep(0.02 * 2**attempt)
                    attempt += 1
                    continue
                raise self._cancelled(puts, reasons, codes, attempt) from exc
            except BotoCoreError as exc:
                raise translate(exc, store="dynamodb", operation="transact_write_items") from exc

    @staticmethod
    def _cancelled(
        puts: Sequence[Put], reasons: list[dict[str, Any]], codes: list[str], attempt: int
    ) -> VersionConflict | StoreUnavailable:
        # the puts' reasons; the erase-barrier checks come after them in the transaction
        details: dict[str, object] = {"reasons": codes[: len(puts)], "attempts": attempt + 1}
        barrier_failed = [i for i, c in enumerate(codes) if c == "ConditionalCheckFailed" and i >= len(puts)]
        if barrier_failed and all(
            c in ("None", "") for i, c in enumerate(codes) if i < len(puts)
        ):  # only the erase barrier refused: the scope was erased after these records' time
            first_new = next(p for p in puts if p.expected_version is None)
            return VersionConflict(
                "the scope was erased after this record was created",
                details={**details, "memory_id": first_new.record.memory_id, "reason": "erased"},
            )
        if any(c in ("ThrottlingError", "ProvisionedThroughputExceeded") for c in codes) and (
            "ConditionalCheckFailed" not in codes
        ):
            return StoreUnavailable(
                "transaction cancelled: throttled", details={"store": "dynamodb", **details}
            )
        first = next((i for i, c in enumerate(codes) if c == "ConditionalCheckFailed"), None)
        if first is None:
            first = next((i for i, c in enumerate(codes) if c not in ("None", "")), 0)
        put = puts[min(first, len(puts) - 1)]
        stored = reasons[first].get("Item") if first < len(reasons) else None
        details.update(
            memory_id=put.record.memory_id,
            expected=put.expected_version,
            actual=number(stored, "version") if stored else None,
        )
        return VersionConflict("transaction cancelled: " + ",".join(codes), details=details)

    def hard_delete(self, scope: Scope, memory_id: str) -> bool:
        """The memory item, then its vector item (one left by a failure in between is never
        read — no memory item names it — and goes with ``erase_scope``)."""
        self._recent.forget(scope, [memory_id])
        result = self._t.call(
            "delete_item", Key=item_key(scope, memory_sort_key(memory_id)), ReturnValues="ALL_OLD"
        )
        old = result.get("Attributes") or {}
        if VEC_DIGEST in old:
            self._t.call("delete_item", Key=vector_key(scope, memory_id))
        return bool(old)

    def erase_scope(self, scope: Scope) -> int:
        """Every item of the partition (records, their vector items, counter, registry entry) but
        the erase barrier; counts the records."""
        self._recent.forget(scope)
        keys = [k for k in self._t.partition_keys(scope.key) if text(k, "sk") != ERASED_SK]
        self._t.batch_delete(keys)
        with self._lock:
            self._registered.discard(scope.key)
        return sum(1 for k in keys if text(k, "sk").startswith(SORT_KEY_PREFIX))


__all__ = ["MAX_INDEXED_KEY_BYTES", "DynamoMemoryStore", "key_attribute", "memory_item", "slot_partition"]
