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

Erase is final by construction: the ledger's ``set_erase_barrier`` (:mod:`.dynamodb_bookkeeping`)
writes an ``ERASED`` item in the scope's partition (``erased_us``, the erase time in epoch
microseconds, only ever raised) that ``erase_scope`` leaves in place. ``create`` is a
``TransactWriteItems`` of the conditional put and a ``ConditionCheck`` on that item
(``attribute_not_exists(erased_us) OR erased_us < :created``), and ``transact`` adds the same
check for every scope it creates records in, so a turn that passed ingest before an erase and
writes after it fails atomically
(``VersionConflict``, ``details["reason"] == "erased"``).

Consistency, per read (a strongly consistent read costs twice an eventually consistent one):

* strongly consistent: ``get`` (the write path reads its own writes and compares versions right
  after writing), ``scan_active`` and the partition ``list`` (the write path's recent neighbours
  must include what the previous turn of the same batch wrote; erase and the reconciler walk
  what is there now), ``find_by_key`` (same-key conflicts at write time), the erase barrier;
* eventually consistent: ``get_many`` — its ids come from the search index or the graph, which
  trail the table anyway (a stale version only makes a later conditional write fail, which the
  callers handle) — and the slot listings (the ``slot_lists`` GSI has no strongly consistent
  reads: a slot record written less than a second ago may be missing from one context call).

Listings read what they return (below). Every call's consumed capacity goes to
the table's :class:`~agentmem.adapters.aws.dynamodb_base.CapacityMeter` (``store.capacity``).

DynamoDB deletes expired (``ttl``) items only eventually (a short-term record may be read shortly
after its ``expires_at``, as the embedded store, which does not filter them either).

Reads:
records by id, the newest-first listings and the same-key lookup, each reading what it returns.

Which read is strongly and which eventually consistent, and why, is in the store's module
docstring; in short: ``get``, ``scan_active``, the partition listing and ``find_by_key`` are
consistent (the write path reads its own writes), ``get_many`` and the slot listings (the
``slot_lists`` GSI) are not.

What a read costs follows the item it reads, not what the caller keeps (a ProjectionExpression
lowers nothing): the vector lives in an item of its own (:mod:`.dynamodb_vectors`), so a read
with ``embeddings=False`` reads the ≈0.6 KB memory items alone and one with ``embeddings=True``
adds a ``BatchGetItem`` of their vector items. ``get`` and ``find_by_key`` always read vectors.

One class, one port (the record operations): the module runs over 400 lines because the writes
and reads of one table share its handle, its vector items and its recent-items cache.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    ConditionFailed,
    DynamoTable,
    Item,
    decode_cursor,
    dynamodb_client,
    encode_cursor,
    n,
    number,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_bookkeeping import ERASED_SK, DynamoScopeLedger, epoch_us, item_key
from agentmem.adapters.aws.dynamodb_schema import MEMORY_GSI_SLOTS, MEMORY_LSI_BY_KEY, SLOT_CATEGORIES
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
    with_vectors,
)
from agentmem.adapters.aws.errors import LazyClient, error_code, translate
from agentmem.adapters.codec import (
    SORT_KEY_PREFIX,
    image_to_record,
    image_to_wire,
    memory_sort_key,
    record_to_image,
)
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import NotFound, StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import Page, Put

MAX_TRANSACTION_ACTIONS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TRANSACTION_CONFLICT_RETRIES = 3  # re-sends of a transaction cancelled only by TransactionConflict
_VERSION = {"#v": "version"}
_BARRIER_CONDITION = "attribute_not_exists(erased_us) OR erased_us < :created"


MAX_INDEXED_KEY_BYTES = 512  # longer keys are indexed by their hash (LSI sort keys stop at 1 KB)


def key_attribute(key: str) -> str:
    """What the ``by_key`` index stores for a record key."""
    if len(key.encode("utf-8")) <= MAX_INDEXED_KEY_BYTES:
        return key
    return "H#" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def slot_partition(scope: Scope, category: str) -> str:
    """The ``slot_lists`` GSI partition of a scope's active records of one slot category."""
    return f"{scope.key}#{category}"


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


class DynamoMemoryStore:
    """:class:`agentmem.ports.MemoryStore` over one DynamoDB table; its :attr:`ledger` is the
    :class:`~agentmem.ports.ScopeLedger` over the same table handle (the registry entry of a
    scope is written before its first record, and a create checks the erase barrier)."""

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
        self.ledger = DynamoScopeLedger(self._t, self._clock)

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
            self.ledger.register(scope)
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
        self.ledger.forget(scope)
        return sum(1 for k in keys if text(k, "sk").startswith(SORT_KEY_PREFIX))

    # ------------------------------------------------------------------ reads

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        result = self._t.call(
            "get_item", Key=item_key(scope, memory_sort_key(memory_id)), ConsistentRead=True
        )
        item = result.get("Item")
        if not item:
            return None
        found = with_vectors(self._t, scope, [item], consistent=True)
        return image_to_record(found[0]) if found else None

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, embeddings: bool = True
    ) -> dict[str, MemoryRecord]:
        """Eventually consistent (the ids come from the index or the graph; module docstring);
        the vectors' items are read only with ``embeddings``."""
        return self._batch_get(scope, memory_ids, consistent=False, embeddings=embeddings)

    def _batch_get(
        self, scope: Scope, memory_ids: Sequence[str], *, consistent: bool, embeddings: bool = True
    ) -> dict[str, MemoryRecord]:
        wanted = list(dict.fromkeys(memory_ids))
        # eventually consistent with vectors: memory items read light a moment ago stand in
        reused = self._recent.take(scope, wanted) if embeddings and not consistent else {}
        items = list(reused.values()) + self._t.batch_get(
            [item_key(scope, memory_sort_key(m)) for m in wanted if m not in reused], consistent=consistent
        )
        if embeddings:
            items = with_vectors(self._t, scope, items, consistent=consistent)
        else:
            self._recent.remember(scope, items)
        found = {r.memory_id: r for r in map(image_to_record, items)}
        return {m: found[m] for m in wanted if m in found}

    def list(
        self,
        scope: Scope,
        *,
        statuses: Iterable[Status] = (Status.ACTIVE,),
        category: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        embeddings: bool = True,
    ) -> Page:
        wanted = sorted({Status(x).value for x in statuses})
        if not wanted or limit <= 0:
            return Page(items=[], next_cursor=None)
        if category is not None and wanted == [Status.ACTIVE.value] and str(category) in SLOT_CATEGORIES:
            return self._slot_listing(scope, str(category), limit, cursor, embeddings=embeddings)
        return self._partition_listing(
            scope, wanted, category, limit, cursor, more=True, embeddings=embeddings
        )

    def _slot_listing(
        self, scope: Scope, category: str, limit: int, cursor: str | None, *, embeddings: bool
    ) -> Page:
        """Active records of one slot category from the sparse ``slot_lists`` GSI, newest first.
        Its entries hold every attribute but the vector: without ``embeddings`` they are the
        records; with them, the page's items are read from the table (eventually consistent, as
        the index is), and one deleted or no longer active since its entry was read is left out."""
        partition = slot_partition(scope, category)
        kwargs: dict[str, Any] = {
            "IndexName": MEMORY_GSI_SLOTS,
            "KeyConditionExpression": "slot_pk = :slot",
            "ExpressionAttributeValues": {":slot": s(partition)},
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if cursor is not None:
            after = text(decode_cursor(cursor, ["m"]), "m")
            kwargs["ExclusiveStartKey"] = {
                **item_key(scope, memory_sort_key(after)),
                "slot_pk": s(partition),
                "slot_sk": s(after),
            }
        items = [image_to_record(i) for i in self._t.query(limit=limit + 1, **kwargs)]
        page = self._page(items, limit)
        if not embeddings or not page.items:
            return page
        full = self._batch_get(scope, [r.memory_id for r in page.items], consistent=False)
        current = [full.get(r.memory_id) for r in page.items]
        return Page(items=[r for r in current if r is not None and r.is_active], next_cursor=page.next_cursor)

    @staticmethod
    def _page(items: builtins.list[MemoryRecord], limit: int) -> Page:
        more = len(items) > limit
        items = items[:limit]
        return Page(items=items, next_cursor=encode_cursor({"m": s(items[-1].memory_id)}) if more else None)

    def _partition_listing(
        self,
        scope: Scope,
        wanted: builtins.list[str],
        category: str | None,
        limit: int,
        cursor: str | None,
        *,
        more: bool,
        embeddings: bool,
    ) -> Page:
        """The partition's records newest first, filtered by status (and category): reads a
        page of the rows wanted (plus one when ``more`` asks whether a next page exists) and
        follows pages only while the filter leaves fewer."""
        wanted_rows = limit + 1 if more else limit
        names = {"#s": "status"}
        values: dict[str, Any] = {":pk": s(scope.key), ":mem": s(SORT_KEY_PREFIX)}
        values.update({f":s{i}": s(v) for i, v in enumerate(wanted)})
        condition = "#s IN (" + ", ".join(f":s{i}" for i in range(len(wanted))) + ")"
        if category is not None:
            condition += " AND category = :category"
            values[":category"] = s(str(category))
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :mem)",
            "FilterExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": min(wanted_rows, 500),
        }
        if cursor is not None:
            after = decode_cursor(cursor, ["m"])
            kwargs["ExclusiveStartKey"] = item_key(scope, memory_sort_key(text(after, "m")))
        rows = list(self._t.query(limit=wanted_rows, **kwargs))
        if embeddings:
            rows = with_vectors(self._t, scope, rows, consistent=True)
        else:
            self._recent.remember(scope, rows)
        items = [image_to_record(i) for i in rows]
        return self._page(items, limit) if more else Page(items=items[:limit], next_cursor=None)

    def find_by_key(self, scope: Scope, key: str) -> builtins.list[MemoryRecord]:
        """The ``by_key`` LSI (keys and status only) names the active matches; they are then read
        from the table, strongly consistent (a key's superseded records stay in the index, but
        only its few active ones are fetched)."""
        entries = self._t.query(
            IndexName=MEMORY_LSI_BY_KEY,
            KeyConditionExpression="pk = :pk AND mem_key = :key",
            FilterExpression="#s = :active",
            ProjectionExpression="sk",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":pk": s(scope.key),
                ":key": s(key_attribute(key)),
                ":active": s(Status.ACTIVE.value),
            },
            ConsistentRead=True,
        )
        ids = [text(e, "sk")[len(SORT_KEY_PREFIX) :] for e in entries]
        found = self._batch_get(scope, ids, consistent=True).values()
        records = [r for r in found if r.key == key and r.status is Status.ACTIVE]
        return sorted(records, key=lambda r: r.memory_id, reverse=True)

    def scan_active(
        self, scope: Scope, limit: int, *, embeddings: bool = True
    ) -> builtins.list[MemoryRecord]:
        """The ``limit`` newest active records (a page of ``limit`` rows, more only when
        inactive ones were among them)."""
        if limit <= 0:
            return []
        return self._partition_listing(
            scope, [Status.ACTIVE.value], None, limit, None, more=False, embeddings=embeddings
        ).items


__all__ = ["MAX_INDEXED_KEY_BYTES", "DynamoMemoryStore", "key_attribute", "memory_item", "slot_partition"]
