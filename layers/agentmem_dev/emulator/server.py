"""Local HTTP server: each request becomes an API Gateway proxy event for ``functions/api``.

It plays API Gateway's authorizer too: scope headers (``X-Tenant-Id``, ``X-User-Id``) are
accepted only from loopback clients unless a bearer token is configured; with a token, the token
is required from everyone and, when mapped, decides the tenant. Loopback and token callers get
``memory:read``, ``memory:write`` and ``memory:permanent``; only the operator token
(``AGENTMEM_OPERATOR_TOKEN``) adds ``memory:policy``, the permission to write the instructions of the
Constraints slot (:mod:`agentmem.domain.authority`).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentmem.bootstrap import Container
from agentmem.domain.authority import POLICY_PERMISSION
from agentmem.messages import MAX_BODY_BYTES
from agentmem.settings import Settings
from agentmem_dev.emulator import events, lambdas

log = logging.getLogger(__name__)


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
        permissions += ",memory:permanent," + POLICY_PERMISSION
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
    container: Container

    def log_message(self, format: str, *args: Any) -> None:  # quieter than stderr per request
        log.debug("http %s", format % args)

    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        payload = body.encode("utf-8")
        self.send_response(status)
        sent = {k.lower() for k in (headers or {})}
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "content-type" not in sent:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, code: str, message: str) -> None:
        self._send(status, json.dumps({"error": code, "message": message}))

    def _handle(self) -> None:
        length_header = self.headers.get("Content-Length") or "0"
        try:
            length = int(length_header)
        except ValueError:
            return self._error(400, "invalid_request", "Content-Length is not a number")
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            return self._error(413, "payload_too_large", f"body exceeds {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(length) if length else b""
        try:
            body = raw.decode("utf-8") if raw else None
        except UnicodeDecodeError:
            return self._error(400, "invalid_request", "the body is not valid UTF-8")
        headers = {k: v for k, v in self.headers.items()}
        authorizer, refusal = authorize(headers, self.client_address[0], self.container.settings)
        if refusal:
            return self._error(401 if "token" in refusal else 403, "unauthorized", refusal)
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
        # One request at a time through the api λ, as one Lambda environment serves them (the
        # emulator's per-function lock; see agentmem_dev.emulator.lambdas).
        result = lambdas.invoke("api", event, self.container)
        response_headers = dict(result.get("headers") or {})
        for key, values in (result.get("multiValueHeaders") or {}).items():
            response_headers[key] = ",".join(values)
        self._send(int(result.get("statusCode", 500)), result.get("body") or "", response_headers)

    def _safe(self) -> None:
        try:
            self._handle()
        except Exception:  # the boundary: a failure is logged, the client gets a clean 500
            log.exception("local.server_error")
            with contextlib.suppress(OSError):
                self._error(500, "internal_error", "unexpected error; it has been logged")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _safe


def make_server(host: str, port: int, container: Container) -> ThreadingHTTPServer:
    handler = type("Handler", (_Handler,), {"container": container})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
