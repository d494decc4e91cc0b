"""Erase is final (issue 9), end to end through the API and the local event sources: turns still
queued, in flight, dead-lettered or replayed from the change log when a user is erased never come
back; a turn sent after the erase is ingested normally."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agentmem.adapters.codec import change_from_stream_record
from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.bootstrap import Container
from agentmem.domain.models import Scope, Status
from agentmem.messages import TurnMessage
from agentmem_dev.emulator.runner import LocalRunner

S = Scope("t1", "u1")
TEXTS = [
    "我叫林晓雨，住在青岛。",
    "I keep bees in my garden.",
    "我喜欢喝龙井茶。",
    "My sister lives in Auckland.",
]


def post(api: Any, *texts: str, prefix: str = "m") -> None:
    turns = [{"session_id": "s1", "user": t, "message_id": f"{prefix}{i}"} for i, t in enumerate(texts)]
    status, _ = api("POST", "/v1/turns", {"turns": turns})
    assert status == 202


def nothing_left(api: Any, container: Container) -> None:
    assert container.store.list(S, statuses=tuple(Status)).items == []
    assert container.index.all_states(S) == [] and container.graph.all_states(S) == []
    assert container.turn_log.recent_turns(S, "s1", 50) == []
    assert api("GET", "/v1/memories")[1]["memories"] == []
    assert api("POST", "/v1/recall", {"query": "青岛 bees 龙井 Auckland", "k": 20})[1]["memories"] == []
    assert api("POST", "/v1/context", {"query": "我住在哪里", "mode": "rag"})[1]["context"] == ""


def replay_outbox(container: Container, clock: Any) -> None:
    for row in container.adapters.changes.read_outbox(0, 100_000):  # type: ignore[union-attr]
        change = change_from_stream_record(row.to_stream_record())
        if change is not None:
            container.projector.apply(change, now=clock.now())


def test_turns_queued_at_the_erase_never_come_back(
    api: Any, runner: LocalRunner, container: Container, clock: Any
) -> None:
    post(api, *TEXTS[:2], prefix="old")
    runner.drain()  # some memories exist, then more turns queue up
    post(api, *TEXTS[2:], prefix="q")
    clock.advance(timedelta(seconds=1))
    status, body = api("DELETE", "/v1/users/u1")
    assert status == 200 and body["queued_turns_dropped"] == 2 and body["memories"] >= 2
    runner.drain()
    nothing_left(api, container)
    replay_outbox(container, clock)  # the stream replayed from 0 brings nothing back
    runner.drain()
    nothing_left(api, container)
    raw = b"".join(
        str(r.new_image or r.old_image or "").encode()
        for r in container.adapters.changes.read_outbox(0, 10**6)
    )  # type: ignore[union-attr]
    assert b"bees" not in raw and "青岛".encode() not in raw  # the change log keeps no erased text


def test_a_turn_already_received_or_redelivered_is_dropped_at_ingest(
    api: Any, runner: LocalRunner, container: Container, clock: Any
) -> None:
    """SQS cannot purge one user: the barrier drops what is redelivered after the erase."""
    post(api, *TEXTS)
    queue = container.queue
    assert isinstance(queue, SqliteTurnQueue)
    received = queue.receive(10, 30)  # in flight (the ingest λ got them) when the erase comes
    bodies = [(m.message_id, m.body, m.sent_at) for m in received]
    clock.advance(timedelta(seconds=1))
    api("DELETE", "/v1/users/u1")
    for message_id, body, sent_at in bodies:  # delivered again (visibility timeout, a redrive)
        outcome = container.ingest.handle(body, now=clock.now(), queue_message_id=message_id, sent_at=sent_at)
        assert outcome.status == "rejected" and outcome.reasons == ["erased"]
    runner.drain()
    nothing_left(api, container)
    drops = [
        e
        for e in api("GET", "/v1/audit", query={"action": "rejected"})[1]["events"]
        if e["reason"] == "erased"
    ]
    assert len(drops) == len(TEXTS)


def test_a_future_dated_turn_in_flight_during_the_erase_is_undone(
    api: Any, runner: LocalRunner, container: Container, clock: Any
) -> None:
    """Its records pass the store's barrier (dated after it), so ingest re-checks the barrier
    after the pipeline and removes what the turn wrote."""
    future = clock.now() + timedelta(days=1)
    message = TurnMessage(
        tenant_id="t1",
        user_id="u1",
        session_id="s1",
        user="I keep bees in my garden.",
        at=future,
        message_id="f1",
    )
    pipeline = container.ingest.pipeline
    original = pipeline.ingest

    def erase_midway(turn: Any) -> Any:
        outcome = original(turn)
        clock.advance(timedelta(seconds=1))
        container.admin.erase_user(S, now=clock.now(), actor="test")  # lands after the writes
        return outcome

    pipeline.ingest = erase_midway  # type: ignore[method-assign]
    try:
        outcome = container.ingest.handle(message.to_body(), now=clock.now(), sent_at=clock.now())
    finally:
        pipeline.ingest = original  # type: ignore[method-assign]
    assert outcome.reasons == ["erased"]
    runner.drain()
    nothing_left(api, container)


def test_a_dead_lettered_turn_is_purged_and_a_turn_after_the_erase_lives(
    api: Any, runner: LocalRunner, container: Container, clock: Any
) -> None:
    post(api, TEXTS[0])
    queue = container.queue
    assert isinstance(queue, SqliteTurnQueue)
    for _ in range(container.settings.queue_max_receives):
        (message,) = queue.receive(1, 30)
        queue.release(message.receipt_handle, error="boom")
    assert len(queue.dead_letters()) == 1
    clock.advance(timedelta(seconds=1))
    assert api("DELETE", "/v1/users/u1")[1]["queued_turns_dropped"] == 1
    assert queue.dead_letters() == []
    clock.advance(timedelta(seconds=1))
    post(api, "I moved to Lisbon.", prefix="after")  # a new life after the erase
    runner.drain()
    assert [m["content"] for m in api("GET", "/v1/memories")[1]["memories"]] == ["I moved to Lisbon."]
    replay_outbox(container, clock)
    assert len(container.index.all_states(S)) == 1


def test_the_reconciler_removes_records_older_than_the_barrier(
    container: Container, api: Any, runner: LocalRunner, clock: Any
) -> None:
    post(api, TEXTS[1])
    runner.drain()
    clock.advance(timedelta(seconds=1))
    container.store.ledger.set_erase_barrier(S, clock.now())  # an erase that stopped after its barrier
    report = container.reconciler.reconcile_scope(S, now=clock.now())
    assert report.erased == 1 and report.orphan >= 1
    assert container.store.list(S, statuses=tuple(Status)).items == []
    assert container.index.all_states(S) == [] and container.graph.all_states(S) == []
