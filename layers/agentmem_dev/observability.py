"""Observability of ``agentmem serve`` (docs/observability.md): one JSON log line per request and
a Prometheus ``/metrics`` endpoint. Dev tooling only: prometheus-client never enters the Lambda
layer; in AWS the same numbers are CloudWatch EMF metrics and API Gateway access logs.

* **Logs.** :class:`JsonFormatter` writes one JSON object per record: time, level, logger,
  message, and only the whitelisted fields of :data:`LOG_FIELDS` (request id, trace id, tenant,
  route template, method, status, latency...) — never a body, a query string, a path with its ids,
  or an exception message (a failure logs its type and stack frames). The request line is
  ``local.request`` on the ``agentmem_dev.access`` logger.
* **Metrics.** Every process of the server (the front, each api worker, the event-sources
  process) records into prometheus-client's multiprocess files in one directory per server
  (:func:`start`), and ``/metrics`` aggregates them (:func:`exposition`). The EMF metrics the
  Lambdas add (``metrics.add_metric`` in ``functions/*/handler.py`` and the routes) are mirrored
  by :func:`record_emf`, called by :func:`agentmem_dev.emulator.lambdas.invoke` after each
  invocation: ``Http2xx`` of the api λ becomes ``agentmem_http2xx_total{function="api"}``,
  ``Turns_processed`` of ingest ``agentmem_turns_processed_total{function="ingest"}`` (a unit
  other than Count is kept in the name: ``agentmem_<name>_<unit>_total``). The front adds
  ``agentmem_http_requests_total`` and the ``agentmem_http_request_duration_seconds`` histogram,
  both by method, route template and status.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's own variable, inherited by children
LOG_FORMAT_ENV = "AGENTMEM_LOG_FORMAT"  # json (default) | text
ACCESS_LOGGER = "agentmem_dev.access"
# The only extra fields a log line carries: identifiers, names and numbers, never user text.
LOG_FIELDS = (
    "request_id",
    "trace_id",
    "tenant",
    "route",
    "method",
    "status",
    "latency_ms",
    "worker",
    "function",
    "error",
    "code",
    "client",
)
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_NAME = re.compile(r"[^a-zA-Z0-9_]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class JsonFormatter(logging.Formatter):
    """One JSON object per record with the :data:`LOG_FIELDS` it carries (see module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.msg if isinstance(record.msg, str) else type(record.msg).__name__,
        }
        for name in LOG_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                out[name] = value
        if record.exc_info and record.exc_info[0] is not None:
            exc_type, _, tb = record.exc_info
            out["exception"] = exc_type.__name__  # the type, not its message (it may quote input)
            out["stack"] = [f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_tb(tb)]
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(level: int = logging.INFO) -> None:
    """JSON lines on stderr for this process (``AGENTMEM_LOG_FORMAT=text`` keeps plain text): the
    root handlers get :class:`JsonFormatter`, and the access logger logs at ``level``."""
    json_lines = os.environ.get(LOG_FORMAT_ENV, "json").strip().lower() != "text"
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    if json_lines:
        for handler in root.handlers:
            handler.setFormatter(JsonFormatter())
    logging.getLogger(ACCESS_LOGGER).setLevel(level)


# ---------------------------------------------------------------------------- metrics

_lock = threading.Lock()
_state: dict[str, Any] = {}  # "dir", "counters", "http" for this process's recording


def metric_name(name: str, unit: str = "Count") -> str:
    """``Http2xx`` -> ``agentmem_http2xx_total``; ``Degraded_search_index`` ->
    ``agentmem_degraded_search_index_total``; a unit other than Count is kept in the name."""
    base = _NAME.sub("_", _CAMEL.sub("_", name)).lower().strip("_")
    suffix = "" if unit in ("Count", "") else "_" + _NAME.sub("_", _CAMEL.sub("_", unit)).lower()
    return f"agentmem_{base}{suffix}"


def start(parent: Path) -> str:
    """Start recording for one server: a fresh multiprocess directory ``<parent>/.metrics-<pid>``
    (the data directory), exported to the children this process spawns next (they inherit the
    environment). Directories of servers that are gone (killed: no stop ran) are removed."""
    parent.mkdir(parents=True, exist_ok=True)
    for stale in parent.glob(".metrics-*"):
        pid = stale.name.removeprefix(".metrics-")
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    directory = str(parent / f".metrics-{os.getpid()}")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    os.environ[METRICS_DIR_ENV] = directory
    with _lock:
        _state.clear()
    return directory


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def stop(directory: str) -> None:
    """Stop recording into ``directory`` (when it is still this process's) and delete it."""
    if os.environ.get(METRICS_DIR_ENV) == directory:
        del os.environ[METRICS_DIR_ENV]
    with _lock:
        if _state.get("dir") == directory:
            _state.clear()
    shutil.rmtree(directory, ignore_errors=True)


def _recording() -> dict[str, Any] | None:
    """This process's metric objects for the current directory (None when nothing records:
    outside ``agentmem serve``, or without prometheus-client)."""
    directory = os.environ.get(METRICS_DIR_ENV)
    if not directory or not os.path.isdir(directory):
        return None
    if _state.get("dir") == directory:
        return _state
    if _state.get("missing"):
        return None
    try:
        from prometheus_client import Counter, Histogram, values
    except ImportError:  # the dev extra is not installed: serve without metrics
        # Remembered: a failed import is not cached by Python, and searching sys.path again on
        # every request cost ~1 ms of each answer (the peer benchmark's venv has no dev extra).
        _state["missing"] = True
        return None
    with _lock:
        if _state.get("dir") != directory:
            # Files of this directory from here on (the value class caches its files per process).
            values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
            labels = ("method", "route", "status")
            _state.clear()
            _state.update(
                dir=directory,
                counters={},
                requests=Counter("agentmem_http_requests", "HTTP requests answered", labels, registry=None),
                latency=Histogram(
                    "agentmem_http_request_duration_seconds",
                    "Time to answer an HTTP request",
                    labels,
                    buckets=LATENCY_BUCKETS_S,
                    registry=None,
                ),
            )
    return _state


def request_done(
    method: str,
    path: str,
    status: int,
    seconds: float,
    *,
    request_id: str,
    trace_id: str,
    tenant: str | None,
    worker: int | None,
) -> None:
    """The end of one request: the ``local.request`` line and the request metrics, both naming
    the route template (:func:`route_of`), never the path with its ids."""
    route = route_of(method, path)
    record_request(method, route, status, seconds)
    logging.getLogger(ACCESS_LOGGER).info(
        "local.request",
        extra={
            "request_id": request_id,
            "trace_id": trace_id,
            "tenant": tenant,
            "method": method,
            "route": route,
            "status": status,
            "latency_ms": round(seconds * 1000, 2),
            "worker": worker,
        },
    )


def record_request(method: str, route: str, status: int, seconds: float) -> None:
    state = _recording()
    if state is None:
        return
    state["requests"].labels(method, route, str(status)).inc()
    state["latency"].labels(method, route, str(status)).observe(max(seconds, 0.0))


def record_emf(function: str, metric_set: Mapping[str, Mapping[str, Any]]) -> None:
    """Mirror one invocation's EMF metric set (Powertools' ``Metrics.metric_set``: name ->
    ``{"Unit", "Value": [...]}``) into counters labelled by ``function``."""
    state = _recording()
    if state is None or not metric_set:
        return
    from prometheus_client import Counter

    counters: dict[str, Any] = state["counters"]
    for name, entry in list(metric_set.items()):
        total = sum(float(v) for v in entry.get("Value", ()) if isinstance(v, int | float))
        prom = metric_name(str(name), str(entry.get("Unit", "Count")))
        counter = counters.get(prom)
        if counter is None:
            with _lock:
                counter = counters.setdefault(
                    prom,
                    Counter(prom, f"EMF metric {name} of the Lambdas", ("function",), registry=None),
                )
        counter.labels(function).inc(max(total, 0.0))


def record_restart(part: str) -> None:
    """A supervised process of the server (``part``: ``api`` or ``events``) was started again
    after it exited: ``agentmem_local_restarts_total{part}``."""
    state = _recording()
    if state is None:
        return
    from prometheus_client import Counter

    counters: dict[str, Any] = state["counters"]
    counter = counters.get("agentmem_local_restarts")
    if counter is None:
        with _lock:
            counter = counters.setdefault(
                "agentmem_local_restarts",
                Counter(
                    "agentmem_local_restarts",
                    "Server processes started again after they exited",
                    ("part",),
                    registry=None,
                ),
            )
    counter.labels(part).inc()


def exposition() -> tuple[bytes, str]:
    """The Prometheus text exposition of every process of this server, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    directory = os.environ.get(METRICS_DIR_ENV)
    registry = CollectorRegistry()
    if directory and os.path.isdir(directory):
        MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return generate_latest(registry), CONTENT_TYPE_LATEST


# ---------------------------------------------------------------------------- requests


def route_of(method: str, path: str) -> str:
    """The route template a request matches (``/v1/memories/{memory_id}``), ``/metrics``, or
    ``unmatched``: what logs and metrics name, never the path with its ids."""
    from agentmem.api.app import declared_query_parameters

    if path == "/metrics":
        return path
    segments = path.rstrip("/").split("/")
    for route_method, template in declared_query_parameters():
        parts = template.rstrip("/").split("/")
        if (
            route_method == method.upper()
            and len(parts) == len(segments)
            and all(p == s or (p.startswith("{") and s) for p, s in zip(parts, segments, strict=True))
        ):
            return template
    return "unmatched"


def trace_id(headers: Mapping[str, str]) -> str | None:
    """The caller's trace id: ``X-Amzn-Trace-Id`` (its ``Root=``) or W3C ``traceparent`` (its
    trace-id), only when well-formed (it is logged: never an arbitrary header value)."""
    lower = {k.lower(): v for k, v in headers.items()}
    amzn = lower.get("x-amzn-trace-id", "")
    match = re.search(r"Root=(1-[0-9a-f]{8}-[0-9a-f]{24})", amzn)
    if match:
        return match.group(1)
    match = re.fullmatch(
        r"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}", lower.get("traceparent", "").strip()
    )
    return match.group(1) if match else None


def new_trace_id() -> str:
    """A new X-Ray style trace id ``1-<epoch seconds, 8 hex>-<24 random hex>``."""
    return f"1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]}"
