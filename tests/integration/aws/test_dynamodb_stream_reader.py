"""The dev stream reader (``agentmem_dev.dynamodb_stream``) on moto in-process (``aws``) and on
the DynamoDB engine over HTTP (``engine``): it hands back records in the shape Lambda delivers
them (JSON-serialisable, binary values base64, creation time in epoch seconds, the stream's ARN),
each record once, resuming after the last one it read, and within its limit."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.codec import EMBEDDING_F16, change_from_stream_record
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem_dev.dynamodb_stream import StreamReader
from support.aws import Tables, dynamodb_tables
from support.engines import engine_param

S1 = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["aws", engine_param()])
def tables(request: pytest.FixtureRequest) -> Iterator[Tables]:
    with dynamodb_tables(request.param) as found:
        yield found


def record(memory_id: str) -> MemoryRecord:
    return MemoryRecord(
        scope=S1,
        memory_id=memory_id,
        content=f"content of {memory_id} 中文",
        category=Category.FACT,
        embedding=(0.25, -0.5, 0.75, 1.0),
        embedding_model="hash-test",
        created_at=T0,
    )


def test_records_come_in_lambda_shape_once_each_and_resume_after_the_last(tables: Tables) -> None:
    store = DynamoMemoryStore(tables.memory_table, client=tables.lazy(), sleep=lambda _: None)
    reader = StreamReader(tables.streams, tables.stream_arn)
    assert reader.read() == []
    store.create(record("m1"))
    read = reader.read()
    first = [r for r in read if r["dynamodb"]["Keys"]["sk"]["S"].startswith("MEM#")]
    (vector,) = [r for r in read if r["dynamodb"]["Keys"]["sk"]["S"].startswith("VEC#")]
    assert len(first) == 1
    raw = json.loads(json.dumps(first[0]))  # what Lambda hands the projector is JSON
    assert raw["eventName"] == "INSERT" and raw["eventSourceARN"] == tables.stream_arn
    body = raw["dynamodb"]
    assert isinstance(body["ApproximateCreationDateTime"], int)
    # the vector is in an item of its own (the memory image carries none), float16, base64
    assert EMBEDDING_F16 not in body["NewImage"] and "embedding" not in body["NewImage"]
    vector_image = json.loads(json.dumps(vector))["dynamodb"]["NewImage"]
    assert len(base64.b64decode(vector_image[EMBEDDING_F16]["B"])) == 8  # 4 dimensions, float16
    assert change_from_stream_record(vector) is None  # not a memory: the projector skips it
    change = change_from_stream_record(raw)
    assert change is not None and change.new == replace(record("m1"), embedding=None) and change.old is None
    store.hard_delete(S1, "m1")
    removed = reader.read()
    assert [r["eventName"] for r in removed] == ["REMOVE", "REMOVE"]  # nothing read twice
    assert [r["dynamodb"]["Keys"]["sk"]["S"][:4] for r in removed] == ["MEM#", "VEC#"]
    assert reader.read() == []


def test_a_read_stops_at_its_limit_and_the_next_read_continues(tables: Tables) -> None:
    store = DynamoMemoryStore(tables.memory_table, client=tables.lazy(), sleep=lambda _: None)
    reader = StreamReader(tables.streams, tables.stream_arn)
    for i in range(5):
        store.create(record(f"m{i}"))
    seen: list[tuple[str, str]] = []
    while batch := reader.read(limit=3):
        assert len(batch) <= 3
        seen.extend((r["dynamodb"]["SequenceNumber"], r["dynamodb"]["Keys"]["sk"]["S"]) for r in batch)
    assert [sk for _, sk in seen if sk.startswith("MEM#")] == [f"MEM#m{i}" for i in range(5)]
    assert len({sequence for sequence, _ in seen}) == len(seen)  # each record once (SCOPE items too)
