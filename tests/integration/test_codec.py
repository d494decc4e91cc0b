"""The codec between records/turns and DynamoDB items, typed images, stream events and SQS bodies."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import boto3
import numpy as np
import pytest
from boto3.dynamodb.types import Binary, TypeSerializer
from moto import mock_aws

from agentmem.adapters import codec
from agentmem.domain.models import (
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
    Status,
)
from agentmem.errors import ValidationFailed

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _f32(values: list[float]) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(values, dtype=np.float32))


def full_record() -> MemoryRecord:
    return MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id="01JABCDEF0000000000000000A",
        content="我们项目的总预算是 250 万",
        category=Category.FACT,
        layer=Layer.PERMANENT,
        key="project.budget",
        value="250万",
        tags=("budget", "项目"),
        slot_hint="Profile",
        importance=0.7,
        importance_source=ImportanceSource.EXPLICIT,
        confidence=Confidence.INFERRED,
        source=Source.EXCHANGE,
        source_refs=SourceRefs(session_id="s1", message_ids=("m1", "m2"), trace_id="tr-1"),
        embedding=_f32([0.1, -0.25, 0.3333, 1e-7]),
        embedding_model="hash-test",
        embedding_revision="r1",
        version=3,
        created_at=T0,
        updated_at=T0 + timedelta(hours=1, microseconds=250),
        last_accessed_at=T0 + timedelta(days=1),
        access_count=4,
        valid_from=T0,
        valid_to=T0 + timedelta(days=30),
        status=Status.SUPERSEDED,
        supersedes=("old-1", "old-2"),
        superseded_by="new-1",
        pinned=True,
        expires_at=T0 + timedelta(days=7),
        entities=("Alice", "项目"),
        quarantine_reason="none",
    )


def minimal_record() -> MemoryRecord:
    return MemoryRecord(scope=Scope("t1", "u1"), memory_id="m-min", content="x", category=Category.GENERAL)


@pytest.mark.parametrize("make", [full_record, minimal_record])
def test_item_round_trip_is_exact(make: object) -> None:
    record = make()  # type: ignore[operator]
    assert codec.item_to_record(codec.record_to_item(record)) == record


@pytest.mark.parametrize("make", [full_record, minimal_record])
def test_image_round_trip_is_exact_in_both_binary_forms(make: object) -> None:
    record = make()  # type: ignore[operator]
    image = codec.record_to_image(record)
    assert codec.image_to_record(image) == record
    wire = json.loads(codec.record_to_json_image(record))
    assert codec.image_to_record(wire) == record


def test_item_shape_follows_dynamodb_semantics() -> None:
    record = full_record()
    item = codec.record_to_item(record)
    assert item["pk"] == "TENANT#t1#USER#u1" == record.scope.key
    assert item["sk"] == "MEM#01JABCDEF0000000000000000A"
    assert (item["tenant_id"], item["user_id"]) == ("t1", "u1")
    assert item["importance"] == Decimal("0.7") and isinstance(item["version"], Decimal)
    assert item["created_at"] == "2026-01-05T09:00:00Z"
    assert item["updated_at"] == "2026-01-05T10:00:00.000250Z"
    assert item["ttl"] == Decimal(int((T0 + timedelta(days=7)).timestamp()))
    assert isinstance(item["embedding"], bytes) and len(item["embedding"]) == 16
    assert np.frombuffer(item["embedding"], dtype="<f4")[1] == np.float32(-0.25)
    assert item["category"] == "fact" and item["status"] == "superseded" and item["pinned"] is True
    assert item["source_refs"] == {"session_id": "s1", "message_ids": ["m1", "m2"], "trace_id": "tr-1"}
    assert not any(isinstance(v, float) for v in item.values())
    minimal = codec.record_to_item(minimal_record())
    assert None not in minimal.values()
    assert "embedding" not in minimal and "key" not in minimal and "ttl" not in minimal
    TypeSerializer().serialize({"M": minimal})  # every value is a DynamoDB type


def test_restored_types_are_domain_types() -> None:
    restored = codec.image_to_record(codec.record_to_image(full_record()))
    assert isinstance(restored.tags, tuple) and isinstance(restored.entities, tuple)
    assert isinstance(restored.source_refs.message_ids, tuple)
    assert isinstance(restored.embedding, tuple) and all(type(x) is float for x in restored.embedding)
    assert restored.category is Category.FACT and restored.status is Status.SUPERSEDED
    assert restored.layer is Layer.PERMANENT and restored.source is Source.EXCHANGE
    assert type(restored.version) is int and type(restored.importance) is float
    assert restored.created_at is not None and restored.created_at.tzinfo is not None


def test_embedding_keeps_float32_precision() -> None:
    record = MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id="m1",
        content="c",
        category=Category.FACT,
        embedding=(0.1, 1 / 3, -2.0),
        embedding_model="hash-test",
    )
    restored = codec.item_to_record(codec.record_to_item(record))
    assert restored.embedding == _f32([0.1, 1 / 3, -2.0])


def test_datetimes_are_utc_and_naive_means_utc() -> None:
    cet = timezone(timedelta(hours=1))
    assert codec.format_datetime(datetime(2026, 1, 5, 10, 0, tzinfo=cet)) == "2026-01-05T09:00:00Z"
    assert codec.format_datetime(datetime(2026, 1, 5, 9, 0)) == "2026-01-05T09:00:00Z"
    assert codec.parse_datetime("2026-01-05T09:00:00Z") == T0
    assert codec.format_sortable(T0) < codec.format_sortable(T0 + timedelta(microseconds=1))


def test_stream_event_images_with_base64_binaries_decode() -> None:
    record = full_record()
    image = codec.record_to_image(record)
    event_image = dict(image)
    event_image["embedding"] = {"B": base64.b64encode(image["embedding"]["B"]).decode()}
    assert codec.image_to_record(event_image) == record
    item = codec.record_to_item(record)
    item["embedding"] = Binary(item["embedding"])
    assert codec.item_to_record(item) == record


def test_malformed_items_raise_validation_failed() -> None:
    item = codec.record_to_item(full_record())
    del item["content"]
    with pytest.raises(ValidationFailed):
        codec.item_to_record(item)
    with pytest.raises(ValidationFailed):
        codec.item_to_record({**codec.record_to_item(full_record()), "category": "nonsense"})


def test_item_survives_a_real_dynamodb_table(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    record = full_record()
    with mock_aws():
        table = boto3.resource("dynamodb").create_table(
            TableName="memories",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        table.put_item(Item=codec.record_to_item(record))
        stored = table.get_item(Key={"pk": record.scope.key, "sk": f"MEM#{record.memory_id}"})["Item"]
        assert codec.item_to_record(stored) == record
        low = boto3.client("dynamodb").get_item(
            TableName="memories", Key={"pk": {"S": record.scope.key}, "sk": {"S": f"MEM#{record.memory_id}"}}
        )["Item"]
        assert codec.image_to_record(low) == record


def _stream_record(event: str, new: MemoryRecord | None, old: MemoryRecord | None, sk: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "Keys": {"pk": {"S": "TENANT#t1#USER#u1"}, "sk": {"S": sk}},
        "SequenceNumber": "000000000000000000042",
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        body["NewImage"] = json.loads(codec.record_to_json_image(new))
    if old is not None:
        body["OldImage"] = json.loads(codec.record_to_json_image(old))
    return {"eventName": event, "eventSource": "aws:dynamodb", "dynamodb": body}


def test_stream_records_become_projector_changes() -> None:
    new = full_record()
    old = minimal_record()
    change = codec.change_from_stream_record(_stream_record("MODIFY", new, old, f"MEM#{new.memory_id}"))
    assert change is not None
    assert (change.event_name, change.scope, change.memory_id) == ("MODIFY", Scope("t1", "u1"), new.memory_id)
    assert (change.new, change.old, change.sequence) == (new, old, "000000000000000000042")
    removed = codec.change_from_stream_record(_stream_record("REMOVE", None, None, "MEM#m9"))
    assert removed is not None and removed.new is None and removed.old is None
    assert (removed.scope, removed.memory_id) == (Scope("t1", "u1"), "m9")
    assert codec.change_from_stream_record(_stream_record("INSERT", None, None, "TURN#m1")) is None
    with pytest.raises(ValidationFailed):
        codec.change_from_stream_record(_stream_record("UPSERT", new, None, "MEM#x"))
