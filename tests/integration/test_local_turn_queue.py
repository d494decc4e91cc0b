"""The bounded local turn queue: SQS semantics on the consumer side (visibility, receipts, redrive
to a DLQ), its counters, and durability. The send side (ids, bodies, per-scope deduplication,
refusal at capacity) is the TurnQueue contract, ``contracts/test_contract_turn_queue.py``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.errors import QueueFull
from agentmem.messages import TurnMessage
from agentmem.ports import TurnQueue

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


def later(clock: ManualClock, seconds: float) -> None:
    clock.advance(timedelta(seconds=seconds))


@pytest.fixture
def queue(tmp_path: Path, clock: ManualClock) -> SqliteTurnQueue:
    return SqliteTurnQueue(tmp_path / "queue.sqlite3", capacity=5, max_receives=3, clock=clock.now)


def turn(message_id: str, scope: Scope = S1, **changes: Any) -> TurnMessage:
    fields: dict[str, object] = {
        "scope": scope,
        "session_id": "s1",
        "user": f"user says {message_id}",
        "assistant": "ok",
        "at": T0,
        "message_id": message_id,
    }
    fields.update(changes)
    return TurnMessage.from_turn(Turn(**fields))  # type: ignore[arg-type]


def test_send_receive_delete(queue: SqliteTurnQueue) -> None:
    port: TurnQueue = queue
    assert port.send([turn("m1"), turn("m2", trace_id="tr")]) == ["m1", "m2"]
    assert port.send([turn("m1")]) == ["m1"]  # already queued: not counted as sent again
    assert queue.stats() == {"pending": 2, "inflight": 0, "dead": 0, "refused": 0, "sent": 2, "deleted": 0}
    messages = queue.receive(10, 30)
    assert [m.message_id for m in messages] == ["m1", "m2"]
    assert messages[0].body == turn("m1").to_body()
    assert json.loads(messages[1].body)["trace_id"] == "tr"
    assert messages[1].message() == turn("m2", trace_id="tr")
    assert messages[0].receive_count == 1 and messages[0].sent_at == T0
    assert queue.receive(10, 30) == []  # in flight, invisible
    assert queue.delete(messages[0].receipt_handle) is True
    assert queue.delete(messages[0].receipt_handle) is False
    assert queue.stats() == {"pending": 0, "inflight": 1, "dead": 0, "refused": 0, "sent": 2, "deleted": 1}


def test_receive_respects_max_messages_and_order(queue: SqliteTurnQueue) -> None:
    queue.send([turn(f"m{i}") for i in range(4)])
    assert [m.message_id for m in queue.receive(3, 30)] == ["m0", "m1", "m2"]
    assert [m.message_id for m in queue.receive(3, 30)] == ["m3"]


def test_capacity_refuses_the_whole_batch_and_counts_it(queue: SqliteTurnQueue) -> None:
    queue.send([turn(f"m{i}") for i in range(4)])
    with pytest.raises(QueueFull) as caught:
        queue.send([turn("m4"), turn("m5")])
    assert caught.value.details["capacity"] == 5
    stats = queue.stats()
    assert (stats["pending"], stats["refused"], stats["sent"]) == (4, 2, 4)
    inflight = queue.receive(1, 30)  # in-flight messages still count against capacity
    with pytest.raises(QueueFull):
        queue.send([turn("m4"), turn("m5")])
    queue.delete(inflight[0].receipt_handle)
    assert queue.send([turn("m4"), turn("m5")]) == ["m4", "m5"]
    assert queue.stats()["refused"] == 4


def test_visibility_timeout_redelivers_with_a_new_receipt(queue: SqliteTurnQueue, clock: ManualClock) -> None:
    queue.send([turn("m1")])
    first = queue.receive(1, 30)[0]
    later(clock, 29)
    assert queue.receive(1, 30) == []
    assert queue.stats()["inflight"] == 1
    later(clock, 2)
    assert queue.stats()["inflight"] == 0
    second = queue.receive(1, 30)[0]
    assert second.message_id == "m1" and second.receive_count == 2
    assert second.receipt_handle != first.receipt_handle
    assert queue.delete(first.receipt_handle) is False  # a stale receipt acknowledges nothing
    assert queue.delete(second.receipt_handle) is True


def test_release_makes_a_message_visible_after_a_delay(queue: SqliteTurnQueue, clock: ManualClock) -> None:
    queue.send([turn("m1")])
    message = queue.receive(1, 30)[0]
    assert queue.release(message.receipt_handle, delay_s=5, error="bedrock throttled") is True
    assert queue.release(message.receipt_handle, delay_s=5) is False
    assert queue.receive(1, 30) == []
    later(clock, 5)
    again = queue.receive(1, 30)
    assert [m.receive_count for m in again] == [2]


def test_failed_receipts_end_in_the_dead_letter_table(queue: SqliteTurnQueue, clock: ManualClock) -> None:
    queue.send([turn("m1"), turn("m2")])
    for attempt in range(3):
        for message in queue.receive(10, 30):
            if message.message_id == "m1":
                queue.release(message.receipt_handle, 0, error=f"boom {attempt}")
            # m2 is never acknowledged: its visibility times out
        later(clock, 31)
    assert queue.receive(10, 30) == []  # m2 is dead-lettered on this receive
    dead = queue.dead_letters()
    assert [(d.message_id, d.receive_count) for d in dead] == [("m1", 3), ("m2", 3)]
    assert dead[0].last_error == "boom 2"
    assert dead[1].last_error == "visibility timeout expired"
    assert dead[0].body == turn("m1").to_body()
    assert queue.stats()["dead"] == 2 and queue.stats()["pending"] == 0


def test_queue_is_durable(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "q.sqlite3"
    first = SqliteTurnQueue(path, clock=clock.now)
    first.send([turn("m1")])
    first.close()
    second = SqliteTurnQueue(path, clock=clock.now)
    assert [m.message_id for m in second.receive(5, 30)] == ["m1"]
