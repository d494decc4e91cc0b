"""The reads of :class:`~agentmem.adapters.aws.dynamodb_store.DynamoMemoryStore` (mixed in):
records by id, the newest-first listings and the same-key lookup, each reading what it returns.

Which read is strongly and which eventually consistent, and why, is in the store's module
docstring; in short: ``get``, ``scan_active``, the partition listing and ``find_by_key`` are
consistent (the write path reads its own writes), ``get_many`` and the slot listings (the
``slot_lists`` GSI) are not.

What a read costs follows the item it reads, not what the caller keeps (a ProjectionExpression
lowers nothing): the vector lives in an item of its own (:mod:`.dynamodb_vectors`), so a read
with ``embeddings=False`` reads the ≈0.6 KB memory items alone and one with ``embeddings=True``
adds a ``BatchGetItem`` of their vector items. ``get`` and ``find_by_key`` always read vectors.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from agentmem.adapters.aws.dynamodb_base import DynamoTable, decode_cursor, encode_cursor, s, text
from agentmem.adapters.aws.dynamodb_bookkeeping import item_key
from agentmem.adapters.aws.dynamodb_schema import MEMORY_GSI_SLOTS, MEMORY_LSI_BY_KEY, SLOT_CATEGORIES
from agentmem.adapters.aws.dynamodb_vectors import RecentItems, with_vectors
from agentmem.adapters.codec import SORT_KEY_PREFIX, image_to_record, memory_sort_key
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.ports import Page

MAX_INDEXED_KEY_BYTES = 512  # longer keys are indexed by their hash (LSI sort keys stop at 1 KB)


def key_attribute(key: str) -> str:
    """What the ``by_key`` index stores for a record key."""
    if len(key.encode("utf-8")) <= MAX_INDEXED_KEY_BYTES:
        return key
    return "H#" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def slot_partition(scope: Scope, category: str) -> str:
    """The ``slot_lists`` GSI partition of a scope's active records of one slot category."""
    return f"{scope.key}#{category}"


class MemoryReads:
    """Reads of the memory table (needs ``_t``)."""

    _t: DynamoTable
    _recent: RecentItems

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
