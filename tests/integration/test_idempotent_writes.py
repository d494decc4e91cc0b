"""``Idempotency-Key`` on the explicit writes (``POST /v1/memories``, ``/v1/import``, ``/v1/mcp``)
under ``agentmem serve --workers``: a retry of a write whose worker was killed — before it wrote,
or after it wrote but before it answered — stores one memory with one ``written`` audit line; a
retry after an answer gets that answer again; the same key with another body is a 422; keys are
per user."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentmem.bootstrap import bootstrap
from agentmem.domain.models import AuditAction, Scope, Source
from agentmem.services.idempotency import fingerprint
from agentmem.settings import load_settings
from agentmem_dev.emulator.service import LocalService

pytestmark = pytest.mark.xdist_group("server-idempotency")
BODY = {"content": "My passport number is not something I share; I prefer window seats."}


def call(
    port: int, method: str, path: str, body: Any = None, *, key: str | None = None, user: str = "u1"
) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"X-Tenant-Id": "t1", "X-User-Id": user, "Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    try:
        raw_body = None if body is None else json.dumps(body, separators=(",", ":"))
        conn.request(method, path, body=raw_body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, dict(response.getheaders()), json.loads(raw) if raw else None
    finally:
        conn.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    settings = load_settings(data_dir=tmp_path_factory.mktemp("idem") / "data", embedder="hash")
    running = LocalService(settings, workers=1).start().serve_in_background()
    try:
        yield running
    finally:
        running.stop()


def port_of(service: LocalService) -> int:
    assert service.server is not None
    return int(service.server.server_address[1])


def stored(service: LocalService, user: str = "u1") -> tuple[list[str], list[str]]:
    """The user's memory ids and the memory ids of its ``written`` audit lines."""
    container = bootstrap(service.settings)
    scope = Scope("t1", user)
    memories = [r.memory_id for r in container.admin.list(scope, limit=200).items]
    written = [e.memory_id or "" for e in container.audit.list(scope, 500, action=AuditAction.WRITTEN)]
    return memories, written


def until_answered(port: int, *args: Any, **kwargs: Any) -> tuple[int, dict[str, str], Any]:
    deadline = time.monotonic() + 120
    while True:  # 502/503 while the killed worker is replaced
        answer = call(port, *args, **kwargs)
        if answer[0] not in (502, 503) or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_a_retry_after_the_worker_was_killed_mid_request_stores_one_memory(service: LocalService) -> None:
    assert service.pool is not None
    port = port_of(service)
    body = {"content": "I keep two beehives on the roof."}
    (victim,) = service.pool.pids()
    os.kill(victim, signal.SIGSTOP)  # the request is stuck inside the worker
    answer: list[tuple[int, dict[str, str], Any]] = []
    first = threading.Thread(
        target=lambda: answer.append(call(port, "POST", "/v1/memories", body, key="bees-1", user="k1"))
    )
    first.start()
    time.sleep(0.3)
    os.kill(victim, signal.SIGKILL)
    first.join(60)
    assert answer and answer[0][0] == 502
    status, headers, created = until_answered(port, "POST", "/v1/memories", body, key="bees-1", user="k1")
    assert status == 201, created
    status, headers, again = call(port, "POST", "/v1/memories", body, key="bees-1", user="k1")
    assert status == 201 and headers.get("Idempotent-Replayed") == "true"
    assert again == created
    memories, written = stored(service, "k1")
    assert memories == [created["memory"]["id"]] and written == memories


def test_a_write_that_landed_before_its_worker_died_is_answered_not_written_again(
    service: LocalService,
) -> None:
    """The issue's case: the memory was stored, the answer never left (502). The first attempt is
    replayed here up to that point — the key claimed, the memory and its audit line committed, no
    answer kept — and the retry over HTTP finds it."""
    port = port_of(service)
    container = bootstrap(service.settings)
    scope, now = Scope("t1", "k2"), container.clock.now()
    raw = json.dumps(BODY, separators=(",", ":"))

    def landed(request_id: str, at: Any) -> tuple[int, str]:
        record, _ = container.explicit.write(
            scope, BODY["content"], now=at, source=Source.EXPLICIT, request_id=request_id
        )
        assert record is not None
        raise SystemExit("the worker dies before it answers")

    with pytest.raises(SystemExit):
        container.idempotency.run(
            scope, "pay-1", fingerprint("POST", "/v1/memories", raw), request_id="req-1", now=now, work=landed
        )
    (first_id,), _ = stored(service, "k2")
    status, headers, created = call(port, "POST", "/v1/memories", BODY, key="pay-1", user="k2")
    assert status == 201 and created["memory"]["id"] == first_id
    assert "Idempotent-Replayed" not in headers  # it ran again, and found the stored record
    memories, written = stored(service, "k2")
    assert memories == [first_id] and written == [first_id]


def test_the_same_key_with_another_body_is_refused_and_keys_are_per_user(service: LocalService) -> None:
    port = port_of(service)
    status, _, first = call(
        port, "POST", "/v1/memories", {"content": "I like green tea."}, key="k", user="k3"
    )
    assert status == 201
    status, _, refused = call(port, "POST", "/v1/memories", {"content": "I like coffee."}, key="k", user="k3")
    assert status == 422 and refused["error"] == "idempotency_key_reused"
    status, _, other = call(
        port, "POST", "/v1/memories", {"content": "I like green tea."}, key="k", user="k4"
    )
    assert status == 201 and other["memory"]["id"] != first["memory"]["id"]
    for bad in ("", "x" * 256, "a,b", "café"):
        status, _, body = call(port, "POST", "/v1/memories", {"content": "I like tea."}, key=bad, user="k3")
        assert status in (400, 422) and body["error"] in ("invalid_request", "validation_error"), (bad, body)
    assert len(stored(service, "k3")[0]) == 1


def test_import_and_the_mcp_write_are_idempotent_too(service: LocalService) -> None:
    port = port_of(service)
    batch = {"memories": [{"content": "I was born in Porto."}, {"content": "I speak Portuguese."}]}
    first = call(port, "POST", "/v1/import", batch, key="imp-1", user="k5")
    again = call(port, "POST", "/v1/import", batch, key="imp-1", user="k5")
    assert first[0] == again[0] == 200 and first[2] == again[2] and first[2]["imported"]
    assert again[1].get("Idempotent-Replayed") == "true"
    rpc = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_write", "arguments": {"content": "I cycle to work."}},
    }
    one = call(port, "POST", "/v1/mcp", rpc, key="mcp-1", user="k5")
    two = call(port, "POST", "/v1/mcp", rpc, key="mcp-1", user="k5")
    assert one[0] == two[0] == 200 and one[2] == two[2]
    memories, written = stored(service, "k5")
    assert len(memories) == 3 and sorted(written) == sorted(memories)
