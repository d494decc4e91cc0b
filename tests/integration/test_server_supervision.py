"""``agentmem serve --workers N`` heals itself: the event-source process (ingest, the projector,
the timers) is supervised like the api workers. Killed, it is replaced without a restart of the
server, and a turn queued while it was down is processed; meanwhile ``/v1/health`` says
``degraded`` and why, and an old backlog makes it degraded on its own."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.services.health import HealthService
from agentmem.settings import load_settings
from agentmem_dev.emulator.service import LocalService
from agentmem_dev.emulator.workers import STOP_GRACE_S

pytestmark = pytest.mark.xdist_group("server-supervision")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"X-Tenant-Id": "t1", "X-User-Id": "u1", "Content-Type": "application/json"}
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def refused_soon(port: int, within_s: float = 10.0) -> bool:
    """True once a new connection to ``port`` is refused. While the draining front is closing its
    listener a connection can still land in the accept backlog and be reset with it (a slow
    machine shows this): neither is served, so a reset means "try again", not a pass."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                probe.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                probe.recv(1)
        except ConnectionRefusedError:
            return True
        except (ConnectionResetError, TimeoutError):
            pass
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    settings = load_settings(data_dir=tmp_path_factory.mktemp("supervised") / "data", embedder="hash")
    running = LocalService(settings, workers=1).start().serve_in_background()
    try:
        yield running
    finally:
        running.stop()


def port_of(service: LocalService) -> int:
    assert service.server is not None
    return int(service.server.server_address[1])


def until(check: Any, timeout_s: float = 60.0, every_s: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every_s)
    raise AssertionError("the condition did not hold in time")


def test_a_killed_event_source_is_replaced_and_processes_what_was_queued_meanwhile(
    service: LocalService,
) -> None:
    port = port_of(service)
    events = service.events
    assert events is not None
    status, health = call(port, "GET", "/v1/health")
    assert status == 200 and health["status"] == "ok", health
    assert {b["name"] for b in health["backlogs"]} == {"ingest queue", "projector stream"}
    first, restarts = events.pid, events.restarts
    assert first is not None

    os.kill(first, signal.SIGKILL)
    # while it is down (until the replacement has warmed), health says so and why
    degraded = until(lambda: (h := call(port, "GET", "/v1/health")[1])["status"] == "degraded" and h)
    assert any("event-source process" in r for r in degraded["reasons"]), degraded
    turn = {"session_id": "s1", "user": "I live in Lisbon and keep bees.", "message_id": "while-down"}
    status, body = call(port, "POST", "/v1/turns", turn)
    assert status == 202, body

    until(lambda: events.restarts == restarts + 1)
    assert events.pid not in (None, first)
    assert events.down() is None
    processed = until(
        lambda: (t := call(port, "GET", "/v1/turns/while-down")[1])["status"] == "processed" and t
    )
    assert processed["status"] == "processed"
    status, health = call(port, "GET", "/v1/health")
    assert health["status"] == "ok", health


def test_health_is_degraded_while_the_oldest_queued_turn_is_older_than_the_bound(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    queue = SqliteTurnQueue(tmp_path / "queue.db", clock=clock.now)
    health = HealthService(60.0, {"ingest queue": queue.backlog})
    assert health.report(T0).status == "ok"  # nothing waits
    turn = Turn(
        scope=Scope("t1", "u1"), session_id="s1", user="hello", assistant="hi", at=T0, message_id="m1"
    )
    queue.send([TurnMessage.from_turn(turn)])
    assert health.report(T0 + timedelta(seconds=59)).status == "ok"
    report = health.report(T0 + timedelta(seconds=61))
    assert report.status == "degraded"
    assert "ingest queue" in report.reasons[0] and "1 waiting" in report.reasons[0], report
    assert report.backlogs[0].waiting == 1 and report.backlogs[0].oldest_age_s == 61.0
    (message,) = queue.receive(1, 30)
    queue.delete_batch([message.receipt_handle])
    assert health.report(T0 + timedelta(seconds=61)).status == "ok"


LAYERS = Path(__file__).resolve().parents[2] / "layers"


def test_sigterm_drains_a_request_in_flight_and_refuses_new_connections(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "AGENTMEM_EMBEDDER": "hash",
        "PYTHONPATH": os.pathsep.join([str(LAYERS), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "agentmem_dev.cli", "serve", "--port", "0", "--workers", "1"]
    front = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "data")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    worker = 0
    try:
        assert front.stdout is not None
        banner = front.stdout.readline()
        assert "serving on http://127.0.0.1:" in banner, banner
        port = int(banner.split("http://127.0.0.1:")[1].split()[0])
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        probe.request("GET", "/v1/health")
        reply = probe.getresponse()
        reply.read()
        probe.close()
        assert reply.status == 200
        worker = int(reply.getheader("X-Agentmem-Worker") or 0)  # the api worker that answered
        assert worker > 0
        os.kill(worker, signal.SIGSTOP)  # the request will be held inside the worker
        answer: list[tuple[int, Any]] = []
        body = {"content": "I write with a fountain pen."}
        request = threading.Thread(target=lambda: answer.append(call(port, "POST", "/v1/memories", body)))
        request.start()
        time.sleep(0.5)
        front.send_signal(signal.SIGTERM)
        assert refused_soon(port), "a new connection was still accepted 10 s after SIGTERM"
        time.sleep(STOP_GRACE_S + 2)  # longer than a stop waits for a worker: the drain waits for it
        os.kill(worker, signal.SIGCONT)
        request.join(60)
        assert answer and answer[0][0] == 201, answer  # answered, not cut
        assert front.wait(timeout=90) == 0
    finally:
        if worker:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGCONT)
        if front.poll() is None:
            front.kill()
            front.wait(timeout=10)
