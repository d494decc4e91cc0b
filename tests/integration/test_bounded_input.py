"""Bounded input (issue 9): every route of the OpenAPI document, sent every hostile shape —
nesting 1,000 deep, 5,000-digit integers, huge floats, NaN / Infinity, non-object bodies, wrong
content types, over-long strings, unknown query parameters, a session state of the wrong shape —
answers a 4xx with the project's error schema, never a 5xx. The local server cuts off clients
that trickle their headers or never send their body, and refuses an over-size body unread."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentmem.api.app import openapi_json
from agentmem.api.request import MAX_JSON_DEPTH, BodyRefused, check_json_body
from agentmem.bootstrap import Container
from agentmem.messages import MAX_BODY_BYTES
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.server import make_server

DEEP = "[" * 1000 + "]" * 1000
BIG = "9" * 5000
BODIES: list[tuple[str, str]] = [
    ("deep array", DEEP),
    ("deep object", '{"a":' * 1000 + "1" + "}" * 1000),
    ("deep inside a field", '{"query":"x","k":' + DEEP + "}"),
    ("5000-digit k", '{"query":"x","k":' + BIG + "}"),
    ("5000-digit limit", '{"limit":' + BIG + "}"),
    ("5000-digit ttl_hours", '{"ttl_hours":' + BIG + "}"),
    ("5000-digit expected_version", '{"expected_version":' + BIG + "}"),
    ("negative 5000 digits", '{"k":-' + BIG + "}"),
    ("huge float", '{"query":"x","k":1e999,"ttl_hours":1e999,"importance":1e999}'),
    ("long fraction", '{"importance":0.' + BIG + "}"),
    ("NaN", '{"query":"x","k":NaN,"importance":NaN,"ttl_hours":NaN}'),
    ("Infinity", '{"ttl_hours":Infinity,"importance":-Infinity}'),
    ("null", "null"),
    ("array", "[1,2,3]"),
    ("string", '"hello"'),
    ("number", "42"),
    ("not json", "{not json"),
    ("control bytes", "\x00\x01\x02"),
    ("lone surrogate", '{"query":"\\ud800","content":"\\udfff","session_id":"s1","user":"\\ud800"}'),
    ("over-long strings", json.dumps({"query": "x" * 300_000})),
    (
        "wrong shapes",
        json.dumps({"plan": [1], "task_memory": {"a": 1}, "tool_state": "x", "turns": {"a": 1}}),
    ),
    (
        "state of the wrong shape",
        json.dumps({"plan": {"goal": {"x": 1}, "steps": "a"}, "tool_state": {"t": [[[]]]}}),
    ),
    (
        "wrong types everywhere",
        json.dumps({"query": 1, "k": "5", "content": ["x"], "user": None, "at": 10**30}),
    ),
]


def routes() -> list[tuple[str, str]]:
    document = json.loads(openapi_json())
    found = []
    for path, operations in document["paths"].items():
        concrete = path.replace("{memory_id}", "01KE6P4YM0AGDWN18MDS7D5GTR").replace("{session_id}", "s1")
        concrete = concrete.replace("{user_id}", "u1")
        found += [(method.upper(), concrete) for method in operations]
    return found


ROUTES = routes()


def call(container: Container, method: str, path: str, body: str | None, **extra: Any) -> dict[str, Any]:
    event = events.api_gateway_event(
        method,
        path,
        body=body,
        authorizer={"tenant_id": "t-bad", "user_id": "u1", "permissions": "memory:read,memory:write"},
        query=extra.get("query", {}),
        headers=extra.get("headers", {"Content-Type": "application/json"}),
    )
    result: dict[str, Any] = lambdas.invoke("api", event, container)
    return result


def assert_clean_4xx(result: dict[str, Any]) -> None:
    assert 400 <= result["statusCode"] < 500, result
    body = json.loads(result["body"])
    # the project's error schema (MCP answers its own: a JSON-RPC error object)
    assert "error" in body and ("message" in body or "jsonrpc" in body) and "Traceback" not in result["body"]


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_answers_every_hostile_body_with_a_4xx(
    container: Container, method: str, path: str
) -> None:
    for _, body in BODIES:
        result = call(container, method, path, body)
        assert result["statusCode"] < 500, (body[:60], result)
        if result["statusCode"] >= 400:
            assert_clean_4xx(result)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"):
        result = call(container, method, path, '{"query":"x"}', headers={"Content-Type": content_type})
        assert result["statusCode"] < 500
    result = call(container, method, path, None, query={"nope": ["1"], "limit": [BIG]})
    assert_clean_4xx(result)
    assert "nope" in json.loads(result["body"])["message"] or result["statusCode"] in (404, 405)


def test_the_gate_itself() -> None:
    check_json_body('{"a":' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH)  # deep enough is fine
    check_json_body('{"text":"' + "[" * 5000 + '"}')  # brackets inside strings do not count
    check_json_body('{"k": 12345678901234567890}')
    check_json_body("{not json")  # left to the route's own 400
    for bad in (DEEP, '{"k":' + BIG + "}", '{"k":NaN}', '{"k":1e400}', '{"k":-Infinity}'):
        with pytest.raises(BodyRefused):
            check_json_body(bad)


# ---------------------------------------------------------------------------- the local server


@pytest.fixture
def server(container: Container) -> Iterator[tuple[str, int]]:
    httpd = make_server("127.0.0.1", 0, container, header_timeout_s=0.5, body_timeout_s=0.5)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield "127.0.0.1", int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed the connection within ``seconds``, and what it sent."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        return False, data
    except OSError:
        return True, data
    return True, data


def test_a_client_trickling_its_headers_is_cut_off(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        start = time.monotonic()
        sock.sendall(b"GET /v1/health HTTP/1.1\r\n")
        for _ in range(6):  # one header byte every 0.2 s: never idle long, never finished
            time.sleep(0.2)
            try:
                sock.sendall(b"X")
            except OSError:
                break
        closed, _ = closed_within(sock, 3)
        assert closed and time.monotonic() - start < 3


def test_a_client_that_never_sends_its_body_gets_408(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        sock.sendall(
            b"POST /v1/recall HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: t1\r\nX-User-Id: u1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        closed, data = closed_within(sock, 3)
        assert closed and data.startswith(b"HTTP/1.1 408")


def test_an_over_size_body_is_refused_from_its_length_unread(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        sock.sendall(
            b"POST /v1/turns HTTP/1.1\r\nHost: x\r\nContent-Length: "
            + str(MAX_BODY_BYTES * 100).encode()
            + b"\r\n\r\n"
        )
        closed, data = closed_within(sock, 3)
        assert closed and data.startswith(b"HTTP/1.1 413")
    for header in (b"Content-Length: " + b"9" * 5000, b"Content-Length: -5", b"Transfer-Encoding: chunked"):
        with socket.create_connection(server) as sock:
            sock.sendall(b"POST /v1/turns HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n\r\n")
            closed, data = closed_within(sock, 3)
            assert closed and data.split(b" ")[1] in (b"400", b"411"), data[:80]


def test_an_http_0_9_request_is_answered_400_and_closed(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        sock.sendall(b"GET /v1/health\r\n\r\n")  # no version: HTTP/0.9
        closed, data = closed_within(sock, 3)
        assert closed and data.startswith(b"HTTP/1.1 400"), data[:80]
        assert b"HTTP/0.9 is not supported" in data


@pytest.mark.parametrize("method", [b"HEAD", b"OPTIONS", b"TRACE", b"FROB"])
def test_a_method_the_api_does_not_serve_is_405_not_501(server: tuple[str, int], method: bytes) -> None:
    with socket.create_connection(server) as sock:
        sock.sendall(method + b" /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        closed, data = closed_within(sock, 3)
        assert closed and data.startswith(b"HTTP/1.1 405"), data[:80]
        assert b"Allow: GET, POST, PUT, PATCH, DELETE" in data
