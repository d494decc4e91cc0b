"""The Neptune adapter's connection to a Gremlin server: how it dials, what counts as a broken
connection, which server errors are worth another try, and how long to wait between tries.

* **One connection per process.** ``DriverRemoteConnection`` defaults to a pool of 8 lazily opened
  WebSockets and 8 worker threads; a Lambda serves one request at a time, so the factory asks for
  ``pool_size=1`` and :data:`WORKERS` threads (one write and one read of the single request in
  flight), with read/write timeouts so a silent server cannot hold an invocation until it times out.
* **Fresh signatures on every dial.** Neptune's IAM handshake is SigV4-signed and the signature is
  good for about five minutes; the factory signs when it is *called* (never at cold start), with
  the credentials the session holds then, so a warm container that reconnects an hour later gets
  a new ``X-Amz-Date`` and not a 403.
* **Broken connections** (:func:`is_transport_failure`): ``OSError`` (``ConnectionResetError``,
  aiohttp's ``ClientOSError``/``ClientConnectorError``), ``TimeoutError`` (``asyncio.TimeoutError``
  is the same class), aiohttp's ``ClientError`` (``WSServerHandshakeError``,
  ``ServerDisconnectedError``), the ``RuntimeError`` the driver raises when the server closed the
  socket, and the bare ``Exception`` it raises for a 403 handshake or a closed client.
* **Transient server errors** (:func:`transient_code`): Neptune's retryable codes
  (:data:`RETRYABLE_CODES`; ``ReadOnlyViolationException`` after a failover also redials,
  :data:`REDIAL_CODES`) and Gremlin Server's 429 / 598 (server-side timeout). Malformed queries,
  bad arguments, 403s and the like are not retried.
* **Backoff with full jitter** (:class:`Backoff`): try ``n`` waits ``uniform(0, min(cap, base·2ⁿ))``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import aiohttp
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.remote_connection import RemoteConnection

from agentmem.errors import ConfigurationError

WORKERS = 2  # the driver's executor: one write, one read of the one request in flight
READ_TIMEOUT_S = 30.0
WRITE_TIMEOUT_S = 10.0
RETRYABLE_CODES = (
    "ConcurrentModificationException",  # two transactions touched one element
    "ConstraintViolationException",  # two creators of one vertex/edge id raced
    "ReadOnlyViolationException",  # a failover turned the writer into a reader
    "ThrottlingException",
    "TooManyRequestsException",
    "MemoryLimitExceededException",
    "TimeLimitExceededException",
    "InternalFailureException",
)
REDIAL_CODES = ("ReadOnlyViolationException",)
RETRYABLE_STATUSES = (429, 598)  # too many requests; Gremlin Server's evaluation timeout
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, TimeoutError, RuntimeError, aiohttp.ClientError)


def is_transport_failure(exc: BaseException) -> bool:
    """True when ``exc`` means the connection is unusable (drop it; the next call redials)."""
    return isinstance(exc, TRANSPORT_ERRORS) or type(exc) is Exception  # the driver's bare 403


def neptune_code(exc: GremlinServerError) -> str | None:
    """The error code a Gremlin server sent (Neptune: the JSON message's ``code``), if any."""
    try:
        body = json.loads(str(exc.status_message))
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return str(body["code"])
    text = f"{exc.status_message} {exc.status_attributes}"
    return next((code for code in RETRYABLE_CODES if code in text), None)


def transient_code(exc: GremlinServerError) -> str | None:
    """Why ``exc`` is worth another try (a Neptune code or an HTTP-like status), else None."""
    code = neptune_code(exc)
    if code in RETRYABLE_CODES:
        return code
    if exc.status_code in RETRYABLE_STATUSES:
        return str(exc.status_code)
    return None


def needs_redial(exc: GremlinServerError) -> bool:
    return neptune_code(exc) in REDIAL_CODES


@dataclass(frozen=True)
class Backoff:
    """Bounded exponential backoff with full jitter; ``random`` is injectable for tests."""

    attempts: int = 6  # tries in all, for any mix of transient errors
    redials: int = 2  # of which at most this many after a broken connection
    base_s: float = 0.025
    cap_s: float = 1.0
    random: Callable[[], float] = random.random

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed try ``attempt`` (0-based)."""
        return self.random() * min(self.cap_s, self.base_s * float(2**attempt))


def signed_headers(host: str, port: int, region: str, credentials: Any) -> dict[str, str]:
    """SigV4 headers for Neptune's WebSocket handshake, signed now (valid for five minutes)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="GET", url=f"https://{host}:{port}/gremlin", data=None)
    request.headers["Host"] = f"{host}:{port}"
    SigV4Auth(credentials, "neptune-db", region).add_auth(request)
    return dict(request.headers.items())


def gremlin_url(endpoint: str, port: int) -> tuple[str, str, int]:
    """``(url, host, port)`` for a host name or a ``ws://``/``wss://`` URL (its port wins)."""
    if "://" not in endpoint:
        host = endpoint.split("/", 1)[0].split(":", 1)[0]
        return f"wss://{host}:{port}/gremlin", host, port
    parsed = urlparse(endpoint)
    scheme = {"https": "wss", "http": "ws"}.get(parsed.scheme, parsed.scheme)
    if scheme not in ("ws", "wss") or not parsed.hostname:
        raise ConfigurationError(f"not a Gremlin endpoint: {endpoint!r}", details={"endpoint": endpoint})
    host, port = parsed.hostname, parsed.port or port
    return f"{scheme}://{host}:{port}{parsed.path or '/gremlin'}", host, port


def connection_factory(
    endpoint: str,
    *,
    port: int = 8182,
    region: str | None = None,
    iam: bool = False,
    session: Any = None,
    read_timeout_s: float = READ_TIMEOUT_S,
    dial: Callable[..., RemoteConnection] | None = None,
) -> Callable[[], RemoteConnection]:
    """A callable that opens one ``DriverRemoteConnection`` (pool of one) each time it is called,
    signing its handshake then when ``iam``. Nothing is resolved or signed until the first call."""
    url, host, port = gremlin_url(endpoint, port)

    def connect() -> RemoteConnection:
        headers: dict[str, str] | None = None
        if iam:
            import boto3

            boto_session = session or boto3.session.Session()
            credentials = boto_session.get_credentials()
            region_name = region or boto_session.region_name
            if credentials is None or not region_name:
                raise ConfigurationError("Neptune IAM auth needs AWS credentials and AGENTMEM_AWS_REGION")
            headers = signed_headers(host, port, region_name, credentials.get_frozen_credentials())
        if dial is None:
            from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection

            build: Callable[..., RemoteConnection] = DriverRemoteConnection
        else:
            build = dial
        return build(
            url,
            "g",
            headers=headers,
            pool_size=1,
            max_workers=WORKERS,
            read_timeout=read_timeout_s,
            write_timeout=WRITE_TIMEOUT_S,
        )

    return connect
