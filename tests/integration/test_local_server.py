"""The local HTTP server over real sockets (with the local event sources running in threads), and
its authorizer: loopback-only scope headers, bearer tokens, tokens mapped to a tenant."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmem.bootstrap import Container, bootstrap
from agentmem.settings import Settings, load_settings
from agentmem_dev.emulator.runner import LocalRunner
from agentmem_dev.emulator.server import authorize, make_server


@pytest.fixture
def server(container: Container) -> Iterator[str]:
    runner = LocalRunner(container, poll_interval_s=0.02)
    httpd = make_server("127.0.0.1", 0, container)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    runner.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        runner.stop()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def call(
    base: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    return status, json.loads(raw) if raw else None


SCOPE = {"X-Tenant-Id": "t1", "X-User-Id": "u1", "Content-Type": "application/json"}


def test_a_turn_posted_over_http_shows_up_in_the_context(server: str) -> None:
    turn = {"session_id": "s1", "user": "我叫林晓雨，住在青岛。", "message_id": "http-1"}
    status, body = call(server, "POST", "/v1/turns", json.dumps(turn).encode(), SCOPE)
    assert status == 202 and body["message_ids"] == ["http-1"]
    query = json.dumps({"query": "我住在哪里？"}).encode()
    deadline = time.monotonic() + 5
    context = ""
    while time.monotonic() < deadline:
        status, body = call(server, "POST", "/v1/context", query, SCOPE)
        assert status == 200
        context = body["context"]
        if "青岛" in context and "林晓雨" in context:  # the turn is written while we read
            break
        time.sleep(0.05)
    assert "青岛" in context and "林晓雨" in context
    # another user on the same server sees none of it
    status, body = call(server, "POST", "/v1/context", query, {**SCOPE, "X-User-Id": "u2"})
    assert status == 200 and body["context"] == ""


def test_http_errors_are_clean_json(server: str) -> None:
    status, body = call(server, "POST", "/v1/turns", b'{"session_id": "s1", "user": "\xff\xfe"}', SCOPE)
    assert status == 400 and body["error"] == "invalid_request" and "UTF-8" in body["message"]
    status, body = call(server, "GET", "/v1/memories", headers={})  # no scope headers
    assert status == 401 and body["error"] == "unauthorized"
    status, body = call(server, "GET", "/v1/nowhere", headers=SCOPE)
    assert status == 404 and body["error"] == "not_found"
    status, body = call(server, "POST", "/v1/recall", b"{not json", SCOPE)
    assert status == 400 and body["error"] == "invalid_request"
    status, body = call(server, "GET", "/v1/health", headers=SCOPE)
    assert status == 200 and body["status"] == "ok"


def test_token_server_refuses_requests_without_the_token(container: Container, tmp_path: Path) -> None:
    settings = load_settings(data_dir=container.settings.data_dir, embedder="hash", api_token="s3cret-token")
    httpd = make_server("127.0.0.1", 0, bootstrap(settings, container.adapters, container.clock))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        assert call(base, "GET", "/v1/memories", headers=SCOPE)[0] == 401
        assert call(base, "GET", "/v1/memories", headers={**SCOPE, "Authorization": "Bearer nope"})[0] == 401
        status, body = call(
            base, "GET", "/v1/memories", headers={**SCOPE, "Authorization": "Bearer s3cret-token"}
        )
        assert status == 200 and body["memories"] == []
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# ---------------------------------------------------------------------------- authorize()


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path, embedder="hash", **overrides)


HEADERS = {"X-Tenant-Id": "t1", "X-User-Id": "u1"}


@pytest.mark.parametrize("ip", ["127.0.0.1", "127.0.0.53", "::1"])
def test_loopback_without_a_token_uses_the_scope_headers(tmp_path: Path, ip: str) -> None:
    context, refusal = authorize(HEADERS, ip, settings(tmp_path))
    assert refusal is None and context is not None
    assert (context["tenant_id"], context["user_id"]) == ("t1", "u1")
    assert "memory:write" in context["permissions"]


@pytest.mark.parametrize("ip", ["10.0.0.5", "192.168.1.20", "2001:db8::1", "not-an-ip", ""])
def test_non_loopback_without_a_configured_token_is_refused(tmp_path: Path, ip: str) -> None:
    context, refusal = authorize(HEADERS, ip, settings(tmp_path))
    assert context is None
    assert refusal and "loopback" in refusal


def test_missing_scope_headers_give_a_context_the_api_refuses(tmp_path: Path) -> None:
    context, refusal = authorize({}, "127.0.0.1", settings(tmp_path))
    assert refusal is None and context is not None
    assert "tenant_id" not in context and "user_id" not in context


@pytest.mark.parametrize("ip", ["127.0.0.1", "10.0.0.5"])
@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Bearer wrong", "Basic s3cret", "s3cret", "Bearer s3cret-but-longer"],
)
def test_with_a_token_a_missing_or_wrong_token_is_refused(
    tmp_path: Path, ip: str, authorization: str | None
) -> None:
    headers = dict(HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    context, refusal = authorize(headers, ip, settings(tmp_path, api_token="s3cret"))
    assert context is None
    assert refusal and "token" in refusal


@pytest.mark.parametrize("ip", ["127.0.0.1", "10.0.0.5"])
def test_with_the_right_token_any_client_is_accepted(tmp_path: Path, ip: str) -> None:
    context, refusal = authorize(
        {**HEADERS, "authorization": "Bearer s3cret"}, ip, settings(tmp_path, api_token="s3cret")
    )
    assert refusal is None and context is not None
    assert (context["tenant_id"], context["user_id"]) == ("t1", "u1")


def test_a_token_mapped_to_a_tenant_decides_the_tenant(tmp_path: Path) -> None:
    conf = settings(tmp_path, api_token="s3cret", token_tenants={"s3cret": "acme"})
    auth = {"Authorization": "Bearer s3cret", "X-User-Id": "u1"}
    context, refusal = authorize(auth, "10.0.0.5", conf)
    assert refusal is None and context is not None and context["tenant_id"] == "acme"
    context, refusal = authorize({**auth, "X-Tenant-Id": "acme"}, "10.0.0.5", conf)
    assert refusal is None and context is not None and context["tenant_id"] == "acme"
    context, refusal = authorize({**auth, "X-Tenant-Id": "globex"}, "10.0.0.5", conf)
    assert context is None and refusal and "tenant" in refusal


def test_concurrent_requests_never_see_each_others_scope(server: str, container: Container) -> None:
    """Powertools keeps the current event on the resolver: concurrent requests must not read each
    other's authorizer. Two tenants hammer the server at once; each only ever sees its own data."""
    from agentmem.domain.models import Scope

    for tenant in ("ta", "tb"):
        container.explicit.write(
            Scope(tenant, "u"),
            f"I am a member of team {tenant}",
            now=container.clock.now(),
            request_id=f"r-{tenant}",
        )
    failures: list[str] = []

    def client(tenant: str) -> None:
        headers = {"X-Tenant-Id": tenant, "X-User-Id": "u", "Content-Type": "application/json"}
        for _ in range(15):
            status, payload = call(server, "GET", "/v1/memories", headers=headers)
            while status == 429:  # beyond the user's share of requests in flight: retry
                time.sleep(0.01)
                status, payload = call(server, "GET", "/v1/memories", headers=headers)
            contents = [m["content"] for m in (payload or {}).get("memories", [])]
            if status != 200 or contents != [f"I am a member of team {tenant}"]:
                failures.append(f"{tenant}: {status} {contents}")

    threads = [threading.Thread(target=client, args=(t,)) for t in ("ta", "tb") * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
