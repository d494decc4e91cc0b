"""DeadLetterQueue and QueuedTurns contract, parametrised over ``embedded`` (the SQLite queue and its
dead-letter table), ``sqs`` (an ingest queue with a redrive policy, its DLQ and the DynamoDB
receipts, on moto in-process) and ``fake`` (the in-memory queue and its dead letters,
:mod:`support.fakes.dead_letters`).

Both promise: a sent turn is known as queued in its own scope only; a turn that failed every
delivery is listed among its scope's dead letters (never another scope's), oldest failure first,
page by page; a redrive puts exactly the chosen turns back on the ingest queue, byte for byte the
same turn, and removes them from the dead letters; an unknown id redrives nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws

from agentmem.adapters.aws.dynamodb_schema import create_tables
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.aws.sqs_dead_letters import SqsDeadLetterQueue
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.adapters.aws.turn_receipts import DynamoTurnReceipts
from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.errors import ValidationFailed
from agentmem.messages import TurnMessage
from agentmem.ports import DeadLetterQueue, QueuedTurns, TurnQueue
from support.aws import client
from support.fakes.dead_letters import InMemoryDeadLetters
from support.fakes.memory import InMemoryTurnQueue

ALICE = Scope("t1", "alice")
BOB = Scope("t1", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass
class Harness:
    queue: TurnQueue
    queued: QueuedTurns
    dead: DeadLetterQueue
    fail: Callable[[], None]  # every queued turn fails its deliveries until dead-lettered
    delivered: Callable[[], list[str]]  # bodies on the ingest queue now (taken off it)
    clock: ManualClock


@pytest.fixture(params=["embedded", "sqs", "fake"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    clock = ManualClock(T0)
    if request.param == "fake":
        fake = InMemoryTurnQueue(clock=clock.now)

        def fail_fake() -> None:
            fake.fail_all("boom")

        yield Harness(fake, fake, InMemoryDeadLetters(fake), fail_fake, fake.take_bodies, clock)
        return
    if request.param == "embedded":
        local = SqliteTurnQueue(tmp_path / "queue.sqlite3", max_receives=1, clock=clock.now)

        def fail_local() -> None:
            for m in local.receive(10, 30):
                local.release(m.receipt_handle, error="boom")

        def delivered_local() -> list[str]:
            messages = local.receive(10, 30)
            local.delete_batch([m.receipt_handle for m in messages])
            return [m.body for m in messages]

        yield Harness(local, local, local, fail_local, delivered_local, clock)
        local.close()
        return
    with mock_aws():
        sqs, dynamodb = client("sqs"), client("dynamodb")
        create_tables(dynamodb, memory="m", session="sessions", audit="a")
        dlq = sqs.create_queue(QueueName="ingest-dlq")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
        url = sqs.create_queue(QueueName="ingest", Attributes={"RedrivePolicy": policy})["QueueUrl"]
        receipts = DynamoTurnReceipts("sessions", client=LazyClient(lambda: dynamodb))
        queue = SqsTurnQueue(url, client=LazyClient(lambda: sqs), receipts=receipts, clock=clock.now)
        dead = SqsDeadLetterQueue(dlq, queue, max_receives=1, client=LazyClient(lambda: sqs), empty_wait_s=0)

        def fail_sqs() -> None:
            for _ in range(3):
                sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0)

        def delivered_sqs() -> list[str]:
            bodies: list[str] = []
            while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
                bodies += [m["Body"] for m in messages]
                for m in messages:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            return bodies

        yield Harness(queue, queue, dead, fail_sqs, delivered_sqs, clock)


def turn(message_id: str, scope: Scope = ALICE, text: str = "我住在杭州，喜欢喝龙井。") -> TurnMessage:
    return TurnMessage.from_turn(Turn(scope, "s1", text, "好的。", T0, message_id))


def dead_letter(h: Harness, *turns: TurnMessage) -> None:
    """Each turn sent and failed on its own, so their failures are in this order."""
    for t in turns:
        h.queue.send([t])
        h.fail()
        h.clock.advance(timedelta(seconds=1))


def ids(entries: Any) -> list[str]:
    return [e.message_id for e in entries]


def test_a_sent_turn_is_queued_in_its_own_scope_only(harness: Harness) -> None:
    harness.queue.send([turn("m1"), turn("m2", BOB)])
    assert harness.queued.queued_at(ALICE, "m1") == T0
    assert harness.queued.queued_at(BOB, "m1") is None
    assert harness.queued.queued_at(ALICE, "m2") is None
    assert harness.queued.queued_at(ALICE, "never-sent") is None


def test_dead_letters_are_per_scope_and_oldest_first(harness: Harness) -> None:
    dead_letter(harness, turn("a1"), turn("b1", BOB, "I live in Oslo."), turn("a2", text="I keep bees."))
    page = harness.dead.dead_letters_of(ALICE)
    assert ids(page.items) == ["a1", "a2"] and page.next_cursor is None
    assert {(e.scope, e.session_id) for e in page.items} == {(ALICE, "s1")}
    assert all(e.attempts >= 1 and e.reason for e in page.items)
    assert ids(harness.dead.dead_letters_of(BOB).items) == ["b1"]
    assert sorted(ids(harness.dead.dead_letters_of(None).items)) == ["a1", "a2", "b1"]
    assert harness.dead.dead_letter(ALICE, "b1") is None
    found = harness.dead.dead_letter(BOB, "b1")
    assert found is not None and found.scope == BOB
    assert ids(harness.dead.dead_letters_of(ALICE).items) == ["a1", "a2"]  # listing removed nothing


def test_dead_letters_page_with_a_cursor(harness: Harness) -> None:
    dead_letter(harness, *(turn(f"m{i}") for i in range(5)))
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = harness.dead.dead_letters_of(ALICE, 2, cursor)
        assert len(page.items) <= 2
        seen += ids(page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [f"m{i}" for i in range(5)]
    with pytest.raises(ValidationFailed):
        harness.dead.dead_letters_of(ALICE, 2, "not a cursor!")


def test_redrive_puts_exactly_the_chosen_turns_back(harness: Harness) -> None:
    a1, a2, b1 = turn("a1"), turn("a2", text="I keep bees."), turn("b1", BOB)
    dead_letter(harness, a1, a2, b1)
    assert harness.dead.redrive(ALICE, ["b1", "unknown"]) == []  # bob's, and no such turn
    assert harness.dead.redrive(ALICE, ["a2"]) == ["a2"]
    assert [TurnMessage.from_body(b) for b in harness.delivered()] == [a2]
    assert ids(harness.dead.dead_letters_of(None).items) == ["a1", "b1"]
    assert sorted(harness.dead.redrive(None)) == ["a1", "b1"]
    assert harness.queued.queued_at(BOB, "b1") is not None  # queued again
    assert sorted(TurnMessage.from_body(b).message_id for b in harness.delivered()) == ["a1", "b1"]
    assert harness.dead.dead_letters_of(None).items == []
