"""Local HTTP server: each request becomes an API Gateway proxy event for ``functions/api``.

Two ways to run it. :func:`make_server` invokes the api λ in this process, one invocation at a
time (one execution environment, :mod:`agentmem_dev.emulator.lambdas`): the tests and the
in-process mode (``agentmem serve --workers 0``). :func:`make_front` hands each event to a
:class:`~agentmem_dev.emulator.workers.WorkerPool` of worker processes, one environment each, so
requests run in parallel with no process-wide lock; the worker's answer comes back over a pipe,
and a worker that dies or hangs is answered for (502 / 504; 503 when none frees up), never waited
on forever. Each response from a worker names it in ``X-Agentmem-Worker`` (its pid).

It plays API Gateway's authorizer too: scope headers (``X-Tenant-Id``, ``X-User-Id``) are
accepted only from loopback clients unless a bearer token is configured; with a token, the token
is required from everyone and, when mapped, decides the tenant. Loopback and token callers get
``memory:read``, ``memory:write`` and ``memory:permanent``; only the operator token
(``AGENTMEM_OPERATOR_TOKEN``) adds ``memory:policy``, the permission to write the instructions of the
Constraints slot (:mod:`agentmem.domain.authority`). ``GET /ui`` (the inspector's static files) is
passed through without a scope; the page's own ``/v1`` calls are authorized like any other.

And a usage plan: a per-user and per-tenant share of the requests in flight
(:class:`~agentmem_dev.emulator.fairness.ConcurrencyShare`, 429 with ``Retry-After`` beyond it),
kept here in the front because it is global. With worker processes a user's share is at most
``workers - 1``, so one user never holds every worker.

Bounded input: the request line and headers must arrive within ``header_timeout_s`` (a timer
shuts the socket when a client trickles them; it is also the keep-alive idle limit), the body
within ``body_timeout_s`` (read against a deadline, not per packet), and a body larger than
:data:`~agentmem.messages.MAX_BODY_BYTES` is refused from its ``Content-Length`` before a byte of
it is read (a body without a length, ``Transfer-Encoding: chunked``, gets 411). The limits default
to the settings ``http_header_timeout_s`` / ``http_body_timeout_s``.

Observability (:mod:`agentmem_dev.observability`, docs/observability.md): every answer carries
``X-Request-Id`` and is logged as one JSON line (request id, trace id, tenant, route template,
status, latency; never content), and counted per route and status; ``GET /metrics`` serves the
Prometheus metrics of every process of the server, with the same authorization as the API (the
bearer token when one is configured, else loopback clients only).

Over 400 lines: this is API Gateway's whole part on a laptop (bounded input, the authorizer, the
usage plan, the access log), one request handler whose steps share the request's state.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentmem.api.routes.ui import is_ui_path
from agentmem.bootstrap import Container
from agentmem.domain.authority import POLICY_PERMISSION
from agentmem.messages import MAX_BODY_BYTES
from agentmem.settings import Settings
from agentmem_dev import observability
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.deadlines import Deadlines
from agentmem_dev.emulator.fairness import ConcurrencyShare
from agentmem_dev.emulator.workers import WorkerFailed, WorkerPool

log = logging.getLogger(__name__)
ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE"
WORKER_HEADER = "X-Agentmem-Worker"
_HEADER_DEADLINES = Deadlines()  # one watcher thread for every connection's header deadline

# An API Gateway event in, the handler's result and the pid of the worker that ran it (None in
# this process) out; raises WorkerFailed when no worker could answer.
InvokeApi = Callable[[dict[str, Any]], tuple[Any, int | None]]
# Why a part of the server is down now (an event source, an api worker); empty when all run.
ServerFaults = Callable[[], list[str]]
HEALTH_PATH = "/v1/health"


class InFlight:
    """The connections the front is serving now (from accept to close: a request that arrived on
    one is never cut), and whether it is draining (SIGTERM): a draining front answers what it is
    sent with ``Connection: close`` and :meth:`wait_idle` tells the service when the last
    connection has closed (an idle keep-alive one closes within ``http_header_timeout_s``)."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = threading.Condition()
        self.draining = False

    def __enter__(self) -> InFlight:
        with self._idle:
            self._count += 1
        return self

    def __exit__(self, *_: object) -> None:
        with self._idle:
            self._count -= 1
            if self._count == 0:
                self._idle.notify_all()

    @property
    def count(self) -> int:
        with self._idle:
            return self._count

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no request is in flight (True) or ``timeout_s`` passed (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout=timeout_s)


def with_faults(body: str, faults: list[str]) -> str:
    """The api λ's health answer with the server's own faults added: ``degraded`` and the reasons
    (the λ knows its stores and backlogs; only the server knows which of its processes run)."""
    if not faults:
        return body
    try:
        health = json.loads(body)
    except ValueError:
        return body
    if not isinstance(health, dict):
        return body
    health["status"] = "degraded"
    health["reasons"] = [*faults, *(health.get("reasons") or [])]
    return json.dumps(health, ensure_ascii=False, separators=(",", ":"))


def authorize(
    headers: dict[str, str], client_ip: str, settings: Settings
) -> tuple[dict[str, Any] | None, str | None]:
    """Return (authorizer context, refusal reason). Context lacks tenant/user when the headers
    are missing: the API refuses such requests itself."""
    lower = {k.lower(): v for k, v in headers.items()}
    token = settings.api_token
    tenant = lower.get("x-tenant-id")
    user = lower.get("x-user-id")
    permissions = "memory:read,memory:write"
    scheme, _, given = lower.get("authorization", "").partition(" ")
    operator = settings.operator_token
    if (
        operator
        and scheme.lower() == "bearer"
        and hmac.compare_digest(given.strip().encode(), operator.encode())
    ):
        # An operator writes the Constraints (policy memories) for whichever scope it names.
        permissions += ",memory:permanent,webhooks:manage," + POLICY_PERMISSION
    elif token:
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return None, "a valid bearer token is required"
        mapped = settings.token_tenants.get(token)
        if mapped is not None:
            if tenant is not None and tenant != mapped:
                return None, "the token is not valid for that tenant"
            tenant = mapped
        permissions += ",memory:permanent"
    else:
        try:
            loopback = ipaddress.ip_address(client_ip).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            return None, "scope headers are accepted from loopback only; configure AGENTMEM_API_TOKEN"
        permissions += ",memory:permanent"
    context: dict[str, Any] = {"permissions": permissions, "principal_id": f"local:{user or 'anonymous'}"}
    if tenant:
        context["tenant_id"] = tenant
    if user:
        context["user_id"] = user
    return context, None


class _Handler(BaseHTTPRequestHandler):
    server_version = "agentmem-local"
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small JSON responses: don't wait for the delayed ACK (~40 ms)
    settings: Settings
    invoke_api: InvokeApi
    header_timeout_s: float = 5.0
    body_timeout_s: float = 10.0
    max_body_bytes: int = MAX_BODY_BYTES
    share: ConcurrencyShare
    faults: ServerFaults
    inflight: InFlight
    _request_id = _trace_id = ""  # per request (_begin): X-Request-Id = the event's requestId
    _status, _tenant, _worker, _started = 0, None, None, 0.0

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.header_timeout_s)  # per read: a silent client times out

    def _cut(self) -> None:
        """The client did not finish its headers in time: shut the socket (the blocked read ends)."""
        log.info("local.header_timeout", extra={"client": self.client_address[0]})
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def handle_one_request(self) -> None:
        # A deadline for the whole request line + headers, not per byte (a trickle never ends).
        _HEADER_DEADLINES.arm(id(self), self.header_timeout_s, self._cut)
        try:
            super().handle_one_request()
        finally:
            _HEADER_DEADLINES.disarm(id(self))

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        with contextlib.suppress(UnicodeError, AttributeError):  # raw UTF-8 in the target (as curl sends it)
            self.path = self.path.encode("latin-1").decode("utf-8")
        _HEADER_DEADLINES.disarm(id(self))  # headers are in: the body has its own deadline
        if parsed and self.request_version == "HTTP/0.9":  # no headers to carry a scope or a length
            self.request_version = self.protocol_version  # the refusal gets a status line
            self.close_connection = True
            self._begin()
            self._error(400, "invalid_request", "HTTP/0.9 is not supported: send HTTP/1.0 or HTTP/1.1")
            return False
        return parsed

    def _read_body(self, length: int) -> bytes | None:
        """Read ``length`` bytes within ``body_timeout_s``; None when the client is too slow."""
        deadline = time.monotonic() + self.body_timeout_s
        chunks: list[bytes] = []
        left = length
        while left > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.connection.settimeout(remaining)
            try:
                chunk = self.rfile.read1(min(left, 65536))
            except (TimeoutError, OSError):
                return None
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        self.connection.settimeout(self.header_timeout_s)
        return b"".join(chunks)

    def log_message(self, format: str, *args: Any) -> None:  # quieter than stderr per request
        log.debug("http %s", format % args)

    def _send(self, status: int, body: str | bytes, headers: dict[str, str] | None = None) -> None:
        payload = body.encode("utf-8") if isinstance(body, str) else body
        self._status = status
        self.send_response(status)
        self.send_header("X-Request-Id", self._request_id)
        sent = {k.lower() for k in (headers or {})}
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "content-type" not in sent:
            self.send_header("Content-Type", "application/json")
        if self.inflight.draining:  # the client must open its next request elsewhere (or later)
            self.close_connection = True
            self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(payload)))
        self._done()  # before the answer leaves: a client that has it finds it logged and counted
        # Headers and body in one write (end_headers + write would be two sends, and the client
        # would wake up for the headers alone before the body comes).
        self._headers_buffer.append(b"\r\n" + payload)  # type: ignore[attr-defined]
        self.flush_headers()

    def _error(self, status: int, code: str, message: str) -> None:
        self._send(status, json.dumps({"error": code, "message": message}))

    def _handle(self) -> None:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return self._error(411, "length_required", "send the body with a Content-Length")
        length_header = (self.headers.get("Content-Length") or "0").strip()
        if not length_header.isdigit() or len(length_header) > 12:
            self.close_connection = True
            return self._error(400, "invalid_request", "Content-Length is not a number")
        length = int(length_header)
        if length > self.max_body_bytes:
            self.close_connection = True
            return self._error(413, "payload_too_large", f"body exceeds {self.max_body_bytes} bytes")
        raw = self._read_body(length) if length else b""
        if raw is None:
            self.close_connection = True
            return self._error(
                408, "request_timeout", f"the body did not arrive within {self.body_timeout_s} s"
            )
        try:
            body = raw.decode("utf-8") if raw else None
        except UnicodeDecodeError:
            return self._error(400, "invalid_request", "the body is not valid UTF-8")
        headers = {k: v for k, v in self.headers.items()}
        authorizer: dict[str, Any] | None = {}  # the inspector's static files: its /v1 calls are authorized
        refusal: str | None = None
        if self.command != "GET" or not is_ui_path(urlsplit(self.path).path):
            authorizer, refusal = authorize(headers, self.client_address[0], self.settings)
        if refusal:
            return self._error(401 if "token" in refusal else 403, "unauthorized", refusal)
        if authorizer is None:  # authorize() answers a context or a refusal
            return self._error(403, "unauthorized", "no authorizer context")
        self._tenant = authorizer.get("tenant_id")
        if urlsplit(self.path).path == "/metrics" and self.command == "GET":
            text, content_type = observability.exposition()
            return self._send(200, text, {"Content-Type": content_type})
        with self.share.slot(authorizer.get("tenant_id"), authorizer.get("user_id")) as full:
            if full is None:
                reply = self._invoke(headers, body, authorizer)
        # The slot is released before the answer is written: a client that sends its next
        # request as soon as it reads this one must find its share free again.
        if full is not None:
            return self._send(
                429,
                json.dumps(
                    {
                        "error": "too_many_requests",
                        "message": f"too many requests in flight for this {full}; retry shortly",
                        "details": {"limit": full},
                    }
                ),
                {"Retry-After": "1"},
            )
        return self._send(*reply)

    def _invoke(
        self, headers: dict[str, str], body: str | None, authorizer: dict[str, Any]
    ) -> tuple[int, str, dict[str, str] | None]:
        """Hand the event to the api λ; the answer to send: status, body, headers."""
        split = urlsplit(self.path)
        event = events.api_gateway_event(
            self.command,
            split.path,
            query=parse_qs(split.query, keep_blank_values=True),
            headers=headers,
            body=body,
            authorizer=authorizer,
            source_ip=self.client_address[0],
        )
        event["requestContext"]["requestId"] = self._request_id
        event["headers"] = {**(event["headers"] or {}), "X-Amzn-Trace-Id": f"Root={self._trace_id}"}
        try:
            result, worker = self.invoke_api(event)
            self._worker = worker
        except WorkerFailed as exc:
            log.warning("local.worker_failed", extra={"code": exc.code})
            retry = {"Retry-After": exc.retry_after} if exc.retry_after else None
            return exc.status, json.dumps({"error": exc.code, "message": str(exc)}), retry
        if not isinstance(result, dict):  # the worker's handler raised (it logged the reason)
            return (
                500,
                json.dumps({"error": "internal_error", "message": "unexpected error; it has been logged"}),
                None,
            )
        response_headers = dict(result.get("headers") or {})
        if worker is not None:
            response_headers[WORKER_HEADER] = str(worker)
        for key, values in (result.get("multiValueHeaders") or {}).items():
            response_headers[key] = ",".join(values)
        status, answer = int(result.get("statusCode", 500)), result.get("body") or ""
        if status == 200 and self.command == "GET" and split.path == HEALTH_PATH:
            answer = with_faults(answer, self.faults())
        return status, answer, response_headers

    def _safe(self) -> None:
        self._begin()
        try:
            self._handle()
        except Exception:  # the boundary: a failure is logged, the client gets a clean 500
            log.exception("local.server_error", extra={"request_id": self._request_id})
            with contextlib.suppress(OSError):
                self._error(500, "internal_error", "unexpected error; it has been logged")

    def _begin(self) -> None:
        self._started = time.perf_counter()
        self._request_id = str(uuid.uuid4())
        self._trace_id = observability.trace_id(dict(self.headers.items())) or observability.new_trace_id()
        self._status, self._tenant, self._worker = 0, None, None

    def _done(self) -> None:
        """One JSON line and the request metrics per answer (route template, never the path)."""
        if not self._status or self._started < 0:  # no answer, or this one is already logged
            return
        self._started, started = -1.0, self._started
        observability.request_done(
            self.command,
            urlsplit(self.path).path,
            self._status,
            time.perf_counter() - started,
            request_id=self._request_id,
            trace_id=self._trace_id,
            tenant=self._tenant,
            worker=self._worker,
        )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _safe

    def _not_allowed(self) -> None:
        """HEAD, OPTIONS and any other method: 405 naming the methods the API serves (a 4xx,
        like API Gateway, never the standard library's 501)."""
        self._begin()
        self.close_connection = True
        self._status = 405
        self.send_response(405)
        self.send_header("X-Request-Id", self._request_id)
        self.send_header("Allow", ALLOWED_METHODS)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self._done()
        self.end_headers()

    do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 501:  # a method no do_* serves
            return self._not_allowed()
        return super().send_error(code, message, explain)


def make_server(
    host: str,
    port: int,
    container: Container,
    *,
    header_timeout_s: float | None = None,
    body_timeout_s: float | None = None,
    faults: ServerFaults | None = None,
) -> ThreadingHTTPServer:
    """A threaded server invoking the api λ in this process over ``container``, one invocation at
    a time (the emulator's per-function lock); the timeouts default to its settings. ``faults``:
    what of the server is down, added to ``/v1/health`` (none when not given)."""

    def invoke_here(event: dict[str, Any]) -> tuple[Any, int | None]:
        return lambdas.invoke("api", event, container), None

    settings = container.settings
    share = ConcurrencyShare(settings.http_user_concurrency, settings.http_tenant_concurrency)
    return _build(
        host, port, settings, invoke_here, share, header_timeout_s, body_timeout_s, faults or (lambda: [])
    )


def make_front(
    host: str,
    port: int,
    settings: Settings,
    pool: WorkerPool,
    *,
    header_timeout_s: float | None = None,
    body_timeout_s: float | None = None,
    faults: ServerFaults | None = None,
) -> ThreadingHTTPServer:
    """A threaded front handing each event to ``pool`` (started); a user's share of requests in
    flight is ``http_user_concurrency`` but at most ``pool.size - 1`` (never below 1), so one user
    cannot take every worker; the tenant share is ``http_tenant_concurrency``."""
    per_user = min(settings.http_user_concurrency, max(1, pool.size - 1))
    share = ConcurrencyShare(per_user, settings.http_tenant_concurrency)
    return _build(
        host, port, settings, pool.invoke, share, header_timeout_s, body_timeout_s, faults or (lambda: [])
    )


def _build(
    host: str,
    port: int,
    settings: Settings,
    invoke_api: InvokeApi,
    share: ConcurrencyShare,
    header_timeout_s: float | None,
    body_timeout_s: float | None,
    faults: ServerFaults,
) -> ThreadingHTTPServer:
    handler = type(
        "Handler",
        (_Handler,),
        {
            "settings": settings,
            "invoke_api": staticmethod(invoke_api),
            "header_timeout_s": header_timeout_s or settings.http_header_timeout_s,
            "body_timeout_s": body_timeout_s or settings.http_body_timeout_s,
            "share": share,
            "faults": staticmethod(faults),
            "inflight": InFlight(),
        },
    )
    server = _Front((host, port), handler)
    server.daemon_threads = True
    return server


class _Front(ThreadingHTTPServer):
    """Counts each connection in its handler's :class:`InFlight` from accept to close."""

    def process_request(self, request: Any, client_address: Any) -> None:
        inflight: InFlight = self.RequestHandlerClass.inflight  # type: ignore[attr-defined]
        inflight.__enter__()
        try:
            super().process_request(request, client_address)
        except BaseException:
            inflight.__exit__()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.RequestHandlerClass.inflight.__exit__()  # type: ignore[attr-defined]
