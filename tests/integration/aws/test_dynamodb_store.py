"""DynamoDB memory store specifics (the shared behaviour is in test_contract_memory_store.py):
item layout, conditions, transaction limits and cancellation handling, the sparse indexes, error
translation. moto for the table, botocore Stubber for responses moto cannot produce."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np
import pytest
from awshelpers import REGION, Moto
from botocore.stub import ANY, Stubber

from agentmem.adapters.aws.dynamodb_bookkeeping import dirty_shard
from agentmem.adapters.aws.dynamodb_store import (
    MAX_INDEXED_KEY_BYTES,
    TRANSACTION_CONFLICT_RETRIES,
    DynamoMemoryStore,
    key_attribute,
)
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain.models import Category, Layer, MemoryRecord, Scope, Status
from agentmem.domain.scope_walk import in_segment, scope_shard
from agentmem.errors import StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import Put

S1 = Scope("t1", "u1")
S2 = Scope("t1", "u2")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def rec(memory_id: str, scope: Scope = S1, **changes: Any) -> MemoryRecord:
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=f"content of {memory_id}",
        category=Category.FACT,
        embedding=(0.25, -0.5, 0.125, 1.0),
        embedding_model="hash-test",
        created_at=T0,
    )
    return replace(record, **changes, content_hash="") if changes else record


def store_on(moto: Moto) -> DynamoMemoryStore:
    return DynamoMemoryStore(moto.memory_table, client=moto.lazy(), clock=lambda: T0, sleep=lambda _: None)


def raw_item(moto: Moto, scope: Scope, sk: str) -> dict[str, Any]:
    return dict(
        moto.dynamodb.get_item(
            TableName=moto.memory_table, Key={"pk": {"S": scope.key}, "sk": {"S": sk}}
        ).get("Item")
        or {}
    )


def test_item_layout_binary_embedding_ttl_and_key_index(moto: Moto) -> None:
    store = store_on(moto)
    expires = T0 + timedelta(days=7)
    store.create(rec("m1", layer=Layer.SHORT_TERM, expires_at=expires, key="city", value="Paris"))
    item = raw_item(moto, S1, "MEM#m1")
    assert item["pk"] == {"S": "TENANT#t1#USER#u1"} and item["sk"] == {"S": "MEM#m1"}
    # the vector is in an item of its own, float16 (half the bytes of the codec's float32);
    # these values are exact in both
    assert "embedding" not in item and "embedding_f16" not in item
    vector = raw_item(moto, S1, "VEC#m1")
    assert vector["pk"] == item["pk"] and item["vec_digest"] == vector["vec_digest"]
    assert np.frombuffer(vector["embedding_f16"]["B"], dtype="<f2").tolist() == [0.25, -0.5, 0.125, 1.0]
    assert item["ttl"] == {"N": str(int(expires.timestamp()))}
    assert item["mem_key"] == {"S": "city"}
    assert (
        item["version"] == {"N": "1"}
        and item["content_hash"]["S"] == rec("m1", key="city", value="Paris").content_hash
    )
    registry = raw_item(moto, S1, "SCOPE")
    assert registry["scope_shard"] == {"S": f"SCOPES#{scope_shard(S1):02d}"}
    assert registry["scope_key"] == {"S": S1.key}


def test_long_keys_are_indexed_by_hash_and_still_found(moto: Moto) -> None:
    store = store_on(moto)
    key = "k" * (MAX_INDEXED_KEY_BYTES + 10)
    store.create(rec("m1", key=key, value="v"))
    assert key_attribute(key).startswith("H#") and len(key_attribute(key)) < 100
    assert [r.memory_id for r in store.find_by_key(S1, key)] == ["m1"]


def test_update_conflict_reports_the_stored_version(moto: Moto) -> None:
    store = store_on(moto)
    v1 = rec("m1")
    store.create(v1)
    store.update(v1.evolve(now=T0, content="v2"), expected_version=1)
    with pytest.raises(VersionConflict) as caught:
        store.update(v1.evolve(now=T0, content="lost"), expected_version=1)
    assert caught.value.details == {"memory_id": "m1", "expected": 1, "actual": 2}
    assert isinstance(caught.value.__cause__, Exception)  # chained to the SDK error


def test_pending_counter_is_sparse_in_the_dirty_index(moto: Moto) -> None:
    store = store_on(moto)
    assert store.ledger.mark_pending(S1, 3) == 3
    item = raw_item(moto, S1, "PENDING")
    assert item["dirty_shard"]["S"] == dirty_shard(S1) and item["dirty_rank"]["S"].startswith("1#")
    dirty = moto.dynamodb.scan(TableName=moto.memory_table, IndexName="dirty_users")["Items"]
    assert [i["pk"]["S"] for i in dirty] == [S1.key]  # only the PENDING item is in the index
    store.ledger.clear_pending(S1)
    assert moto.dynamodb.scan(TableName=moto.memory_table, IndexName="dirty_users")["Items"] == []


def test_a_turn_rewrites_the_dirty_index_key_only_when_the_scope_gets_dirty_or_ready(moto: Moto) -> None:
    store = store_on(moto)
    indexing: list[str] = []
    real = store._t.call

    def counting(operation: str, **kwargs: Any) -> dict[str, Any]:
        if "dirty_rank" in str(kwargs.get("UpdateExpression", "")):
            indexing.append(operation)
        return real(operation, **kwargs)

    store._t.call = counting  # type: ignore[method-assign]
    keys = []
    for expected in range(1, 9):
        assert store.ledger.mark_pending(S1, 1) == expected
        item = raw_item(moto, S1, "PENDING")
        keys.append((item["dirty_shard"]["S"], item["dirty_rank"]["S"]))
    since = raw_item(moto, S1, "PENDING")["dirty_since"]["S"]
    # eight turns, two index key changes: dirty at the first, ready at the fifth
    assert len(indexing) == 2 and len(set(keys)) == 2
    assert keys[0][1] == f"1#{since}" and keys[4][1] == f"0#{since}" and keys[-1] == keys[4]
    assert store.ledger.pending_scopes(5) == [(S1, 8)]


def test_entries_of_the_older_layout_are_reindexed_or_still_walked(moto: Moto) -> None:
    store = store_on(moto)
    legacy_scope = {
        "pk": {"S": S2.key},
        "sk": {"S": "SCOPE"},
        "scope_shard": {"S": "SCOPES"},
        "scope_key": {"S": S2.key},
    }
    old_pending = {
        "pk": {"S": S1.key},
        "sk": {"S": "PENDING"},
        "writes": {"N": "2"},
        "dirty_shard": {"S": "DIRTY#0"},
        "dirty_rank": {"S": f"999999999998#x#{S1.key}"},
    }
    for item in (legacy_scope, old_pending):
        moto.dynamodb.put_item(TableName=moto.memory_table, Item=item)
    store.create(rec("m1"))
    assert store.ledger.all_scopes(10) == ([S1, S2], None)  # the older single partition is walked last
    assert store.ledger.all_scopes(10, segment=1, segments=2)[0] in ([], [S1])  # only segment 0 walks it
    assert store.ledger.mark_pending(S1, 1) == 3  # the next write re-indexes the old entry
    assert raw_item(moto, S1, "PENDING")["dirty_shard"]["S"] == dirty_shard(S1)
    assert store.ledger.pending_scopes(10) == [(S1, 3)]


def test_the_registry_spreads_over_shards_and_segments_split_it(moto: Moto) -> None:
    store = store_on(moto)
    scopes = [Scope("t", f"user-{i}") for i in range(40)]
    for scope in scopes:
        store.create(rec("m1", scope))
    registry = moto.dynamodb.scan(TableName=moto.memory_table, IndexName="scopes")["Items"]
    assert len({i["scope_shard"]["S"] for i in registry}) > 10
    seen: list[Scope] = []
    for segment in range(3):
        cursor: str | None = None
        while True:
            page, cursor = store.ledger.all_scopes(4, cursor, segment=segment, segments=3)
            assert all(in_segment(s, segment, 3) for s in page)
            seen.extend(page)
            if cursor is None:
                break
    assert sorted(seen, key=lambda s: s.key) == sorted(scopes, key=lambda s: s.key)


def test_erase_scope_removes_counter_and_registry(moto: Moto) -> None:
    store = store_on(moto)
    store.create(rec("m1"))
    store.ledger.mark_pending(S1, 1)
    assert store.erase_scope(S1) == 1
    assert (
        moto.dynamodb.query(
            TableName=moto.memory_table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": S1.key}},
        )["Items"]
        == []
    )
    assert store.ledger.all_scopes(10) == ([], None)
    store.create(rec("m2"))  # the registry is written again after an erase
    assert store.ledger.all_scopes(10) == ([S1], None)


def test_transaction_limits_are_checked_before_sending(moto: Moto) -> None:
    store = store_on(moto)
    with pytest.raises(ValidationFailed, match="100"):
        store.transact([Put(rec(f"m{i}"), None) for i in range(101)])
    huge = "x" * 390_000
    with pytest.raises(ValidationFailed, match="4 MB"):
        store.transact([Put(rec(f"m{i}", content=huge), None) for i in range(11)])
    assert store.get(S1, "m0") is None


def test_transaction_cancellation_carries_every_reason(moto: Moto) -> None:
    store = store_on(moto)
    store.create(rec("a"))
    with pytest.raises(VersionConflict) as caught:
        store.transact([Put(rec("b"), None), Put(rec("a").evolve(now=T0), 7)])
    assert caught.value.details["memory_id"] == "a"
    assert caught.value.details["reasons"] == ["None", "ConditionalCheckFailed"]
    assert caught.value.details["actual"] == 1 and caught.value.details["expected"] == 7


# ------------------------------------------------------------------ Stubber: what moto cannot produce


def stubbed() -> tuple[DynamoMemoryStore, Stubber, list[float]]:
    client = boto3.client("dynamodb", region_name=REGION)
    sleeps: list[float] = []
    store = DynamoMemoryStore(
        "agentmem-memories", client=LazyClient(lambda: client), clock=lambda: T0, sleep=sleeps.append
    )
    return store, Stubber(client), sleeps


def add_cancellation(stub: Stubber, *codes: str) -> None:
    """A TransactionCanceledException as DynamoDB returns it, with one reason per action."""
    stub.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        service_message="Transaction cancelled, please refer cancellation reasons for specific reasons ["
        + ", ".join(codes)
        + "]",
        http_status_code=400,
        expected_params={"TransactItems": ANY, "ClientRequestToken": ANY, "ReturnConsumedCapacity": "TOTAL"},
        modeled_fields={"CancellationReasons": [{"Code": c} for c in codes]},
    )


def test_transaction_conflicts_are_retried_then_succeed() -> None:
    store, stub, sleeps = stubbed()
    record = rec("a").evolve(now=T0)
    with stub:
        add_cancellation(stub, "TransactionConflict", "None")
        add_cancellation(stub, "None", "TransactionConflict")
        stub.add_response(
            "transact_write_items",
            {},
            {"TransactItems": ANY, "ClientRequestToken": ANY, "ReturnConsumedCapacity": "TOTAL"},
        )
        store.transact([Put(record, 1), Put(rec("b").evolve(now=T0), 1)])
        stub.assert_no_pending_responses()
    assert len(sleeps) == 2


def test_transaction_conflicts_that_persist_become_a_version_conflict() -> None:
    store, stub, sleeps = stubbed()
    with stub:
        for _ in range(TRANSACTION_CONFLICT_RETRIES + 1):
            add_cancellation(stub, "TransactionConflict")
        with pytest.raises(VersionConflict) as caught:
            store.transact([Put(rec("a").evolve(now=T0), 1)])
    assert caught.value.details["reasons"] == ["TransactionConflict"]
    assert caught.value.details["attempts"] == TRANSACTION_CONFLICT_RETRIES + 1
    assert len(sleeps) == TRANSACTION_CONFLICT_RETRIES


def test_condition_failures_are_not_retried() -> None:
    store, stub, sleeps = stubbed()
    with stub:
        add_cancellation(stub, "ConditionalCheckFailed", "TransactionConflict")
        with pytest.raises(VersionConflict):
            store.transact([Put(rec("a").evolve(now=T0), 1), Put(rec("b").evolve(now=T0), 1)])
    assert sleeps == []


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        ("ProvisionedThroughputExceededException", 400, StoreUnavailable),
        ("ThrottlingException", 400, StoreUnavailable),
        ("InternalServerError", 500, StoreUnavailable),
        ("ResourceNotFoundException", 400, StoreUnavailable),
        ("ValidationException", 400, ValidationFailed),
    ],
)
def test_sdk_errors_become_agentmem_errors(code: str, status: int, expected: type[Exception]) -> None:
    store, stub, _ = stubbed()
    with stub:
        stub.add_client_error("get_item", service_error_code=code, http_status_code=status)
        with pytest.raises(expected) as caught:
            store.get(S1, "m1")
    assert caught.value.details["code"] == code  # type: ignore[attr-defined]
    assert caught.value.__cause__ is not None


def test_reads_are_scoped_and_consistent() -> None:
    store, stub, _ = stubbed()
    with stub:
        stub.add_response(
            "get_item",
            {},
            {
                "TableName": "agentmem-memories",
                "Key": {"pk": {"S": "TENANT#t9#USER#u9"}, "sk": {"S": "MEM#m1"}},
                "ConsistentRead": True,
                "ReturnConsumedCapacity": "TOTAL",
            },
        )
        assert store.get(Scope("t9", "u9"), "m1") is None


def test_status_filter_keeps_newest_first_across_pages(moto: Moto) -> None:
    store = store_on(moto)
    for i in range(60):
        store.create(rec(f"m{i:02d}", status=Status.SUPERSEDED if i % 3 else Status.ACTIVE))
    page = store.list(S1, limit=5)
    assert [r.memory_id for r in page.items] == ["m57", "m54", "m51", "m48", "m45"]
    rest = store.list(S1, limit=100, cursor=page.next_cursor)
    assert len(rest.items) == 15 and rest.next_cursor is None
