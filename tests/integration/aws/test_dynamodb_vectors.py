"""The DynamoDB store's vector item (``VEC#<memory_id>``, adapters/aws/dynamodb_vectors.py):
written with the memory item, rewritten only when the vector changes, read only with
embeddings, deleted with the record, items of the older layout (vector inline) still read and
moved on their next write, and a read that falls between a transaction's two items."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from awshelpers import Moto

from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore, memory_item
from agentmem.adapters.aws.dynamodb_vectors import RECENT_ITEMS_S, VEC_DIGEST, RecentItems, vector_item
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain.models import Category, Layer, MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable, VersionConflict
from agentmem.ports import Put

S1 = Scope("t1", "u1")
S2 = Scope("t1", "u2")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
V1 = (0.25, -0.5, 0.125, 1.0)  # exact in float16
V2 = (1.0, 0.5, -0.25, 0.0)


def rec(
    memory_id: str, scope: Scope = S1, vector: tuple[float, ...] | None = V1, **changes: Any
) -> MemoryRecord:
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=f"content of {memory_id}",
        category=Category.PREFERENCE,
        embedding=vector,
        embedding_model="hash-test",
        created_at=T0,
    )
    return replace(record, **changes, content_hash="") if changes else record


def store_on(moto: Moto, client: Any = None) -> DynamoMemoryStore:
    lazy = LazyClient(lambda: client) if client is not None else moto.lazy()
    return DynamoMemoryStore(moto.memory_table, client=lazy, clock=lambda: T0, sleep=lambda _: None)


def raw(moto: Moto, scope: Scope, sk: str) -> dict[str, Any] | None:
    key = {"pk": {"S": scope.key}, "sk": {"S": sk}}
    item: dict[str, Any] | None = moto.dynamodb.get_item(TableName=moto.memory_table, Key=key).get("Item")
    return item


def every_read(store: DynamoMemoryStore, scope: Scope, memory_id: str) -> list[MemoryRecord | None]:
    return [
        store.get(scope, memory_id),
        store.get_many(scope, [memory_id]).get(memory_id),
        next(iter(store.scan_active(scope, 5)), None),
        next(iter(store.list(scope, category=Category.PREFERENCE.value).items), None),
        next(iter(store.list(scope, statuses=tuple(Status)).items), None),
    ]


def test_the_vector_is_read_only_with_embeddings(moto: Moto) -> None:
    store = store_on(moto)
    record = rec("m1")
    store.create(record)
    assert every_read(store, S1, "m1") == [record] * 5
    store.capacity.reset()
    light = store.get_many(S1, ["m1"], embeddings=False)["m1"]
    assert light == replace(record, embedding=None)
    assert store.capacity.snapshot()[(moto.memory_table, "batch_get_item")].calls == 1  # no VEC read
    assert store.scan_active(S1, 5, embeddings=False) == [light]


def test_a_record_without_a_vector_has_no_vector_item(moto: Moto) -> None:
    store = store_on(moto)
    bare = rec("m1", vector=None)
    store.create(bare)
    assert raw(moto, S1, "VEC#m1") is None and VEC_DIGEST not in (raw(moto, S1, "MEM#m1") or {})
    assert every_read(store, S1, "m1") == [bare] * 5
    # given a vector later: written with the record; taken away: its item deleted
    embedded = replace(bare.evolve(now=T0), embedding=V2)
    store.update(embedded, bare.version)
    assert store.get(S1, "m1") == embedded and raw(moto, S1, "VEC#m1") is not None
    stripped = replace(embedded.evolve(now=T0), embedding=None)
    store.update(stripped, embedded.version)
    assert store.get(S1, "m1") == stripped and raw(moto, S1, "VEC#m1") is None


def test_a_rewrite_keeps_or_replaces_the_vector_item(moto: Moto) -> None:
    store = store_on(moto)
    v1 = rec("m1")
    store.create(v1)
    before = raw(moto, S1, "VEC#m1")
    v2 = v1.evolve(now=T0, access_count=2)
    store.update(v2, v1.version)  # same vector: the memory item alone
    assert raw(moto, S1, "VEC#m1") == before and store.get(S1, "m1") == v2
    v3 = replace(v2.evolve(now=T0, content="changed"), embedding=V2)
    store.update(v3, v2.version)  # a new vector: both items, one transaction
    assert store.get(S1, "m1") == v3 and raw(moto, S1, "VEC#m1") != before
    with pytest.raises(VersionConflict) as caught:  # a stale version is still a conflict
        store.update(replace(v3, embedding=V1), v2.version)
    assert caught.value.details["actual"] == v3.version
    assert store.get(S1, "m1") == v3


def test_a_transaction_writes_a_changed_vector_with_its_record(moto: Moto) -> None:
    store = store_on(moto)
    old = rec("m1")
    store.create(old)
    marked = replace(old.evolve(now=T0, status=Status.SUPERSEDED, superseded_by="m2"), embedding=V2)
    written = rec("m2", vector=V2)
    store.transact([Put(written, None), Put(marked, old.version)])
    assert store.get(S1, "m1") == marked and store.get(S1, "m2") == written
    with pytest.raises(VersionConflict) as caught:  # vector changed *and* version stale
        store.transact([Put(rec("m3"), None), Put(replace(marked, embedding=V1), old.version)])
    assert caught.value.details["memory_id"] == "m1"
    assert store.get(S1, "m3") is None and store.get(S1, "m1") == marked


def test_items_of_the_older_layout_still_read_and_move_on_their_next_write(moto: Moto) -> None:
    store = store_on(moto)
    legacy = rec("m1")
    item = {k: v for k, v in memory_item(legacy).items() if k != VEC_DIGEST}
    vector = vector_item(legacy, "float16")
    assert vector is not None
    item["embedding_f16"] = vector["embedding_f16"]  # the vector inline, as before
    moto.dynamodb.put_item(TableName=moto.memory_table, Item=item)
    assert every_read(store, S1, "m1") == [legacy] * 5
    assert store.get_many(S1, ["m1"], embeddings=False)["m1"] == legacy  # inline: it comes along
    reinforced = legacy.evolve(now=T0, access_count=1)
    store.update(reinforced, legacy.version)
    moved = raw(moto, S1, "MEM#m1") or {}
    assert "embedding_f16" not in moved and moved[VEC_DIGEST] == (raw(moto, S1, "VEC#m1") or {})[VEC_DIGEST]
    assert every_read(store, S1, "m1") == [reinforced] * 5


def test_hard_delete_and_erase_remove_the_vector_items(moto: Moto) -> None:
    store = store_on(moto)
    for memory_id in ("m1", "m2", "m3"):
        store.create(rec(memory_id))
    store.create(rec("m1", S2))
    assert store.hard_delete(S1, "m1") is True
    assert raw(moto, S1, "MEM#m1") is None and raw(moto, S1, "VEC#m1") is None
    assert store.erase_scope(S1) == 2  # records, not their vector items
    keys = moto.dynamodb.scan(TableName=moto.memory_table)["Items"]
    assert not [k for k in keys if k["pk"]["S"] == S1.key and k["sk"]["S"] != "ERASED"]
    assert store.get(S2, "m1") == rec("m1", S2)  # the other scope keeps its vector


class _Torn:
    """A client whose eventually consistent reads of vector items return another digest (a read
    that fell between a transaction's two items); ``always`` makes the strong ones do so too."""

    def __init__(self, inner: Any, *, always: bool = False) -> None:
        self.inner = inner
        self.always = always

    def batch_get_item(self, **kwargs: Any) -> Any:
        result = self.inner.batch_get_item(**kwargs)
        consistent = all(r.get("ConsistentRead") for r in kwargs["RequestItems"].values())
        if self.always or not consistent:
            for items in result.get("Responses", {}).values():
                for item in items:
                    if item["sk"]["S"].startswith("VEC#"):
                        item[VEC_DIGEST] = {"S": "0" * 16}
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_read_between_the_two_items_is_made_again_consistently(moto: Moto) -> None:
    record = rec("m1")
    store_on(moto).create(record)
    assert store_on(moto, _Torn(moto.dynamodb)).get_many(S1, ["m1"]) == {"m1": record}
    with pytest.raises(StoreUnavailable):  # still apart: transient, the caller retries
        store_on(moto, _Torn(moto.dynamodb, always=True)).get_many(S1, ["m1"])


def test_a_short_term_vector_expires_with_its_record(moto: Moto) -> None:
    store = store_on(moto)
    expires = T0 + timedelta(days=7)
    store.create(rec("m1", layer=Layer.SHORT_TERM, expires_at=expires))
    memory, vector = raw(moto, S1, "MEM#m1") or {}, raw(moto, S1, "VEC#m1") or {}
    assert vector["ttl"] == memory["ttl"] == {"N": str(int(expires.timestamp()))}


def test_a_light_read_then_one_with_vectors_reads_the_memory_items_once(moto: Moto) -> None:
    """The write pipeline's neighbour pool: a light read, then the vectors its cache lacks."""
    store = store_on(moto)
    records = [rec(f"m{i}") for i in range(4)]
    for record in records:
        store.create(record)
    ids = [r.memory_id for r in records]
    store.get_many(S1, ids, embeddings=False)
    store.capacity.reset()
    assert store.get_many(S1, ids) == {r.memory_id: r for r in records}
    calls = store.capacity.snapshot()[(moto.memory_table, "batch_get_item")].calls
    assert calls == 1  # the vector items only
    # ... served once, and a write of this store forgets what it touched
    store.get_many(S1, ids, embeddings=False)
    changed = replace(records[0].evolve(now=T0, content="changed"), embedding=V2)
    store.update(changed, records[0].version)
    store.capacity.reset()
    assert store.get_many(S1, ids)["m0"] == changed
    assert store.capacity.snapshot()[(moto.memory_table, "batch_get_item")].calls == 2  # m0 read again


def test_the_light_items_stand_in_for_a_second_only(moto: Moto) -> None:
    now = [0.0]
    recent = RecentItems(clock=lambda: now[0])
    recent.remember(S1, [{"memory_id": {"S": "m1"}}, {"memory_id": {"S": "m2"}}])
    now[0] = RECENT_ITEMS_S + 0.5
    recent.remember(S1, [{"memory_id": {"S": "m3"}}])
    assert set(recent.take(S1, ["m1", "m2", "m3"])) == {"m3"}
    assert recent.take(S1, ["m3"]) == {}
