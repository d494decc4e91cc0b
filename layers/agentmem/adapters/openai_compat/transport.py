"""One POST of JSON to an OpenAI-compatible server, over urllib3 (it ships with botocore, so the
Lambda layer carries nothing more).

What is retried, and nothing else: a 429 or a 503 whose ``Retry-After`` asks for no more than
``retry_after_max_s`` (waited, then tried again, at most ``max_retries`` times), and a 502/504 from
a proxy in front of the server (once, at once). A timeout, a refused connection, an unknown host,
any other status and a body that is not JSON raise :class:`ProviderUnavailable` with a short
``reason`` (``timeout``, ``unreachable``, ``rate_limited``, ``http_<status>``, ``malformed``): the
caller falls back (the rules for an LLM; the embedder's callers say ``degraded``). No request
body, key or reply text is logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import urllib3
from urllib3.exceptions import HTTPError, MaxRetryError, NewConnectionError, ProtocolError, TimeoutError

from agentmem.errors import AgentMemError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 503})  # honoured with their Retry-After
PROXY_STATUSES = frozenset({502, 504})  # a gateway in front of the server: one more try


class ProviderUnavailable(AgentMemError):
    """The model server gave no usable answer; ``reason`` says why (never the body)."""

    def __init__(self, reason: str, *, status: int | None = None, message: str | None = None) -> None:
        super().__init__(message or f"model server: {reason}", details={"reason": reason, "status": status})
        self.reason = reason
        self.status = status


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110 §10.2.3); None
    when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class Transport:
    """POSTs JSON to ``base_url`` + a path (``chat/completions``, ``embeddings``).

    ``api_key`` is a callable so that a key kept in Secrets Manager is read on the first request,
    not when the process starts; ``auth`` is ``bearer`` (``Authorization: Bearer``) or ``api-key``
    (Azure OpenAI's key header)."""

    base_url: str
    api_key: Callable[[], str | None] = lambda: None
    auth: str = "bearer"
    timeout_s: float = 10.0
    retry_after_max_s: float = 2.0
    max_retries: int = 1
    sleep: Callable[[float], None] = time.sleep
    pool: urllib3.PoolManager = field(default_factory=lambda: urllib3.PoolManager(maxsize=8))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self.api_key()
        if key:
            if self.auth == "api-key":
                headers["api-key"] = key
            else:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object the server answered. Raises :class:`ProviderUnavailable`."""
        url = self.base_url.rstrip("/") + "/" + path.lstrip("/")
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = self._headers()
        attempt = 0
        while True:
            attempt += 1
            status, data, retry_after = self._send(url, payload, headers)
            if status == 200:
                try:
                    parsed = json.loads(data)
                except ValueError:
                    raise ProviderUnavailable("malformed", status=status) from None
                if not isinstance(parsed, dict):
                    raise ProviderUnavailable("malformed", status=status)
                return parsed
            if attempt > self.max_retries:
                break
            if status in RETRY_STATUSES:
                wait = retry_after_seconds(retry_after)
                if wait is None or wait > self.retry_after_max_s:
                    break  # not worth holding a turn for: fall back now
                log.info("openai_compat.retry", extra={"status": status, "wait_s": wait})
                self.sleep(wait)
                continue
            if status in PROXY_STATUSES:
                continue
            break
        raise _status_error(status, data)

    def _send(self, url: str, payload: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, str | None]:
        try:
            response = self.pool.request(
                "POST",
                url,
                body=payload,
                headers=dict(headers),
                timeout=urllib3.Timeout(connect=min(self.timeout_s, 5.0), read=self.timeout_s),
                retries=False,
                preload_content=True,
            )
        except NewConnectionError:  # refused, unknown host (urllib3 files it under its timeouts)
            raise ProviderUnavailable("unreachable") from None
        except TimeoutError:
            raise ProviderUnavailable("timeout") from None
        except (MaxRetryError, ProtocolError) as exc:
            reason = getattr(exc, "reason", None)
            timed_out = isinstance(reason, TimeoutError) and not isinstance(reason, NewConnectionError)
            raise ProviderUnavailable("timeout" if timed_out else "unreachable") from None
        except HTTPError:
            raise ProviderUnavailable("unreachable") from None
        return int(response.status), bytes(response.data or b""), response.headers.get("Retry-After")


def _status_error(status: int, data: bytes) -> ProviderUnavailable:
    """The error of a non-200 answer: the server's ``error.type``/``code`` when it sent one (the
    OpenAI error shape), never its message (it may quote the request)."""
    if status == 429:
        return ProviderUnavailable("rate_limited", status=status)
    kind = ""
    try:
        error = json.loads(data).get("error") or {}
        if isinstance(error, dict):
            kind = str(error.get("code") or error.get("type") or "")[:60]
    except (ValueError, AttributeError):
        pass
    return ProviderUnavailable(
        f"http_{status}", status=status, message=f"model server answered {status} {kind}".rstrip()
    )
