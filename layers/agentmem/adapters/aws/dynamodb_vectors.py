"""The memory's vector in an item of its own (``sk = VEC#<memory_id>``, same ``pk``: the scope is
in the key), so that every read of a record that wants no vector — the write path's recent
neighbours, recall's candidates, the slot listings — and every rewrite of a record whose vector
did not change (a reinforcement) pays for ≈0.6 KB instead of ≈2.7 KB at 1024 dimensions.

* The vector item holds ``embedding_f16`` (or ``embedding`` for ``embedding_precision=
  "float32"``), ``vec_digest`` and the record's ``ttl`` (a short-term vector expires with it); the memory item carries the same ``vec_digest`` (16 hex
  characters of a BLAKE2b of the stored vector bytes) and no vector. A record without an
  embedding has neither.
* Written in the same ``TransactWriteItems`` as the memory item (atomic). A rewrite of a record
  whose vector is unchanged writes the memory item alone, under the condition
  ``vec_digest = :digest`` (or ``attribute_not_exists(vec_digest)`` for a record without one);
  when the stored digest differs (a re-embedded record, or an item of the older layout with its
  vector inline) the condition fails and the write is made again with the vector item.
* Read with ``embeddings=True`` only: one ``BatchGetItem`` of the vector items of the records
  that name a digest, at the consistency of the read it completes. A vector item whose digest is
  not the memory item's (a read that fell between the two items of a transaction) is read again,
  both items strongly consistent; still apart, the read fails as StoreUnavailable (transient).
* A read with vectors of records this store read without them less than a second ago (the write
  pipeline's neighbour pool completes its light listing so) reads only their vector items
  (:class:`RecentItems`): ``get_many`` is eventually consistent, and this store's writes forget
  what they touch.
* Items of the older layout (vector inline, no ``vec_digest``) still read as before.
* ``hard_delete`` deletes the vector item after the memory item; ``erase_scope`` deletes the
  whole partition. The stream's vector items are dropped before the projector (the event source
  filter keeps ``MEM#`` keys; :func:`~agentmem.adapters.codec.change_from_stream_record` skips the
  rest), which reads the vector through the store at the image's version.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from agentmem.adapters.aws.dynamodb_base import DynamoTable, Item, n, number, s, text
from agentmem.adapters.aws.dynamodb_bookkeeping import item_key
from agentmem.adapters.aws.dynamodb_schema import TTL_ATTRIBUTE
from agentmem.adapters.codec import (
    EMBEDDING_F16,
    VECTOR_SORT_KEY_PREFIX,
    embedding_to_bytes,
    embedding_to_f16_bytes,
    memory_sort_key,
    vector_sort_key,
)
from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import StoreUnavailable
from agentmem.ports import Put

EmbeddingPrecision = Literal["float16", "float32"]
VEC_DIGEST = "vec_digest"
VECTOR_ATTRIBUTES = ("embedding", EMBEDDING_F16)
UNCHANGED_VECTOR = f"{VEC_DIGEST} = :vec_digest"
NO_VECTOR = f"attribute_not_exists({VEC_DIGEST})"
RECENT_ITEMS_S = 1.0  # how long a light read's items may stand in for a read with vectors


def vector_attribute(record: MemoryRecord, precision: EmbeddingPrecision) -> tuple[str, bytes] | None:
    """The stored vector of ``record`` (attribute name and bytes), or None without an embedding."""
    if record.embedding is None:
        return None
    if precision == "float16":
        return EMBEDDING_F16, embedding_to_f16_bytes(record.embedding)
    return "embedding", embedding_to_bytes(record.embedding)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def vector_key(scope: Scope, memory_id: str) -> Item:
    return item_key(scope, vector_sort_key(memory_id))


def vector_item(record: MemoryRecord, precision: EmbeddingPrecision) -> Item | None:
    """The vector item of ``record`` (None without an embedding)."""
    stored = vector_attribute(record, precision)
    if stored is None:
        return None
    name, data = stored
    item = {**vector_key(record.scope, record.memory_id), name: {"B": data}, VEC_DIGEST: s(digest(data))}
    if record.expires_at is not None:  # a short-term record's vector expires with it
        item[TTL_ATTRIBUTE] = n(int(record.expires_at.timestamp()))
    return item


def vector_condition(record: MemoryRecord, precision: EmbeddingPrecision) -> tuple[str, dict[str, Any]]:
    """The condition (and its values) that the stored memory item names this record's vector."""
    stored = vector_attribute(record, precision)
    if stored is None:
        return NO_VECTOR, {}
    return UNCHANGED_VECTOR, {":vec_digest": s(digest(stored[1]))}


def vector_actions(table: str, record: MemoryRecord, precision: EmbeddingPrecision) -> list[dict[str, Any]]:
    """The transaction action that writes the record's vector item (a Delete without one)."""
    item = vector_item(record, precision)
    if item is None:
        return [{"Delete": {"TableName": table, "Key": vector_key(record.scope, record.memory_id)}}]
    return [{"Put": {"TableName": table, "Item": item}}]


def vector_changed(
    stored: Mapping[str, Any] | None, record: MemoryRecord, precision: EmbeddingPrecision
) -> bool:
    """Whether the stored memory item (a failed condition's ``ALL_OLD``) names another vector
    than ``record`` would store."""
    if not stored:
        return False
    stored_digest = text(stored, VEC_DIGEST) or None
    wanted = vector_attribute(record, precision)
    inline = any(name in stored for name in VECTOR_ATTRIBUTES)  # the older layout
    if wanted is None:
        return stored_digest is not None or inline
    return inline or stored_digest != digest(wanted[1])


def vector_changes(
    puts: Sequence[Put],
    reasons: Sequence[Mapping[str, Any]],
    rewrite: set[int],
    precision: EmbeddingPrecision,
) -> set[int]:
    """The updates of a cancelled transaction (by index) whose stored item names another vector
    than their record's and that were sent without their vector item (not in ``rewrite``)."""
    changed: set[int] = set()
    for i, put in enumerate(puts):
        reason = reasons[i] if i < len(reasons) else {}
        stored = reason.get("Item")
        if (
            put.expected_version is not None
            and i not in rewrite
            and reason.get("Code") == "ConditionalCheckFailed"
            and stored
            and number(stored, "version") == put.expected_version
            and vector_changed(stored, put.record, precision)
        ):
            changed.add(i)
    return changed


def _memory_id(item: Mapping[str, Any]) -> str:
    return text(item, "sk").removeprefix(VECTOR_SORT_KEY_PREFIX)


def with_vectors(table: DynamoTable, scope: Scope, items: Sequence[Item], *, consistent: bool) -> list[Item]:
    """``items`` (memory items of ``scope``) with the vector of each that names one merged in.
    See the module docstring for reads that fall between a transaction's two items."""
    wanted = {text(i, "memory_id"): text(i, VEC_DIGEST) for i in items if text(i, VEC_DIGEST)}
    if not wanted:
        return list(items)
    found = table.batch_get([vector_key(scope, m) for m in wanted], consistent=consistent)
    vectors = {_memory_id(v): v for v in found}
    apart = [m for m, d in wanted.items() if text(vectors.get(m, {}), VEC_DIGEST) != d]
    fresh: dict[str, Item] = {}
    if apart:
        fresh, vectors = _reread(table, scope, apart, vectors)
    out = []
    for item in items:
        memory_id = text(item, "memory_id")
        current = fresh.get(memory_id, item)
        if memory_id in fresh and not fresh[memory_id]:
            continue  # deleted since it was read
        vector = vectors.get(memory_id)
        if text(current, VEC_DIGEST) and vector is not None:
            current = {**current, **{k: v for k, v in vector.items() if k in VECTOR_ATTRIBUTES}}
        out.append(current)
    return out


def _reread(
    table: DynamoTable, scope: Scope, memory_ids: Sequence[str], vectors: dict[str, Item]
) -> tuple[dict[str, Item], dict[str, Item]]:
    """Both items of ``memory_ids`` again, strongly consistent: the memory items (an empty item
    where one is gone) and every vector item read so far, the fresh ones replacing the rest."""
    keys = [k for m in memory_ids for k in (item_key(scope, memory_sort_key(m)), vector_key(scope, m))]
    fresh: dict[str, Item] = {m: {} for m in memory_ids}
    vectors = dict(vectors)
    for m in memory_ids:
        vectors.pop(m, None)
    for item in table.batch_get(keys, consistent=True):
        if text(item, "sk").startswith(VECTOR_SORT_KEY_PREFIX):
            vectors[_memory_id(item)] = item
        else:
            fresh[text(item, "memory_id")] = item
    for m, item in fresh.items():
        if item and text(item, VEC_DIGEST) and text(vectors.get(m, {}), VEC_DIGEST) != text(item, VEC_DIGEST):
            raise StoreUnavailable(
                "dynamodb: a memory's vector item is out of step with it",
                details={"store": "dynamodb", "memory_id": m},
            )
    return fresh, vectors


class RecentItems:
    """Memory items this store read without their vectors in the last :data:`RECENT_ITEMS_S`
    seconds, so that a read *with* vectors of the same records right after (the write
    pipeline's neighbour pool: a light listing, then the vectors of those its cache lacks)
    reads only their vector items, not the memory items again. Only for reads that may be
    eventually consistent anyway (``get_many``); this store's own writes forget what they
    touch, and a vector item that no longer matches its memory item's digest is read again
    with both items, strongly consistent (:func:`with_vectors`). Bounded, thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, capacity: int = 2048) -> None:
        self._clock = clock
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str], tuple[float, Item]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, scope: Scope, items: Iterable[Item]) -> None:
        now = self._clock()
        with self._lock:
            for item in items:
                slot = (scope.key, text(item, "memory_id"))
                self._items[slot] = (now, item)
                self._items.move_to_end(slot)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def take(self, scope: Scope, memory_ids: Iterable[str]) -> dict[str, Item]:
        """The items of ``memory_ids`` read recently enough (each served once)."""
        oldest = self._clock() - RECENT_ITEMS_S
        found: dict[str, Item] = {}
        with self._lock:
            for memory_id in memory_ids:
                entry = self._items.pop((scope.key, memory_id), None)
                if entry is not None and entry[0] >= oldest:
                    found[memory_id] = entry[1]
        return found

    def forget(self, scope: Scope, memory_ids: Iterable[str] | None = None) -> None:
        """Drop what a write touched (every record of ``scope`` when ``memory_ids`` is None)."""
        with self._lock:
            if memory_ids is None:
                for slot in [s for s in self._items if s[0] == scope.key]:
                    del self._items[slot]
                return
            for memory_id in memory_ids:
                self._items.pop((scope.key, memory_id), None)
