"""Webhooks in local mode, end to end: a turn posted through the api λ is processed by the local
event sources, and a real HTTP receiver in the test gets a signed ``turn.processed`` (and the
memory events), verifies the signature and finds no text in it; a failing receiver is retried
with backoff, then dead-lettered (listed by the API), and a redrive delivers it once; a delivery
owed when the process stops is made by the next process over the same data directory."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.events import SIGNATURE_HEADER, verify
from agentmem.settings import load_settings
from agentmem_dev.emulator.runner import LocalRunner
from support.api import Api

OPERATOR = "memory:read,memory:write,webhooks:manage"


class Receiver:
    """A tiny HTTP server that records every POST and answers ``status``."""

    def __init__(self) -> None:
        self.status = 200
        self.received: list[tuple[dict[str, str], bytes, int]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.received.append(({k: v for k, v in self.headers.items()}, body, outer.status))
                self.send_response(outer.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def events(self, status: int = 200) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body, answered in self.received if answered == status]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _container(tmp_path: Path, clock: ManualClock, **settings: Any) -> Container:
    return bootstrap(
        load_settings(data_dir=tmp_path / "data", embedder="hash", **settings),
        clock=clock,
        embedder=HashEmbedder(),
    )


def _register(api: Api, url: str, events: list[str]) -> dict[str, Any]:
    status, hook = api("POST", "/v1/webhooks", {"url": url, "events": events})
    assert status == 201, hook
    assert hook["secret"].startswith("whsec_")
    return hook


def test_a_posted_turn_reaches_the_receiver_signed_and_without_text(
    tmp_path: Path, clock: ManualClock, receiver: Receiver
) -> None:
    container = _container(tmp_path, clock)
    api = Api(container, permissions=OPERATOR)
    hook = _register(api, receiver.url, ["turn.*", "memory.created"])
    turn = {"session_id": "s1", "user": "My name is Lin Xiaoyu and I live in Qingdao.", "message_id": "m-1"}
    assert api("POST", "/v1/turns", turn)[0] == 202
    LocalRunner(container).drain()

    kinds = [e["type"] for e in receiver.events()]
    assert kinds.count("turn.processed") == 1 and "memory.created" in kinds
    headers, body, _ = next(r for r in receiver.received if json.loads(r[1])["type"] == "turn.processed")
    assert verify(hook["secret"], body, headers[SIGNATURE_HEADER], clock.now())
    assert not verify(hook["secret"], body + b" ", headers[SIGNATURE_HEADER], clock.now())  # tampered
    assert not verify("whsec_other", body, headers[SIGNATURE_HEADER], clock.now())
    assert not verify(
        hook["secret"], body, headers[SIGNATURE_HEADER], clock.now() + timedelta(minutes=6)
    )  # replay
    event = json.loads(body)
    assert (event["tenant_id"], event["user_id"], event["subject"]) == ("t1", "u1", "m-1")
    assert headers["Agentmem-Event-Id"] == event["id"]
    written = event["detail"]["written"]
    assert written and {e["subject"] for e in receiver.events() if e["type"] == "memory.created"} >= set(
        written
    )
    raw = b"".join(body for _, body, _ in receiver.received)
    assert b"Qingdao" not in raw and b"Lin" not in raw  # content-free
    # the listing never shows the secret again; another tenant sees none of it
    listed = api("GET", "/v1/webhooks")[1]["webhooks"]
    assert [h["id"] for h in listed] == [hook["id"]] and listed[0]["secret"] is None
    assert Api(container, tenant="t2", permissions=OPERATOR)("GET", "/v1/webhooks")[1] == {"webhooks": []}


def test_a_failing_receiver_gets_retries_then_a_dead_letter_that_a_redrive_delivers_once(
    tmp_path: Path, clock: ManualClock, receiver: Receiver
) -> None:
    container = _container(tmp_path, clock, webhook_max_attempts=3, webhook_backoff_base_s=10)
    api = Api(container, permissions=OPERATOR)
    _register(api, receiver.url, ["turn.processed"])
    receiver.status = 500
    runner = LocalRunner(container)
    api("POST", "/v1/turns", {"session_id": "s1", "user": "I like green tea.", "message_id": "m-2"})
    runner.drain()
    assert len(receiver.received) == 1
    runner.pump_webhooks()
    assert len(receiver.received) == 1  # backing off: not due yet
    clock.advance(timedelta(seconds=10))
    runner.pump_webhooks()
    assert len(receiver.received) == 2
    clock.advance(timedelta(seconds=19))
    runner.pump_webhooks()
    assert len(receiver.received) == 2  # the second wait doubled
    clock.advance(timedelta(seconds=1))
    runner.pump_webhooks()
    assert len(receiver.received) == 3
    assert api("GET", "/v1/webhooks/deliveries/dead")[1]["deliveries"][0]["attempts"] == 3
    clock.advance(timedelta(hours=2))
    runner.pump_webhooks()
    assert len(receiver.received) == 3  # dead: no more attempts

    dead = api("GET", "/v1/webhooks/deliveries/dead")[1]["deliveries"]
    assert [(d["event_type"], d["attempts"], d["last_error"]) for d in dead] == [
        ("turn.processed", 3, "http_500")
    ]
    receiver.status = 200
    assert api("POST", "/v1/webhooks/deliveries/redrive", {"ids": [dead[0]["id"]]})[1] == {"redriven": 1}
    runner.pump_webhooks()
    runner.pump_webhooks()
    assert [e["subject"] for e in receiver.events(200)] == ["m-2"]
    assert api("GET", "/v1/webhooks/deliveries/dead")[1] == {"deliveries": []}


def test_deliveries_owed_when_the_process_stops_are_made_by_the_next(
    tmp_path: Path, clock: ManualClock, receiver: Receiver
) -> None:
    first = _container(tmp_path, clock)
    api = Api(first, permissions=OPERATOR)
    _register(api, receiver.url, ["*"])
    api("POST", "/v1/turns", {"session_id": "s1", "user": "I work at a bakery.", "message_id": "m-3"})
    runner = LocalRunner(first)
    runner.pump_queue()  # processed, its events published to events.db, never delivered: "killed"
    assert receiver.received == []
    second = _container(tmp_path, clock)  # a new process over the same data directory
    LocalRunner(second).drain()
    assert [e["subject"] for e in receiver.events() if e["type"] == "turn.processed"] == ["m-3"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("ftp://example.com/x", "url"),
        ("http:///nohost", "url"),
        ("https://u:p@example.com/", "url"),
        ("not a url", "url"),
    ],
)
def test_bad_urls_are_refused_with_a_400(container: Container, url: str, field: str) -> None:
    status, body = Api(container, permissions=OPERATOR)("POST", "/v1/webhooks", {"url": url})
    assert status == 400 and body["details"]["field"] == field


def test_unknown_event_types_and_callers_without_the_permission_are_refused(container: Container) -> None:
    operator = Api(container, permissions=OPERATOR)
    status, body = operator(
        "POST", "/v1/webhooks", {"url": "https://example.com/h", "events": ["memory.exploded"]}
    )
    assert status == 400 and body["details"]["unknown"] == ["memory.exploded"]
    assert Api(container)("POST", "/v1/webhooks", {"url": "https://example.com/h"})[0] == 403
    assert operator("DELETE", "/v1/webhooks/wh_nope")[0] == 404


def test_delivered_rows_are_pruned_with_the_turns_and_dead_ones_kept(
    tmp_path: Path, clock: ManualClock, receiver: Receiver
) -> None:
    container = _container(tmp_path, clock, webhook_max_attempts=1, turn_retention_days=1)
    api = Api(container, permissions=OPERATOR)
    _register(api, receiver.url, ["turn.processed"])
    runner = LocalRunner(container)
    api("POST", "/v1/turns", {"session_id": "s1", "user": "I like tea.", "message_id": "m-ok"})
    runner.drain()
    receiver.status = 500
    api("POST", "/v1/turns", {"session_id": "s1", "user": "I like coffee.", "message_id": "m-dead"})
    runner.drain()
    clock.advance(timedelta(days=2))
    report = container.retention.run(clock.now())
    assert report.deleted.get("webhook_deliveries") == 1  # the delivered one
    dead = api("GET", "/v1/webhooks/deliveries/dead")[1]["deliveries"]
    assert [d["event_type"] for d in dead] == ["turn.processed"]  # the dead one is kept for a redrive
