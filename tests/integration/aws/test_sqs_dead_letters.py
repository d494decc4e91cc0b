"""The AWS side of turn status and dead letters on moto: receipts of sent turns in the session
table, the ingest DLQ listed per scope without deleting (every message visible again after a
listing), redrive back to the ingest queue, and the API routes over an ``aws`` container."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from awshelpers import REGION, Moto

from agentmem.adapters.aws.sqs_dead_letters import SqsDeadLetterQueue
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.adapters.aws.turn_receipts import DynamoTurnReceipts
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.emulator import events, lambdas

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def turn(scope: Scope, message_id: str, text: str = "我住在青岛。") -> TurnMessage:
    return TurnMessage.from_turn(Turn(scope, "s-1", text, "好的。", T0, message_id))


@pytest.fixture
def queues(moto: Moto) -> Iterator[tuple[str, str]]:
    """An ingest queue that dead-letters after one receive, and its DLQ."""
    dlq = moto.sqs.create_queue(QueueName="agentmem-ingest-dlq")["QueueUrl"]
    arn = moto.sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    ingest = moto.sqs.create_queue(
        QueueName="agentmem-ingest",
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})},
    )["QueueUrl"]
    yield ingest, dlq


def fail_every_delivery(moto: Moto, ingest: str) -> None:
    """Receive without deleting until SQS moves every message to the DLQ (max receive count 1)."""
    for _ in range(3):
        moto.sqs.receive_message(QueueUrl=ingest, MaxNumberOfMessages=10, VisibilityTimeout=0)


def adapters(moto: Moto, ingest: str, dlq: str) -> tuple[SqsTurnQueue, SqsDeadLetterQueue]:
    receipts = DynamoTurnReceipts(moto.session_table, client=moto.lazy())
    queue = SqsTurnQueue(ingest, client=moto.lazy_sqs(), receipts=receipts, clock=lambda: T0)
    return queue, SqsDeadLetterQueue(dlq, queue, max_receives=1, client=moto.lazy_sqs(), empty_wait_s=0)


def test_sent_turns_get_receipts_and_an_erase_removes_them(moto: Moto, queues: tuple[str, str]) -> None:
    queue, _ = adapters(moto, *queues)
    queue.send([turn(ALICE, "m-1"), turn(BOB, "m-2")])
    assert queue.queued_at(ALICE, "m-1") == T0
    assert queue.queued_at(BOB, "m-1") is None  # another user's turn is unknown
    assert queue.queued_at(ALICE, "never") is None
    assert queue.purge_scope(ALICE) == 0  # SQS cannot drop alice's messages; her receipts go
    assert queue.queued_at(ALICE, "m-1") is None and queue.queued_at(BOB, "m-2") == T0
    item = moto.dynamodb.get_item(
        TableName=moto.session_table, Key={"pk": {"S": BOB.key}, "sk": {"S": "QUEUED#m-2"}}
    )["Item"]
    assert set(item) == {"pk", "sk", "at", "ttl"}  # the time only, never the turn's text


def test_the_dlq_is_listed_per_scope_and_left_as_it_was(moto: Moto, queues: tuple[str, str]) -> None:
    ingest, dlq = queues
    queue, dead = adapters(moto, ingest, dlq)
    queue.send([turn(ALICE, "m-1"), turn(ALICE, "m-2", "I keep bees."), turn(BOB, "m-3")])
    fail_every_delivery(moto, ingest)
    first = dead.dead_letters_of(ALICE)
    assert sorted(e.message_id for e in first.items) == ["m-1", "m-2"] and first.next_cursor is None
    assert {e.scope for e in first.items} == {ALICE} and all(e.attempts == 1 for e in first.items)
    assert all(e.session_id == "s-1" and e.reason for e in first.items)
    again = dead.dead_letters_of(ALICE)  # a listing deletes nothing and hides nothing
    assert [e.message_id for e in again.items] == [e.message_id for e in first.items]
    assert [e.message_id for e in dead.dead_letters_of(BOB).items] == ["m-3"]
    assert len(dead.dead_letters_of(None).items) == 3
    page = dead.dead_letters_of(ALICE, limit=1)
    rest = dead.dead_letters_of(ALICE, limit=1, cursor=page.next_cursor)
    assert [e.message_id for e in page.items + rest.items] == [e.message_id for e in first.items]
    assert rest.next_cursor is None
    assert dead.dead_letter(ALICE, "m-3") is None and dead.dead_letter(BOB, "m-3") is not None


def test_redrive_sends_back_to_the_ingest_queue_then_deletes(moto: Moto, queues: tuple[str, str]) -> None:
    ingest, dlq = queues
    queue, dead = adapters(moto, ingest, dlq)
    queue.send([turn(ALICE, "m-1"), turn(BOB, "m-2")])
    fail_every_delivery(moto, ingest)
    assert dead.redrive(ALICE, ["m-2"]) == []  # bob's: not alice's to redrive
    assert dead.redrive(ALICE) == ["m-1"]
    assert [e.message_id for e in dead.dead_letters_of(None).items] == ["m-2"]
    (message,) = moto.sqs.receive_message(QueueUrl=ingest, MaxNumberOfMessages=10)["Messages"]
    assert TurnMessage.from_body(message["Body"]) == turn(ALICE, "m-1")


@pytest.fixture
def aws_container(moto: Moto, queues: tuple[str, str], tmp_path: Path) -> Container:
    ingest, dlq = queues
    settings = load_settings(
        backend="aws",
        embedder="hash",
        search_backend="local",
        graph_backend="local",
        local_projection_dir=tmp_path / "projections",
        queue_url=ingest,
        dlq_url=dlq,
        queue_max_receives=1,
        aws_region=REGION,
    )
    return bootstrap(settings, clock=ManualClock(T0), embedder=HashEmbedder())


def call(container: Container, scope: Scope, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    event = events.api_event_as(
        scope.tenant_id, scope.user_id, method, path, body, "memory:read,memory:write"
    )
    result = lambdas.invoke("api", event, container)
    return int(result["statusCode"]), json.loads(result["body"] or "null")


def test_the_routes_over_the_aws_backend(
    moto: Moto, queues: tuple[str, str], aws_container: Container
) -> None:
    ingest, _ = queues
    c = aws_container
    body = {"session_id": "s-1", "user": "I moved to Lisbon.", "message_id": "m-9"}
    assert call(c, ALICE, "POST", "/v1/turns", body)[0] == 202
    status, answer = call(c, ALICE, "GET", "/v1/turns/m-9")
    assert status == 200 and answer["status"] == "queued"
    assert call(c, BOB, "GET", "/v1/turns/m-9")[0] == 404
    fail_every_delivery(moto, ingest)
    assert call(c, ALICE, "GET", "/v1/turns/m-9")[1]["status"] == "dead_lettered"
    status, answer = call(c, ALICE, "GET", "/v1/dead-letters")
    assert status == 200 and [d["message_id"] for d in answer["dead_letters"]] == ["m-9"]
    assert "Lisbon" not in json.dumps(answer)
    assert call(c, BOB, "GET", "/v1/dead-letters")[1]["dead_letters"] == []
    assert call(c, BOB, "POST", "/v1/dead-letters/m-9/redrive")[0] == 404
    assert call(c, ALICE, "POST", "/v1/dead-letters/m-9/redrive") == (200, {"redriven": 1})
    assert call(c, ALICE, "GET", "/v1/turns/m-9")[1]["status"] == "queued"
    events_ = call(c, ALICE, "GET", "/v1/audit")[1]["events"]
    assert [e["details"]["message_id"] for e in events_ if e["action"] == "redriven"] == ["m-9"]


def test_without_a_dlq_url_the_dead_letter_routes_say_so(moto: Moto, tmp_path: Path) -> None:
    ingest = moto.sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
    settings = load_settings(
        backend="aws",
        embedder="hash",
        search_backend="local",
        graph_backend="local",
        local_projection_dir=tmp_path / "projections",
        queue_url=ingest,
        aws_region=REGION,
    )
    c = bootstrap(settings, clock=ManualClock(T0), embedder=HashEmbedder())
    status, answer = call(c, ALICE, "GET", "/v1/dead-letters")
    assert answer["details"] == {"setting": "AGENTMEM_DLQ_URL"} and status == 500
