"""Observability of ``agentmem serve`` (issue 13): every answer is one JSON log line with request
id, trace id, tenant, route template, status and latency — never content, never the path's ids
— and ``GET /metrics`` serves Prometheus metrics: requests and latency per route and status, and
the EMF metrics of the Lambdas mirrored, aggregated over every process of the server (the api
workers' included), with the API's authorization."""

from __future__ import annotations

import http.client
import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentmem.settings import load_settings
from agentmem_dev import observability
from agentmem_dev.emulator.service import LocalService

SCOPE = {"X-Tenant-Id": "t-obs", "X-User-Id": "u-obs", "Content-Type": "application/json"}
SECRET_EN = "My bank PIN is 4417 and I live at 12 Rue Secrète"
SECRET_ZH = "我的银行密码是四四一七，住在青岛市市南区"


def call(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(
            method,
            path,
            body=None if body is None else json.dumps(body, ensure_ascii=False).encode(),
            headers={**SCOPE, **(headers or {})},
        )
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition (0 when absent)."""
    for line in text.splitlines():
        series, _, value = line.rpartition(" ")
        if series == name or series.startswith(name + "{"):
            got = dict(re.findall(r'(\w+)="([^"]*)"', series[len(name) :]))
            if all(got.get(k) == v for k, v in labels.items()):
                return float(value)
    return 0.0


def _projected(port: int, count: int) -> None:
    """Wait until the projector has applied ``count`` changes. In process the functions share
    Powertools' metric set, so a projector invocation still running beside a request may be the
    one that mirrors that request's EMF values (emulator/lambdas.py); waiting keeps them apart."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = call(port, "GET", "/metrics")[2].decode()
        if sample(text, "agentmem_projections_applied_total", function="projector") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"the projector did not apply {count} changes in 30 s")


def _service(tmp_path: Any, workers: int, **settings: Any) -> Iterator[LocalService]:
    running = (
        LocalService(
            load_settings(data_dir=tmp_path / "data", embedder="hash", semantic_guard=False, **settings),
            workers=workers,
        )
        .start()
        .serve_in_background()
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def in_process(tmp_path: Any) -> Iterator[LocalService]:
    yield from _service(tmp_path, 0)


def port(service: LocalService) -> int:
    assert service.server is not None
    return int(service.server.server_address[1])


@pytest.mark.parametrize("secret", [SECRET_EN, SECRET_ZH])
def test_one_json_line_per_request_with_ids_and_no_content(
    in_process: LocalService, caplog: pytest.LogCaptureFixture, secret: str
) -> None:
    trace = "1-5f84c7a1-0123456789abcdef01234567"
    with caplog.at_level(logging.INFO, logger=observability.ACCESS_LOGGER):
        status, headers, raw = call(
            port(in_process),
            "POST",
            "/v1/memories",
            {"content": secret, "tags": ["秘密"]},
            {"X-Amzn-Trace-Id": f"Root={trace};Parent=53995c3f42cd8ad8;Sampled=1"},
        )
        assert status == 201, raw
        memory_id = json.loads(raw)["memory"]["id"]
        status, headers2, _ = call(port(in_process), "GET", f"/v1/memories/{memory_id}?cursor=zzz")
    lines = [
        json.loads(observability.JsonFormatter().format(r))
        for r in caplog.records
        if r.name == observability.ACCESS_LOGGER
    ]
    assert [(line["method"], line["route"], line["status"]) for line in lines] == [
        ("POST", "/v1/memories", 201),
        ("GET", "/v1/memories/{memory_id}", 400),  # cursor is not a parameter of that route
    ]
    first, second = lines
    assert first["request_id"] == headers["x-request-id"] and second["request_id"] == headers2["x-request-id"]
    assert first["trace_id"] == trace
    assert re.fullmatch(r"1-[0-9a-f]{8}-[0-9a-f]{24}", second["trace_id"])  # none sent: one is made
    assert first["tenant"] == "t-obs" and first["latency_ms"] >= 0
    everything = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    for leak in (secret, secret[:8], "秘密", memory_id, "zzz", "u-obs"):
        assert leak not in everything


def test_the_json_formatter_keeps_only_whitelisted_fields_and_no_exception_message() -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "api.error %s", (SECRET_ZH,), None)
    record.__dict__.update(request_id="r-1", body=SECRET_EN, content=SECRET_ZH, status=500)
    try:
        raise ValueError(SECRET_EN)
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    line = json.loads(observability.JsonFormatter().format(record))
    assert line["message"] == "api.error %s" and line["request_id"] == "r-1" and line["status"] == 500
    assert line["exception"] == "ValueError" and line["stack"]
    text = json.dumps(line, ensure_ascii=False)
    assert SECRET_EN not in text and SECRET_ZH not in text and "body" not in line


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {"X-Amzn-Trace-Id": "Root=1-5f84c7a1-0123456789abcdef01234567"},
            "1-5f84c7a1-0123456789abcdef01234567",
        ),
        (
            {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
            "4bf92f3577b34da6a3ce929d0e0e4736",
        ),
        ({"X-Amzn-Trace-Id": "Root=我的密码"}, None),
        ({"traceparent": "00-" + "a" * 200}, None),
        ({}, None),
    ],
)
def test_only_a_well_formed_trace_header_is_taken(headers: dict[str, str], expected: str | None) -> None:
    assert observability.trace_id(headers) == expected


@pytest.mark.parametrize(
    ("emf", "unit", "prometheus"),
    [
        ("Http2xx", "Count", "agentmem_http2xx"),
        ("Degraded_search_index", "Count", "agentmem_degraded_search_index"),
        ("MemoriesWritten", "Count", "agentmem_memories_written"),
        ("Reconcile_pass_completed", "Count", "agentmem_reconcile_pass_completed"),
        ("EmbedTime", "Milliseconds", "agentmem_embed_time_milliseconds"),
    ],
)
def test_emf_names_become_prometheus_names(emf: str, unit: str, prometheus: str) -> None:
    assert observability.metric_name(emf, unit) == prometheus


def test_metrics_count_requests_by_route_and_status_and_mirror_the_emf_metrics(
    in_process: LocalService,
) -> None:
    p = port(in_process)
    for n, content in enumerate(("I like green tea", "我喜欢喝绿茶"), start=1):
        assert call(p, "POST", "/v1/memories", {"content": content})[0] == 201
        _projected(p, n)  # the projector is done: no function runs beside the next request
    assert call(p, "GET", "/v1/memories/01J0000000000000000000000")[0] == 404
    assert call(p, "POST", "/v1/recall", {"query": "茶", "k": 3})[0] == 200
    status, headers, raw = call(p, "GET", "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    text = raw.decode()
    assert (
        sample(text, "agentmem_http_requests_total", method="POST", route="/v1/memories", status="201") == 2
    )
    assert (
        sample(
            text, "agentmem_http_requests_total", method="GET", route="/v1/memories/{memory_id}", status="404"
        )
        == 1
    )
    assert sample(text, "agentmem_http_request_duration_seconds_count", route="/v1/recall", status="200") == 1
    assert sample(text, "agentmem_http_request_duration_seconds_bucket", route="/v1/recall", le="+Inf") == 1
    # the api λ's EMF metrics (functions/api/handler.py), the same numbers CloudWatch gets
    assert sample(text, "agentmem_http2xx_total", function="api") == 3
    assert sample(text, "agentmem_http4xx_total", function="api") == 1
    for line in text.splitlines():  # no ids or content in any label
        assert "01J0000000000000000000000" not in line and "茶" not in line


def test_metrics_need_the_api_token_when_one_is_configured(tmp_path: Any) -> None:
    for running in _service(tmp_path, 0, api_token="s3cret-token"):
        p = port(running)
        assert call(p, "GET", "/metrics")[0] == 401
        assert call(p, "GET", "/metrics", headers={"Authorization": "Bearer wrong"})[0] == 401
        status, _, raw = call(p, "GET", "/metrics", headers={"Authorization": "Bearer s3cret-token"})
        assert status == 200 and b"agentmem_http_requests_total" in raw


def test_metrics_aggregate_the_worker_processes(tmp_path: Any) -> None:
    for running in _service(tmp_path, 1):
        p = port(running)
        status, headers, _ = call(p, "POST", "/v1/memories", {"content": "我住在青岛"})
        assert status == 201 and headers.get("x-agentmem-worker")  # answered by a worker process
        text = call(p, "GET", "/metrics")[2].decode()
        assert sample(text, "agentmem_http2xx_total", function="api") >= 1  # recorded in the worker
        assert sample(text, "agentmem_http_requests_total", route="/v1/memories", status="201") == 1
    assert observability.METRICS_DIR_ENV not in __import__("os").environ  # stop() cleaned up


@pytest.mark.parametrize("tag", ["健康", "santé"])
def test_a_query_typed_in_utf8_without_percent_encoding_filters_as_typed(
    in_process: LocalService, tag: str
) -> None:
    """curl sends ``?tags=健康`` as raw UTF-8 bytes; the server reads them as UTF-8, not Latin-1."""
    import socket

    p = port(in_process)
    assert call(p, "POST", "/v1/memories", {"content": "我对花生过敏", "tags": [tag]})[0] == 201
    with socket.create_connection(("127.0.0.1", p), timeout=30) as sock:
        sock.sendall(
            f"GET /v1/memories?tags={tag} HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: t-obs\r\nX-User-Id: u-obs\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert [m["tags"] for m in json.loads(body)["memories"]] == [[tag]]


def test_a_killed_servers_metrics_directory_is_removed_at_the_next_start(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / "data" / f".metrics-{int(dead.stdout)}"
    stale.mkdir(parents=True)
    (stale / "counter_1.db").write_bytes(b"")
    for _running in _service(tmp_path, 0):
        assert not stale.exists()
        assert os.environ[observability.METRICS_DIR_ENV] == str(tmp_path / "data" / f".metrics-{os.getpid()}")
    assert not list((tmp_path / "data").glob(".metrics-*"))
