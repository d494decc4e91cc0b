"""No raw text at rest (issue 9): the API redacts before it enqueues, an acknowledged queue
message leaves its body in neither the database pages nor the WAL, dead letters keep redacted
text only, and an erase leaves nothing of the user's text in the store's files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue, redacted_body
from agentmem.bootstrap import Container
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem_dev.emulator.runner import LocalRunner

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SECRET = "zyzzyva-quartz-7731"  # not PII to the guards: only deletion can make it go away


def on_disk(path: Path) -> bytes:
    """The database file and its WAL / journal, as bytes."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file())


S = Scope("t1", "u1")


def message(message_id: str, user: str, scope: Scope = S) -> TurnMessage:
    return TurnMessage.from_turn(
        Turn(scope=scope, session_id="s1", user=user, assistant="ok", at=T0, message_id=message_id)
    )


def test_an_acknowledged_body_is_in_neither_the_pages_nor_the_wal(tmp_path: Path) -> None:
    path = tmp_path / "queue.db"
    queue = SqliteTurnQueue(path, clock=ManualClock(T0).now)
    queue.send([message(f"m{i}", f"my code word is {SECRET} number {i}") for i in range(30)])
    assert SECRET.encode() in on_disk(path)  # the test can see a body while it is queued
    received = queue.receive(10, 30)
    assert queue.delete_batch([m.receipt_handle for m in received]) == 10
    assert SECRET.encode() in on_disk(path)  # 20 still queued
    while received := queue.receive(10, 30):
        for m in received:
            assert queue.delete(m.receipt_handle)
    assert queue.stats()["pending"] == 0
    assert SECRET.encode() not in on_disk(path)
    queue.close()


def test_dead_letters_keep_redacted_text_only(tmp_path: Path) -> None:
    path = tmp_path / "queue.db"
    queue = SqliteTurnQueue(path, max_receives=1, clock=ManualClock(T0).now)
    queue.send([message("m1", "我的手机号是13912345678，邮箱 lin@example.com")])
    (received,) = queue.receive(1, 30)
    queue.release(received.receipt_handle, error="boom")
    (dead,) = queue.dead_letters()
    body = json.loads(dead.body)
    assert "13912345678" not in dead.body and "lin@example.com" not in dead.body
    assert body["message_id"] == "m1" and body["user"].startswith("我的手机号是")
    assert b"13912345678" not in on_disk(path)
    assert json.loads(redacted_body("[1, 2]")) == {"unparseable_body_bytes": 6}
    queue.close()


def test_the_api_redacts_both_sides_before_it_enqueues(api: Any, container: Container) -> None:
    turn = {"session_id": "s1", "user": "call me on 13912345678", "assistant": "Mail lin@example.com?"}
    assert api("POST", "/v1/turns", turn)[0] == 202
    queue = container.queue
    assert isinstance(queue, SqliteTurnQueue)
    (received,) = queue.receive(1, 30)
    assert "13912345678" not in received.body and "lin@example.com" not in received.body
    assert "call me on" in received.body


def test_an_erase_leaves_no_text_of_the_user_in_the_store_files(
    api: Any, runner: LocalRunner, container: Container, clock: Any
) -> None:
    turns = [
        {"session_id": "s1", "user": f"I keep {SECRET} bees number {i}.", "message_id": f"m{i}"}
        for i in range(5)
    ]
    api("POST", "/v1/turns", {"turns": turns})
    api("PUT", "/v1/sessions/s1/state", {"task_memory": [f"remember {SECRET}"]})
    runner.drain()
    memory_db = Path(container.settings.data_dir) / "memory.db"
    queue_db = Path(container.settings.data_dir) / "queue.db"
    assert SECRET.encode() in on_disk(memory_db)
    clock.advance(timedelta(seconds=1))
    assert api("DELETE", "/v1/users/u1")[0] == 200
    assert SECRET.encode() not in on_disk(memory_db)  # records, outbox, L0 log, session state
    assert SECRET.encode() not in on_disk(queue_db)
