"""One user's flood cannot take the local server from the others: a per-user and per-tenant
share of the requests in flight, beyond which the caller gets 429 with Retry-After at once."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agentmem.bootstrap import Container
from agentmem_dev.emulator.fairness import ConcurrencyShare
from agentmem_dev.emulator.server import make_server


def test_the_share_admits_up_to_its_limits_and_frees_on_exit() -> None:
    share = ConcurrencyShare(per_user=2, per_tenant=3)
    with share.slot("t1", "a") as one, share.slot("t1", "a") as two, share.slot("t1", "a") as three:
        assert (one, two, three) == (None, None, "user")
        with share.slot("t1", "b") as other, share.slot("t1", "c") as tenant_full:
            assert other is None and tenant_full == "tenant"
        with share.slot("t2", "a") as other_tenant:
            assert other_tenant is None  # the same user name in another tenant is another user
    with share.slot("t1", "a") as again:
        assert again is None  # slots are given back, also after a refusal
    with share.slot(None, None) as anonymous:
        assert anonymous is None  # not counted: the API refuses it itself


@pytest.fixture
def server(container: Container) -> Iterator[tuple[Any, int]]:
    httpd = make_server("127.0.0.1", 0, container)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd, int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def recall(port: int, user: str) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"query": "coffee"})
    headers = {"X-Tenant-Id": "t1", "X-User-Id": user, "Content-Type": "application/json"}
    conn.request("POST", "/v1/recall", body=body, headers=headers)
    response = conn.getresponse()
    payload = json.loads(response.read() or b"null")
    conn.close()
    return response.status, dict(response.getheaders()), payload


def test_a_user_beyond_its_share_gets_429_and_another_user_is_served(server: tuple[Any, int]) -> None:
    httpd, port = server
    share: ConcurrencyShare = httpd.RequestHandlerClass.share
    held = [share.slot("t1", "flood") for _ in range(share.per_user)]
    for slot in held:  # the flooding user's calls in flight
        assert slot.__enter__() is None
    try:
        status, headers, body = recall(port, "flood")
        assert status == 429 and headers["Retry-After"] == "1" and body["details"]["limit"] == "user"
        assert recall(port, "quiet")[0] == 200
    finally:
        for slot in held:
            slot.__exit__(None, None, None)
    assert recall(port, "flood")[0] == 200
