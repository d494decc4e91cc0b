"""``agentmem serve --workers N``: api λ worker processes behind one front, sharing the embedded
stores. A write through one worker is seen by every other (their in-memory indexes follow the
stores' generations), a delete disappears from all; one user never holds every worker; a worker
that dies mid-request is answered for (502) and replaced; and stopping the server — SIGTERM,
Ctrl-C, or the front killed outright — leaves no process behind."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmem.settings import load_settings
from agentmem_dev.emulator.server import WORKER_HEADER, make_front
from agentmem_dev.emulator.service import LocalService
from agentmem_dev.emulator.workers import NoWorkerFree, WorkerDied, WorkerPool

pytestmark = pytest.mark.xdist_group("server-workers")  # one pool for the module's tests
WORKERS = 2
LAYERS = Path(__file__).resolve().parents[2] / "layers"


def call(
    port: int, method: str, path: str, body: Any = None, user: str = "u1", tenant: str = "t1"
) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"X-Tenant-Id": tenant, "X-User-Id": user, "Content-Type": "application/json"}
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, dict(response.getheaders()), json.loads(raw) if raw else None
    finally:
        conn.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    settings = load_settings(data_dir=tmp_path_factory.mktemp("workers") / "data", embedder="hash")
    running = LocalService(settings, workers=WORKERS).start().serve_in_background()
    try:
        yield running
    finally:
        running.stop()


def port_of(service: LocalService) -> int:
    assert service.server is not None
    return int(service.server.server_address[1])


def recall_ids_by_worker(port: int, query: str, rounds: int) -> dict[int, set[str]]:
    """Recall ``rounds`` times in a row (the idle workers take turns): ids seen per worker pid."""
    seen: dict[int, set[str]] = {}
    for _ in range(rounds):
        status, headers, body = call(port, "POST", "/v1/recall", {"query": query, "k": 5})
        assert status == 200, body
        ids = {m["id"] for m in body["memories"]}
        seen.setdefault(int(headers[WORKER_HEADER]), set()).update(ids)
    return seen


def test_a_write_through_one_worker_is_recalled_by_every_worker_and_a_delete_leaves_all(
    service: LocalService,
) -> None:
    port = port_of(service)
    assert service.pool is not None
    workers = set(service.pool.pids())
    assert len(workers) == WORKERS
    query = "beehives on the roof"
    before = recall_ids_by_worker(port, query, 2 * WORKERS)
    assert set(before) == workers  # every worker answered, and has built its index cache

    status, headers, body = call(port, "POST", "/v1/memories", {"content": "I keep two beehives on the roof"})
    assert status == 201, body
    memory_id, writer = body["memory"]["id"], int(headers[WORKER_HEADER])
    deadline = time.monotonic() + 30  # the projector (the event-source process) indexes it
    seen: dict[int, set[str]] = {}
    while time.monotonic() < deadline:
        seen = recall_ids_by_worker(port, query, 2 * WORKERS)
        if set(seen) == workers and all(memory_id in ids for ids in seen.values()):
            break
        time.sleep(0.1)
    assert set(seen) == workers and all(memory_id in ids for ids in seen.values()), (writer, seen)

    status, _, body = call(port, "DELETE", f"/v1/memories/{memory_id}")
    assert status in (200, 204), body
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = recall_ids_by_worker(port, query, 2 * WORKERS)
        if set(seen) == workers and not any(memory_id in ids for ids in seen.values()):
            break
        time.sleep(0.1)
    assert set(seen) == workers and not any(memory_id in ids for ids in seen.values()), seen
    for _ in range(WORKERS):  # and a direct read through each worker finds it gone
        status, _, _ = call(port, "GET", f"/v1/memories/{memory_id}")
        assert status == 404


def test_one_user_never_holds_every_worker(service: LocalService) -> None:
    assert service.server is not None and service.pool is not None
    share = service.server.RequestHandlerClass.share  # type: ignore[attr-defined]
    assert share.per_user == WORKERS - 1 < service.settings.http_user_concurrency
    held = [share.slot("t1", "flood") for _ in range(share.per_user)]
    for slot in held:
        assert slot.__enter__() is None
    try:
        status, headers, body = call(port_of(service), "POST", "/v1/recall", {"query": "x"}, user="flood")
        assert status == 429 and headers["Retry-After"] == "1" and body["details"]["limit"] == "user"
        assert call(port_of(service), "POST", "/v1/recall", {"query": "x"}, user="quiet")[0] == 200
    finally:
        for slot in held:
            slot.__exit__(None, None, None)


def test_a_worker_killed_mid_request_is_answered_502_and_replaced(service: LocalService) -> None:
    assert service.pool is not None
    pool, port = service.pool, port_of(service)
    victims = pool.pids()
    for pid in victims:  # frozen: the next request is stuck inside a worker
        os.kill(pid, signal.SIGSTOP)
    answer: list[tuple[int, dict[str, str], Any]] = []
    request = threading.Thread(target=lambda: answer.append(call(port, "POST", "/v1/recall", {"query": "x"})))
    request.start()
    time.sleep(0.3)
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    request.join(timeout=60)
    assert answer and answer[0][0] == 502 and answer[0][2]["error"] == WorkerDied.code
    deadline = time.monotonic() + 120
    status, headers, _ = call(port, "POST", "/v1/recall", {"query": "x"})  # waits for a replacement
    # 503: none ready within the acquire timeout; 502: the request met the other killed worker
    # before the pool noticed its death (answered, as the first one was)
    while status in (502, 503) and time.monotonic() < deadline:
        status, headers, _ = call(port, "POST", "/v1/recall", {"query": "x"})
    assert status == 200 and int(headers[WORKER_HEADER]) not in victims
    while time.monotonic() < deadline and (len(pool.pids()) < WORKERS or set(pool.pids()) & set(victims)):
        time.sleep(0.2)
    assert len(pool.pids()) == WORKERS and not set(pool.pids()) & set(victims)
    assert pool.replaced >= WORKERS


# ---------------------------------------------------------------------------- the front alone


class _FakePool(WorkerPool):
    """No processes: answers with whatever ``outcome`` says (a result or an exception)."""

    def __init__(self, size: int, outcome: Any) -> None:
        super().__init__(load_settings(data_dir=Path("/nonexistent"), embedder="hash"), size)
        self.outcome = outcome

    def invoke(self, event: dict[str, Any]) -> tuple[Any, int]:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome, 4242


@pytest.fixture
def front() -> Iterator[Any]:
    servers = []

    def start(pool: WorkerPool) -> int:
        httpd = make_front("127.0.0.1", 0, pool.settings, pool)
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(httpd)
        return int(httpd.server_address[1])

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def test_the_front_answers_for_its_workers(front: Any) -> None:
    ok = {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"fine": true}'}
    status, headers, body = call(front(_FakePool(4, ok)), "GET", "/v1/health")
    assert (status, body, headers[WORKER_HEADER]) == (200, {"fine": True}, "4242")
    status, headers, body = call(front(_FakePool(4, NoWorkerFree("all busy"))), "GET", "/v1/health")
    assert (status, body["error"], headers["Retry-After"]) == (503, "no_worker_free", "1")
    status, _, body = call(front(_FakePool(4, WorkerDied("gone"))), "GET", "/v1/health")
    assert (status, body["error"]) == (502, "bad_gateway")
    status, _, body = call(front(_FakePool(4, None)), "GET", "/v1/health")  # the handler raised
    assert (status, body["error"]) == (500, "internal_error")


@pytest.mark.parametrize(("size", "per_user"), [(1, 1), (2, 1), (3, 2), (16, 2)])
def test_a_users_share_stays_below_the_worker_count(size: int, per_user: int) -> None:
    pool = _FakePool(size, None)
    httpd = make_front("127.0.0.1", 0, pool.settings, pool)
    try:
        share = httpd.RequestHandlerClass.share  # type: ignore[attr-defined]
        assert share.per_user == per_user  # the setting (2), but never every worker (when there are 2+)
        assert share.per_tenant == pool.settings.http_tenant_concurrency
    finally:
        httpd.server_close()


# ---------------------------------------------------------------------------- shutdown


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # exited, not yet reaped by whoever adopted it


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("how", ["sigterm", "ctrl-c", "front-killed"])
def test_stopping_the_server_leaves_no_process_behind(tmp_path: Path, how: str) -> None:
    env = {
        **os.environ,
        "AGENTMEM_EMBEDDER": "hash",
        "PYTHONPATH": os.pathsep.join([str(LAYERS), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "agentmem_dev.cli", "serve", "--port", "0", "--workers", "2"]
    children: set[int] = set()
    front = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "data")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group, as a terminal gives it
    )
    try:
        assert front.stdout is not None
        banner = front.stdout.readline()  # printed once every worker is ready
        assert "serving on http://127.0.0.1:" in banner, banner
        port = int(banner.split("http://127.0.0.1:")[1].split()[0])
        assert call(port, "GET", "/v1/health")[0] == 200
        children |= _children(front.pid)
        assert len(children) >= 3  # two api workers and the event sources (+ multiprocessing's tracker)
        if how == "sigterm":
            front.send_signal(signal.SIGTERM)
        elif how == "ctrl-c":
            os.killpg(front.pid, signal.SIGINT)  # the terminal signals the whole group
        else:
            front.kill()
        code = front.wait(timeout=60)
        assert code == (-signal.SIGKILL if how == "front-killed" else 0)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(_gone(pid) for pid in children):
            time.sleep(0.1)
        assert [pid for pid in children if not _gone(pid)] == []
    finally:  # whatever the outcome, nothing this test started keeps running
        if front.poll() is None:
            front.kill()
            front.wait(timeout=10)
        for pid in children:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
