"""TurnQueue contract, the send side (what the API does with a turn), parametrised over
``embedded`` (the bounded SQLite queue), ``sqs`` (a standard queue on moto in-process), ``sqs-fifo``
(a FIFO queue on moto in-process), ``engine`` and ``engine-fifo`` (the same two queues on the
DynamoDB engine's SQS over HTTP, :mod:`support.engines`) and ``fake`` (the in-memory fake of the service unit tests).

Every backend returns the turns' message ids and enqueues :class:`~agentmem.messages.TurnMessage`
JSON. Three things differ, and each parameter says which it promises:

* **one message per (scope, message id)** — the SQLite queue and the fake skip a turn already
  queued for its scope; a FIFO queue deduplicates on ``MessageDeduplicationId`` (scope + id); a
  standard SQS queue delivers every send, and the ingest function's processed marks make the
  repeat a no-op (checked in test_handlers / test_write_pipeline);
* **order** — kept by SQLite, the fake and FIFO (per scope: the message group); a standard
  queue promises none;
* **capacity** — only the SQLite queue and the fake have one the adapter enforces; SQS answers
  ``OverLimit``, which ``aws/test_sqs_queue.py`` maps to QueueFull with Stubber (moto has none).

The consumer side (visibility, receipts, redrive) is the local queue's own business
(``test_local_turn_queue.py``); in AWS Lambda's event source mapping consumes SQS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.errors import QueueFull
from agentmem.messages import TurnMessage
from agentmem.ports import TurnQueue
from support.aws import sqs_queue
from support.engines import engine_param
from support.fakes.memory import InMemoryTurnQueue

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CAPACITY = 30


@dataclass
class Harness:
    queue: TurnQueue
    read: Callable[[], list[str]]  # the bodies enqueued so far (each once), in delivery order
    deduplicates: bool
    ordered: bool
    capacity: int | None


def _drain_sqs(sqs: Any, url: str) -> Callable[[], list[str]]:
    def read() -> list[str]:
        bodies: list[str] = []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
            bodies.extend(m["Body"] for m in messages)
            for m in messages:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return bodies

    return read


@pytest.fixture(
    params=["embedded", "sqs", "sqs-fifo", engine_param(id="engine"), engine_param(id="engine-fifo"), "fake"]
)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "embedded":
        local = SqliteTurnQueue(tmp_path / "queue.sqlite3", capacity=CAPACITY, clock=ManualClock(T0).now)

        def read_local() -> list[str]:
            bodies: list[str] = []
            while messages := local.receive(10, 30):
                bodies.extend(m.body for m in messages)
                for m in messages:
                    local.delete(m.receipt_handle)
            return bodies

        yield Harness(local, read_local, deduplicates=True, ordered=True, capacity=CAPACITY)
        local.close()
    elif request.param in ("sqs", "sqs-fifo", "engine", "engine-fifo"):
        fifo = request.param.endswith("-fifo")
        backend = "engine" if request.param.startswith("engine") else "aws"
        with sqs_queue(backend, fifo=fifo) as (sqs, url):
            queue = SqsTurnQueue(url, client=LazyClient(lambda: sqs))
            yield Harness(queue, _drain_sqs(sqs, url), deduplicates=fifo, ordered=fifo, capacity=None)
    else:
        fake = InMemoryTurnQueue(capacity=CAPACITY)
        yield Harness(fake, lambda: fake.take_bodies(), deduplicates=True, ordered=True, capacity=CAPACITY)


def turn(message_id: str, scope: Scope = S1, user: str | None = None, **changes: Any) -> TurnMessage:
    fields: dict[str, Any] = {
        "scope": scope,
        "session_id": "s1",
        "user": user or f"user says {message_id}",
        "assistant": "ok",
        "at": T0,
        "message_id": message_id,
    }
    fields.update(changes)
    return TurnMessage.from_turn(Turn(**fields))


def test_send_returns_the_message_ids_in_order(harness: Harness) -> None:
    turns = [turn("m1"), turn("m2", trace_id="tr-2"), turn("m3", S2)]
    assert harness.queue.send(turns) == ["m1", "m2", "m3"]
    assert harness.queue.send([]) == []


def test_bodies_are_turn_message_json(harness: Harness) -> None:
    turns = [
        turn("m1", user="我住在杭州，喜欢喝龙井。", assistant="好的，记住了。"),
        turn("m2", trace_id="req-9", speaker="Caroline", at=T0 + timedelta(minutes=1)),
        turn("m3", S2, assistant=""),
    ]
    harness.queue.send(turns)
    bodies = harness.read()
    assert sorted(bodies) == sorted(t.to_body() for t in turns)  # byte for byte, UTF-8 as is
    assert sorted((TurnMessage.from_body(b) for b in bodies), key=lambda t: t.message_id) == turns


def test_a_large_batch_goes_out_whole(harness: Harness) -> None:
    turns = [turn(f"m{i:02d}") for i in range(23)]  # more than one SQS batch of ten
    assert harness.queue.send(turns) == [t.message_id for t in turns]
    assert sorted(TurnMessage.from_body(b).message_id for b in harness.read()) == [
        t.message_id for t in turns
    ]


def test_order_is_kept_where_promised(harness: Harness) -> None:
    if not harness.ordered:
        pytest.skip("a standard SQS queue promises no order; ingest does not rely on one")
    for i in range(12):
        harness.queue.send([turn(f"m{i:02d}")])
    assert [TurnMessage.from_body(b).message_id for b in harness.read()] == [f"m{i:02d}" for i in range(12)]


def test_a_resent_turn_is_one_message_per_scope_where_promised(harness: Harness) -> None:
    assert harness.queue.send([turn("m1"), turn("m1", S2)]) == ["m1", "m1"]
    assert harness.queue.send([turn("m1")]) == ["m1"]  # the API retried: the id is still returned
    delivered = sorted(
        (TurnMessage.from_body(b).tenant_id, TurnMessage.from_body(b).message_id) for b in harness.read()
    )
    if harness.deduplicates:
        assert delivered == [("t1", "m1"), ("t2", "m1")]  # never merged across scopes
    else:  # at least once: the ingest function's processed marks absorb the repeat
        assert delivered == [("t1", "m1"), ("t1", "m1"), ("t2", "m1")]


def test_a_full_queue_refuses_the_whole_batch(harness: Harness) -> None:
    if harness.capacity is None:
        pytest.skip("SQS enforces its limit server-side (OverLimit -> QueueFull: aws/test_sqs_queue.py)")
    harness.queue.send([turn(f"m{i:02d}") for i in range(harness.capacity - 1)])
    with pytest.raises(QueueFull) as caught:
        harness.queue.send([turn("late-1"), turn("late-2")])
    assert caught.value.details["capacity"] == harness.capacity
    assert harness.queue.send([turn("m00")]) == ["m00"]  # already queued: takes no room
    assert harness.queue.send([turn("late-1")]) == ["late-1"]  # the last free place
    ids = [TurnMessage.from_body(b).message_id for b in harness.read()]
    assert len(ids) == harness.capacity and "late-2" not in ids  # nothing of the refused batch


def test_purge_scope_drops_only_that_scope_where_the_queue_can_select(harness: Harness) -> None:
    harness.queue.send([turn("m1"), turn("m2"), turn("m1", S2)])
    dropped = harness.queue.purge_scope(S1)
    left = sorted(
        (TurnMessage.from_body(b).tenant_id, TurnMessage.from_body(b).message_id) for b in harness.read()
    )
    if harness.capacity is None:  # SQS: no selective delete; ingest's erase barrier drops them
        assert dropped == 0 and len(left) == 3
    else:
        assert dropped == 2 and left == [("t2", "m1")]
        assert harness.queue.purge_scope(S1) == 0
