"""What the DynamoDB memory store reads and writes, priced by AWS's rules on moto
(agentmem_dev.bench.dynamodb_units), and the consumed capacity it records."""

from __future__ import annotations

from dataclasses import replace
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
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain import ids
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.ports import Put
from agentmem.services.context import PROFILE_CATEGORIES
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


def test_the_slot_categories_are_the_ones_the_context_slots_list() -> None:
    assert {c.value for c in PROFILE_CATEGORIES} | {Category.POLICY.value} == SLOT_CATEGORIES


def test_a_slot_listing_reads_its_category_not_the_partition(moto: Moto) -> None:
    rules, store = priced(moto)
    facts = [record(i) for i in range(60)]
    policies = [record(100 + i, Category.POLICY) for i in range(3)]
    store.transact([Put(r, None) for r in facts + policies])
    rules.ledger.reset()
    page = store.list(S1, category=Category.POLICY.value, limit=100)
    assert [r.memory_id for r in page.items] == [r.memory_id for r in reversed(policies)]
    rows = rules.ledger.snapshot()
    assert set(rows) == {(moto.memory_table, "query:slots")}
    # three items of ~2.6 KB, eventually consistent (a GSI): 2 units of 4 KB, halved
    size = sum(item_size(memory_item(r)) for r in policies)
    assert rows[(moto.memory_table, "query:slots")].read_units == read_units(size, consistent=False)
    # the partition walk the listing was would have read all 63 items, strongly consistent
    assert (
        read_units(size, consistent=False)
        < read_units(63 * item_size(memory_item(facts[0])), consistent=True) / 20
    )


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
    store.transact([Put(r, None) for r in records[:40]])
    store.transact([Put(r, None) for r in records[40:]])
    rules.ledger.reset()
    newest = store.scan_active(S1, 20)
    assert [r.memory_id for r in newest] == [r.memory_id for r in reversed(records[-20:])]
    size = sum(item_size(memory_item(r)) for r in records[-20:])
    assert rules.ledger.totals() == (read_units(size, consistent=True), 0.0)


def test_a_create_costs_one_transaction_of_the_item_and_the_barrier_check(moto: Moto) -> None:
    rules, store = priced(moto)
    store.create(record(0, Category.FACT))  # registers the scope
    rules.ledger.reset()
    fresh = record(1, Category.PREFERENCE, key="food", value="ramen")
    store.create(fresh)
    rows = rules.ledger.snapshot()
    item = write_units(item_size(memory_item(fresh)))
    assert rows[(moto.memory_table, "transact:Put")].write_units == 2 * item
    assert rows[(moto.memory_table, "transact:ConditionCheck")].write_units == 2
    assert rows[(moto.memory_table, "index:slots")].write_units == item  # a preference: in the slots GSI
    assert rows[(moto.memory_table, "index:by_key")].write_units == 1  # keys + status only


def test_float16_embeddings_halve_the_item_and_read_back(moto: Moto) -> None:
    _, store = priced(moto)
    fresh = record(1)
    store.create(fresh)
    assert store.get(S1, fresh.memory_id) == fresh  # VECTOR is exact in float16
    assert item_size(memory_item(fresh)) < 4096 < item_size(memory_item(fresh, "float32"))


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
