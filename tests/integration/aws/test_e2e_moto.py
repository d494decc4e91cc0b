"""The AWS write and read path end to end on moto: turns sent to SQS through the queue adapter,
the received batch handed to ``functions/ingest`` as an SQS event, the memory table's stream read
and handed to ``functions/projector``, context asked from ``functions/api`` through an API
Gateway event. OpenSearch and Neptune are replaced by the embedded adapters
(``AGENTMEM_SEARCH_BACKEND=local`` / ``AGENTMEM_GRAPH_BACKEND=local``); everything else is the
AWS adapters on moto's DynamoDB, DynamoDB Streams and SQS."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from awshelpers import REGION, Moto

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.dynamodb_stream import StreamReader
from agentmem_dev.emulator import events, lambdas

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def aws_container(moto: Moto, tmp_path: Path) -> Container:
    clock = ManualClock(T0)
    queue_url = moto.sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
    settings = load_settings(
        backend="aws",
        embedder="hash",
        search_backend="local",
        graph_backend="local",
        local_projection_dir=tmp_path / "projections",
        queue_url=queue_url,
        aws_region=REGION,
    )
    return bootstrap(settings, clock=clock, embedder=HashEmbedder())


def receive_all(moto: Moto, queue_url: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    while batch := moto.sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]
    ).get("Messages"):
        messages.extend(batch)
    return messages


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return events.sqs_event_of(messages)


def ask_context(container: Container, scope: Scope, query: str) -> tuple[int, dict[str, Any]]:
    event = events.api_event_as(
        scope.tenant_id, scope.user_id, "POST", "/v1/context", {"query": query}, "memory:read"
    )
    result = lambdas.invoke("api", event, container)
    return int(result["statusCode"]), json.loads(result["body"])


def memory_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["dynamodb"]["Keys"]["sk"]["S"].startswith("MEM#")]


def test_turns_flow_from_sqs_through_the_stream_into_context(moto: Moto, aws_container: Container) -> None:
    container = aws_container
    queue_url = container.settings.queue_url
    assert queue_url is not None
    turns = [
        Turn(
            ALICE, "s-1", "I live in Glasgow and I work as a pilot.", "Nice!", T0, "m-0001", trace_id="tr-1"
        ),
        Turn(
            BOB,
            "s-7",
            "我住在杭州西湖区，最近在学潜水。",
            "潜水很有意思！",
            T0 + timedelta(minutes=1),
            "m-0002",
        ),
        Turn(ALICE, "s-1", "What is the weather like?", "Sunny.", T0 + timedelta(minutes=2), "m-0003"),
    ]
    assert container.queue.send([TurnMessage.from_turn(t) for t in turns]) == ["m-0001", "m-0002", "m-0003"]
    messages = receive_all(moto, queue_url)
    assert sorted(json.loads(m["Body"])["message_id"] for m in messages) == ["m-0001", "m-0002", "m-0003"]

    event = sqs_event(messages)
    assert lambdas.invoke("ingest", event, container) == {"batchItemFailures": []}
    for m in messages:
        moto.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
    assert container.turn_log.is_processed(ALICE, "m-0001") and container.turn_log.is_processed(BOB, "m-0002")

    reader = StreamReader(moto.streams, moto.stream_arn)
    records = reader.read()
    inserts = memory_records(records)
    assert inserts and all(r["eventName"] == "INSERT" for r in inserts)
    # the memory images carry no vector: it is in an item of its own, which the projector skips
    # and reads through the store (base64 in the stream, as Lambda delivers it)
    assert all("embedding_f16" not in r["dynamodb"]["NewImage"] for r in inserts)
    vectors = [r for r in records if r["dynamodb"]["Keys"]["sk"]["S"].startswith("VEC#")]
    assert len(vectors) == len(inserts) and isinstance(
        vectors[0]["dynamodb"]["NewImage"]["embedding_f16"]["B"], str
    )
    assert lambdas.invoke("projector", {"Records": records}, container) == {"batchItemFailures": []}

    alice_ids = [r.memory_id for r in container.store.scan_active(ALICE, 50)]
    assert len(alice_ids) >= 1
    assert set(container.index.states(ALICE, alice_ids)) == set(alice_ids)
    assert {s.memory_id for s in container.graph.all_states(ALICE)} == set(alice_ids)
    for stored in container.store.scan_active(ALICE, 50):  # projected with their vectors
        assert stored.embedding is not None and stored.embedding_model
        hits = container.index.knn(
            ALICE, np.asarray(stored.embedding, dtype=np.float32), 1, stored.embedding_model
        )
        assert [h.memory_id for h in hits] == [stored.memory_id]

    status, body = ask_context(container, ALICE, "Where do I live?")
    assert status == 200, body
    assert "Glasgow" in body["context"]
    assert {m["id"] for m in body["memories"]} & set(alice_ids)
    status, body = ask_context(container, BOB, "我住在哪里？")
    assert status == 200 and "杭州" in body["context"]
    status, body = ask_context(container, Scope("acme", "carol"), "Where do I live?")
    assert status == 200 and body["memories"] == [] and "Glasgow" not in body["context"]

    # duplicate SQS delivery and a replayed stream create nothing twice
    assert lambdas.invoke("ingest", event, container) == {"batchItemFailures": []}
    assert memory_records(reader.read()) == []
    before = container.index.all_states(ALICE)
    assert lambdas.invoke("projector", {"Records": list(reversed(records))}, container) == {
        "batchItemFailures": []
    }
    assert container.index.all_states(ALICE) == before
    assert sorted(r.memory_id for r in container.store.scan_active(ALICE, 50)) == sorted(alice_ids)


def test_a_malformed_message_is_rejected_with_a_reason_not_retried(
    moto: Moto, aws_container: Container
) -> None:
    queue_url = aws_container.settings.queue_url
    moto.sqs.send_message(
        QueueUrl=queue_url, MessageBody='{"tenant_id": "acme", "user_id": "alice", "user": 1}'
    )
    messages = receive_all(moto, queue_url)
    assert lambdas.invoke("ingest", sqs_event(messages), aws_container) == {"batchItemFailures": []}
    rejected = aws_container.audit.list(ALICE, 10, "rejected")
    assert len(rejected) == 1 and rejected[0].reason and rejected[0].reason.startswith("invalid_fields:")
    assert rejected[0].details["queue_message_id"] == messages[0]["MessageId"]
