"""A local HTTP server that speaks the OpenAI API shape, for the OpenAI-compatible provider's tests.

Built from the API reference's request and response examples: ``POST /v1/chat/completions``
(``model``, ``messages``, ``response_format`` of type ``text`` / ``json_object`` / ``json_schema``
with a ``name`` and a ``schema``; the answer is a ``chat.completion`` object with ``choices[].message``,
``finish_reason`` and ``usage``), ``POST /v1/embeddings`` (``input`` a string or a list of them,
``encoding_format`` ``float`` or ``base64`` — little-endian float32, what the official SDK asks for
by default —, ``dimensions``; the answer is a ``list`` of ``embedding`` objects with their ``index``
and ``usage``), ``GET /v1/models``, and errors as ``{"error": {"message", "type", "param",
"code"}}`` with their status (400, 401, 404, 429 with ``Retry-After``). The tests drive it with the
official ``openai`` SDK too, so the fake cannot drift from the protocol unnoticed.

Knobs for the tests: ``chat`` (request body -> reply text), ``failures`` (status, headers) answered
before the next requests, ``delay_s``, ``json_schema`` / ``json_object`` / ``dimensions_param``
(what the server accepts; a refused one is a 400 as vLLM or an older server answers), ``shuffle``
(embedding rows answered out of order), ``api_key``. Every request is kept in ``requests``.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from agentmem.adapters.embedders import HashEmbedder

ROLES = {"system", "developer", "user", "assistant", "tool"}
SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeOpenAI:
    chat: Callable[[dict[str, Any]], str] = lambda body: "ok"
    finish_reason: str = "stop"
    failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    delay_s: float = 0.0
    json_schema: bool = True
    json_object: bool = True
    dimensions_param: bool = True
    native_dimension: int = 64
    shuffle: bool = False
    api_key: str | None = None
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def vector(self, text: str, dimension: int) -> np.ndarray:
        """The server's embedding of ``text`` (hashed n-grams: near for texts that share words)."""
        vector = HashEmbedder(self.native_dimension).embed_query(text)[:dimension]
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector


def _error(
    status: int, message: str, kind: str, code: str | None = None, param: str | None = None
) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _tokens(text: str) -> int:
    return max(1, len(text.split()) + sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff"))


def _chat(fake: FakeOpenAI, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _error(400, "you must provide a model parameter", "invalid_request_error", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return _error(400, "'messages' must be a non-empty array", "invalid_request_error", param="messages")
    for m in messages:
        if (
            not isinstance(m, dict)
            or m.get("role") not in ROLES
            or not isinstance(m.get("content"), (str, list))
        ):
            return _error(400, "invalid message", "invalid_request_error", param="messages")
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in ("text", "json_object", "json_schema"):
            return _error(400, "invalid response_format", "invalid_request_error", param="response_format")
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not fake.json_schema:
                return _error(400, "response_format json_schema is not supported", "invalid_request_error")
            if (
                not isinstance(spec, dict)
                or not SCHEMA_NAME.match(str(spec.get("name", "")))
                or not isinstance(spec.get("schema"), dict)
            ):
                return _error(
                    400,
                    "json_schema needs a name and a schema",
                    "invalid_request_error",
                    param="response_format",
                )
        if kind == "json_object" and not fake.json_object:
            return _error(400, "response_format json_object is not supported", "invalid_request_error")
    reply = fake.chat(body)
    prompt_tokens = sum(_tokens(str(m["content"])) for m in messages)
    return 200, {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply, "refusal": None},
                "logprobs": None,
                "finish_reason": fake.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": _tokens(reply),
            "total_tokens": prompt_tokens + _tokens(reply),
        },
    }


def _embeddings(fake: FakeOpenAI, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    inputs = body.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(body.get("model"), str) or not isinstance(inputs, list) or not inputs:
        return _error(
            400, "'input' must be a non-empty string or array", "invalid_request_error", param="input"
        )
    if any(not isinstance(t, str) or not t for t in inputs) or len(inputs) > 2048:
        return _error(400, "'$.input' is invalid", "invalid_request_error", param="input")
    dimension = fake.native_dimension
    if body.get("dimensions") is not None:
        if not fake.dimensions_param:
            return _error(
                400, "this model does not support 'dimensions'", "invalid_request_error", param="dimensions"
            )
        dimension = int(body["dimensions"])
        if not 1 <= dimension <= fake.native_dimension:
            return _error(400, "invalid 'dimensions'", "invalid_request_error", param="dimensions")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        return _error(400, "invalid encoding_format", "invalid_request_error", param="encoding_format")
    rows = []
    for index, text in enumerate(inputs):
        vector = fake.vector(text, dimension).astype("<f4")
        encoded: Any = (
            base64.b64encode(vector.tobytes()).decode("ascii")
            if encoding == "base64"
            else [float(x) for x in vector]
        )
        rows.append({"object": "embedding", "index": index, "embedding": encoded})
    if fake.shuffle:
        rows.reverse()
    tokens = sum(_tokens(t) for t in inputs)
    return 200, {
        "object": "list",
        "data": rows,
        "model": body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            with suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        def _authorised(self) -> bool:
            if fake.api_key is None:
                return True
            given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip() or self.headers.get(
                "api-key", ""
            )
            return given == fake.api_key

        def do_GET(self) -> None:
            if not self._authorised():
                self._send(
                    *_error(
                        401, "Incorrect API key provided", "invalid_request_error", code="invalid_api_key"
                    )
                )
            elif self.path.rstrip("/") == "/v1/models":
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": "fake-chat", "object": "model", "created": 0, "owned_by": "test"}],
                    },
                )
            else:
                self._send(*_error(404, "not found", "invalid_request_error", code="unknown_url"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(
                    *_error(400, "We could not parse the JSON body of your request.", "invalid_request_error")
                )
                return
            path = self.path.split("?")[0].rstrip("/")
            with fake._lock:
                fake.requests.append(Recorded(path, {k.lower(): v for k, v in self.headers.items()}, body))
                failure = fake.failures.pop(0) if fake.failures else None
            if fake.delay_s:
                time.sleep(fake.delay_s)
            if not self._authorised():
                self._send(
                    *_error(
                        401, "Incorrect API key provided", "invalid_request_error", code="invalid_api_key"
                    )
                )
                return
            if failure is not None:
                status, headers = failure
                kind = "rate_limit_exceeded" if status == 429 else "server_error"
                self._send(
                    *_error(
                        status, "try again later", "requests" if status == 429 else "server_error", code=kind
                    ),
                    headers,
                )
                return
            if path == "/v1/chat/completions":
                self._send(*_chat(fake, body))
            elif path == "/v1/embeddings":
                self._send(*_embeddings(fake, body))
            else:
                self._send(*_error(404, "not found", "invalid_request_error", code="unknown_url"))

    return Handler


@contextmanager
def fake_openai_server(**knobs: Any) -> Iterator[FakeOpenAI]:
    """A running fake on loopback; its ``url`` is the API root (``http://127.0.0.1:<port>/v1``)."""
    fake = FakeOpenAI(**knobs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
