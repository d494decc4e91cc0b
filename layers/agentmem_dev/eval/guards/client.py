"""The evaluator's side of the wire: a small HTTP client over ``http.client`` (every call bounded
by a timeout, a hung or reset connection is an answer, not an exception), the local server in a
subprocess, and the barrier that says "everything posted so far has been ingested and projected".

The barrier relies only on what a client can see: the local queue hands out messages in the
order they were sent and the projector reads the change log in order, so once a sentinel turn
posted last has produced its memory, and a sentinel memory written last is found by recall,
everything posted before both has gone through ingest and projection.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_TIMEOUT_S = 15.0
START_TIMEOUT_S = 180.0
BARRIER_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Response:
    """One answer. ``status`` is 0 when no HTTP answer came back (``error`` says why: a timeout,
    a reset connection); ``body`` is the parsed JSON or None."""

    status: int
    text: str
    body: Any
    seconds: float
    error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def timed_out(self) -> bool:
        return self.error is not None and "timed out" in self.error


def _parse(raw: bytes) -> tuple[str, Any]:
    text = raw.decode("utf-8", errors="replace")
    try:
        return text, json.loads(text) if text else None
    except ValueError:
        return text, None


@dataclass(frozen=True)
class Api:
    """Calls ``base_url`` as one tenant/user (scope headers, as loopback clients send them; a
    bearer token when one is configured)."""

    base_url: str
    tenant: str | None = None
    user: str | None = None
    token: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    def as_(self, tenant: str | None, user: str | None) -> Api:
        return Api(self.base_url, tenant, user, self.token, self.timeout_s)

    def scope_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.tenant is not None:
            headers["X-Tenant-Id"] = self.tenant
        if self.user is not None:
            headers["X-User-Id"] = self.user
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def raw(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        *,
        scope: bool = True,
        timeout_s: float | None = None,
    ) -> Response:
        """Send exactly these bytes and headers (a list of pairs may repeat a header). Scope
        headers are added unless ``scope`` is false or the caller set them."""
        split = urlsplit(self.base_url)
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        given = {k.lower() for k, _ in pairs}
        if scope:
            pairs = [(k, v) for k, v in self.scope_headers().items() if k.lower() not in given] + pairs
        started = time.perf_counter()
        conn = http.client.HTTPConnection(
            split.hostname or "127.0.0.1", split.port or 80, timeout=timeout_s or self.timeout_s
        )
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            if body is not None and "content-length" not in {k.lower() for k, _ in pairs}:
                pairs.append(("Content-Length", str(len(body))))
            for key, value in pairs:
                conn.putheader(key, value.encode("utf-8"))  # any text: a hostile header is bytes
            conn.endheaders(body)
            answer = conn.getresponse()
            raw = answer.read()
            text, parsed = _parse(raw)
            return Response(
                answer.status,
                text,
                parsed,
                time.perf_counter() - started,
                headers={k.lower(): v for k, v in answer.getheaders()},
            )
        except (OSError, http.client.HTTPException, ValueError) as exc:
            return Response(0, "", None, time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Response:
        """A JSON call: ``body`` (when not None) is serialised as UTF-8 JSON."""
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"} if data is not None else {}
        headers.update(kwargs.pop("headers", None) or {})
        return self.raw(method, path, data, headers, **kwargs)

    # -- the routes the evaluator reads through ------------------------------------------
    def memories(self, status: str = "active", limit: int = 200) -> list[dict[str, Any]]:
        """Every memory of this scope with ``status`` (following cursors, at most 20 pages)."""
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(20):
            path = f"/v1/memories?status={status}&limit={limit}" + (f"&cursor={cursor}" if cursor else "")
            answer = self.call("GET", path)
            if not answer.ok or not isinstance(answer.body, dict):
                break
            found.extend(answer.body.get("memories") or [])
            cursor = answer.body.get("next_cursor")
            if not cursor:
                break
        return found

    def contents(self, statuses: tuple[str, ...] = ("active",)) -> list[str]:
        return [str(m.get("content", "")) for s in statuses for m in self.memories(s)]

    def recall(self, query: str, k: int = 20) -> list[str]:
        answer = self.call("POST", "/v1/recall", {"query": query[:16000], "k": k})
        if not answer.ok or not isinstance(answer.body, dict):
            return []
        return [str(m.get("content", "")) for m in answer.body.get("memories") or []]

    def context(self, query: str, mode: str = "chat", session_id: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query[:16000], "mode": mode}
        if session_id:
            body["session_id"] = session_id
        answer = self.call("POST", "/v1/context", body)
        return answer.body if answer.ok and isinstance(answer.body, dict) else {}

    def post_turns(self, turns: list[dict[str, Any]], retries: int = 40) -> Response:
        """POST turns (one or a batch), waiting out a full queue (429) a bounded number of times."""
        body: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
        answer = self.call("POST", "/v1/turns", body)
        for _ in range(retries):
            if answer.status != 429:
                break
            time.sleep(min(float(answer.headers.get("retry-after", "0.5") or 0.5), 2.0))
            answer = self.call("POST", "/v1/turns", body)
        return answer


def _poll(check: Any, timeout_s: float, interval_s: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval_s)
    return False


def barrier(api: Api, label: str, timeout_s: float = BARRIER_TIMEOUT_S) -> bool:
    """Wait until everything posted before this call has been ingested and projected (see the
    module docstring). Returns False when the bound ran out."""
    token = uuid.uuid4().hex[:10]
    scope = api.as_("guard-eval-barrier", f"b-{label}-{token}")
    message_id = f"barrier-{token}"
    sent = scope.post_turns(
        [
            {
                "session_id": "barrier",
                "user": "I live in Lisbon and I work as a baker.",
                "message_id": message_id,
            }
        ]
    )
    if not sent.ok:
        return False

    def ingested() -> bool:
        return any(
            message_id in ((m.get("source_refs") or {}).get("message_ids") or []) for m in scope.memories()
        )

    started = time.monotonic()
    if not _poll(ingested, timeout_s):
        return False
    word = f"quokka{token}"
    written = scope.call("POST", "/v1/memories", {"content": f"My pet is called {word}.", "category": "fact"})
    if not written.ok:
        return False
    remaining = max(1.0, timeout_s - (time.monotonic() - started))
    return _poll(lambda: any(word in text for text in scope.recall(f"pet {word}", k=5)), remaining)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerDidNotStart(RuntimeError):
    """The local server exited or did not answer ``/v1/health`` in time."""


@contextlib.contextmanager
def local_server(
    *, embedder: str | None = None, env: dict[str, str] | None = None, timeout_s: float = START_TIMEOUT_S
) -> Iterator[str]:
    """``agentmem serve`` in a subprocess on a free loopback port over a fresh temporary data
    directory; yields its base URL and stops it (SIGTERM, then SIGKILL) on the way out."""
    with tempfile.TemporaryDirectory(prefix="agentmem-guards-") as tmp:
        port = free_port()
        child_env = {**os.environ, **(env or {})}
        child_env.pop("AGENTMEM_API_TOKEN", None)
        if embedder and embedder != "auto":
            child_env["AGENTMEM_EMBEDDER"] = embedder
        log_path = Path(tmp) / "server.log"
        command = [sys.executable, "-m", "agentmem_dev.cli", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(port), "--data-dir", str(Path(tmp) / "data")]
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=child_env)
            base = f"http://127.0.0.1:{port}"
            try:
                probe = Api(base, timeout_s=2.0)
                deadline = time.monotonic() + timeout_s
                while probe.call("GET", "/v1/health").status != 200:
                    if process.poll() is not None or time.monotonic() > deadline:
                        tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                        raise ServerDidNotStart(f"agentmem serve did not come up on {base}:\n{tail}")
                    time.sleep(0.2)
                yield base
            finally:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait(timeout=10)
