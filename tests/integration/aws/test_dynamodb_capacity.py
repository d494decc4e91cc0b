"""What the DynamoDB memory store reads and writes, priced by AWS's rules on moto
(agentmem_dev.bench.dynamodb_units), and the consumed capacity it records."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from awshelpers import Moto

from agentmem.adapters.aws.dynamodb_schema import (
    SLOT_CATEGORIES,
    audit_table_request,
    memory_table_request,
    session_table_request,
)
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore, memory_item
from agentmem.adapters.aws.dynamodb_vectors import VEC_DIGEST, vector_item
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain import ids
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.ports import Put
from agentmem.services.slot_listings import PROFILE_CATEGORIES
from agentmem_dev.bench.dynamodb_units import RulesClient, item_size, read_units, write_units

S1 = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
VECTOR = tuple(((i % 7) - 3) / 8 for i in range(1024))  # exact in float16


def record(number: int, category: Category = Category.FACT, **changes: Any) -> MemoryRecord:
    at = T0 + timedelta(minutes=number)
    base = MemoryRecord(
        scope=S1,
        memory_id=ids.memory_id(at, f"cap-{number}"),
        content=f"fact number {number}",
        category=category,
        embedding=VECTOR,
        embedding_model="hash-test",
        created_at=at,
    )
    return replace(base, **changes, content_hash="") if changes else base


def priced(moto: Moto) -> tuple[RulesClient, DynamoMemoryStore]:
    rules = RulesClient(
        moto.dynamodb,
        {
            moto.memory_table: memory_table_request(moto.memory_table),
            moto.session_table: session_table_request(moto.session_table),
            moto.audit_table: audit_table_request(moto.audit_table),
        },
    )
    store = DynamoMemoryStore(moto.memory_table, client=LazyClient(lambda: rules), clock=lambda: T0)
    return rules, store


def fill(store: DynamoMemoryStore, records: list[MemoryRecord]) -> None:
    """Create ``records``, 30 a transaction (each create is two actions: the memory item and
    its vector item)."""
    for start in range(0, len(records), 30):
        store.transact([Put(r, None) for r in records[start : start + 30]])


def inline_size(r: MemoryRecord) -> int:
    """Bytes of the item of the older layout: the memory item with its vector inline."""
    vector = vector_item(r, "float16") or {}
    return item_size({k: v for k, v in memory_item(r).items() if k != VEC_DIGEST}) + item_size(
        {k: v for k, v in vector.items() if k == "embedding_f16"}
    )


def test_the_slot_categories_are_the_ones_the_context_slots_list() -> None:
    assert {c.value for c in PROFILE_CATEGORIES} | {Category.POLICY.value} == SLOT_CATEGORIES


def test_a_slot_listing_reads_its_category_not_the_partition(moto: Moto) -> None:
    rules, store = priced(moto)
    facts = [record(i) for i in range(60)]
    policies = [record(100 + i, Category.POLICY) for i in range(3)]
    fill(store, facts + policies)
    rules.ledger.reset()
    page = store.list(S1, category=Category.POLICY.value, limit=100, embeddings=False)
    assert [r.memory_id for r in page.items] == [r.memory_id for r in reversed(policies)]
    rows = rules.ledger.snapshot()
    assert set(rows) == {(moto.memory_table, "query:slot_lists")}
    # three index entries without their vectors, eventually consistent (a GSI): one unit, halved
    entry = sum(item_size(slot_entry(r)) for r in policies)
    assert (
        rows[(moto.memory_table, "query:slot_lists")].read_units == read_units(entry, consistent=False) == 0.5
    )
    # the partition walk the listing was would have read all 63 items, strongly consistent
    assert read_units(entry, consistent=False) < read_units(63 * inline_size(facts[0]), consistent=True) / 20


def slot_entry(r: MemoryRecord) -> dict[str, Any]:
    """The ``slot_lists`` entry of ``r``: its item but the vector (INCLUDE projection)."""
    return {
        k: v
        for k, v in memory_item(r).items()
        if k not in ("embedding", "embedding_f16", "mem_key", "ttl", VEC_DIGEST)
    }


def test_a_slot_entry_is_the_record_without_its_vector(moto: Moto) -> None:
    rules, store = priced(moto)
    prefs = [record(10 + i, Category.PREFERENCE, key=f"food{i}", value="ramen") for i in range(40)]
    fill(store, prefs)
    rules.ledger.reset()
    light = store.list(S1, category=Category.PREFERENCE.value, limit=30, embeddings=False)
    assert [r.memory_id for r in light.items] == [r.memory_id for r in reversed(prefs)][:30]
    assert all(r.embedding is None and r.embedding_model == "hash-test" for r in light.items)
    assert [replace(r, embedding=VECTOR) for r in light.items] == list(reversed(prefs))[:30]
    # 31 entries of ~0.5 KB: 4 units of 4 KB, halved; items with the vector inline would have
    # been 21 units, halved
    entries = sum(item_size(slot_entry(r)) for r in prefs[-31:])
    assert rules.ledger.totals() == (read_units(entries, consistent=False), 0.0)
    assert read_units(entries, consistent=False) * 4 < read_units(
        sum(inline_size(r) for r in prefs[-31:]), consistent=False
    )
    # with embeddings: the same page, its vectors read from the table (one BatchGetItem)
    rules.ledger.reset()
    full = store.list(S1, category=Category.PREFERENCE.value, limit=30)
    assert full.items == list(reversed(prefs))[:30] and full.next_cursor == light.next_cursor
    assert {op for _, op in rules.ledger.snapshot()} == {"query:slot_lists", "batch_get_item"}
    rest = store.list(S1, category=Category.PREFERENCE.value, limit=30, cursor=full.next_cursor)
    assert rest.items == list(reversed(prefs))[30:] and rest.next_cursor is None


def test_the_slot_index_projects_every_record_attribute_but_the_vector() -> None:
    """A field added to the codec without the projection would come back empty from a listing."""
    (slots,) = [
        g for g in memory_table_request("t")["GlobalSecondaryIndexes"] if g["IndexName"] == "slot_lists"
    ]
    every = replace(
        record(1, Category.POLICY, key="k", value="v", tags=("a",), entities=("e",), supersedes=("m",)),
        slot_hint="h",
        embedding_revision="r1",
        superseded_by="m2",
        quarantine_reason="q",
        last_accessed_at=T0,
        updated_at=T0,
        valid_from=T0,
        valid_to=T0 + timedelta(days=2),
        expires_at=T0 + timedelta(days=3),
    )
    stored = set(memory_item(every)) - {"pk", "sk", "slot_pk", "slot_sk", VEC_DIGEST, "mem_key", "ttl"}
    assert set(slots["Projection"]["NonKeyAttributes"]) == stored
    # ... and every field of the record but its scope (tenant_id, user_id) and its vector
    fields_ = {f.name for f in fields(MemoryRecord)} - {"scope", "embedding"}
    assert fields_ <= stored


def test_a_record_leaves_the_slot_index_when_it_stops_being_active(moto: Moto) -> None:
    _, store = priced(moto)
    policy = record(1, Category.POLICY)
    store.create(policy)
    store.update(policy.evolve(now=T0, status=Status.SUPERSEDED), policy.version)
    assert store.list(S1, category=Category.POLICY.value).items == []
    assert store.list(S1, statuses=(Status.SUPERSEDED,), category=Category.POLICY.value).items[
        0
    ].memory_id == (policy.memory_id)


def test_the_neighbour_listing_reads_the_rows_it_returns(moto: Moto) -> None:
    rules, store = priced(moto)
    records = [record(i) for i in range(80)]
    fill(store, records)
    rules.ledger.reset()
    newest = store.scan_active(S1, 20, embeddings=False)  # as the write pipeline reads it
    assert [r.memory_id for r in newest] == [r.memory_id for r in reversed(records[-20:])]
    assert all(r.embedding is None for r in newest)
    size = sum(item_size(memory_item(r)) for r in records[-20:])
    assert rules.ledger.totals() == (read_units(size, consistent=True), 0.0) == (3.0, 0.0)
    # the vector apart: a quarter of what the items with their vector inline cost
    assert 4 * read_units(size, consistent=True) <= read_units(
        sum(inline_size(r) for r in records[-20:]), consistent=True
    )
    # with the vectors: their items as well, one BatchGetItem (a unit each, strongly consistent)
    rules.ledger.reset()
    assert store.scan_active(S1, 20) == list(reversed(records[-20:]))
    rows = rules.ledger.snapshot()
    assert rows[(moto.memory_table, "batch_get_item")].read_units == 20 * read_units(
        item_size(vector_item(records[-1], "float16")), consistent=True
    )


def test_a_create_costs_one_transaction_of_the_item_and_the_barrier_check(moto: Moto) -> None:
    rules, store = priced(moto)
    store.create(record(0, Category.FACT))  # registers the scope
    rules.ledger.reset()
    fresh = record(1, Category.PREFERENCE, key="food", value="ramen")
    store.create(fresh)
    rows = rules.ledger.snapshot()
    item = write_units(item_size(memory_item(fresh)))
    vector = write_units(item_size(vector_item(fresh, "float16")))
    assert (item, vector) == (1, 3)  # the memory item under 1 KB, the vector's 2 KB apart
    assert rows[(moto.memory_table, "transact:Put")].write_units == 2 * (item + vector)
    assert rows[(moto.memory_table, "transact:ConditionCheck")].write_units == 2
    # a preference: in the slot_lists GSI, without its vector: one unit
    assert rows[(moto.memory_table, "index:slot_lists")].write_units == 1
    assert rows[(moto.memory_table, "index:by_key")].write_units == 1  # keys + status only


def test_float16_embeddings_halve_the_vector_item_and_read_back(moto: Moto) -> None:
    _, store = priced(moto)
    fresh = record(1)
    store.create(fresh)
    assert store.get(S1, fresh.memory_id) == fresh  # VECTOR is exact in float16
    f16, f32 = vector_item(fresh, "float16"), vector_item(fresh, "float32")
    assert item_size(f16) < 4096 < item_size(f32)
    assert item_size(memory_item(fresh)) < 1024  # one write unit for a rewrite of the record


def test_a_rewrite_with_the_same_vector_writes_the_memory_item_alone(moto: Moto) -> None:
    rules, store = priced(moto)
    fresh = record(1)
    store.create(fresh)
    rules.ledger.reset()
    reinforced = fresh.evolve(now=T0, access_count=3)
    store.update(reinforced, fresh.version)
    assert set(rules.ledger.snapshot()) == {(moto.memory_table, "put_item")}
    assert rules.ledger.totals() == (0.0, 1.0)  # was 3 with the vector inline
    assert store.get(S1, fresh.memory_id) == reinforced


def test_the_store_records_the_capacity_dynamodb_reports(moto: Moto) -> None:
    store = DynamoMemoryStore(moto.memory_table, client=moto.lazy(), clock=lambda: T0)
    store.create(record(1))
    store.get(S1, record(1).memory_id)
    store.scan_active(S1, 5)
    snapshot = store.capacity.snapshot()
    assert snapshot[(moto.memory_table, "get_item")].calls == 1
    assert snapshot[(moto.memory_table, "query")].calls == 1
    assert snapshot[(moto.memory_table, "transact_write_items")].calls == 1
    # moto reports fixed figures for reads (0.5 a GetItem, 1 a Query) and none for transactions
    assert snapshot[(moto.memory_table, "get_item")].reported_calls == 1
    assert store.capacity.units("read") > 0
    store.capacity.reset()
    assert store.capacity.snapshot() == {}
