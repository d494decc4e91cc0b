"""``bad_input`` and ``fairness``: the server stays up, answers within bounds and serves everyone.

``bad_input``: a case's ``request`` is ``{"method", "path", "headers"?: [[k, v], ...], "scope"?,
"body"?: JSON | "raw"?: text | "raw_b64"?: bytes | "gen"?: {"kind", "n", "template"?}}``;
``gen`` builds what is too big to write down (``deep_list``/``deep_dict`` nested ``n`` deep,
``digits``: an ``n``-digit number, ``str``: a JSON string of ``n`` characters, ``repeat``: the
raw text ``n`` times), put in place of ``@`` in ``template``. Through: a 5xx, or no answer
within the timeout (a reset connection after a 413 is an answer: the server refused). A
``slow`` request (``{"slow": "headers"|"trickle"|"body", "hold_s"}``) opens a socket, sends part
of a request and waits: through when the server still holds the connection open after
``hold_s`` (it has no read timeout).

``fairness``: ``queue_flood`` (one tenant posts batches until its 429, then another tenant
must get 202), and ``context_load`` (one user's heavy calls from several threads; another
user's p50 context latency must stay within ``factor`` × its idle p50; the figures are kept).
"""

from __future__ import annotations

import base64
import json
import socket
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from agentmem_dev.eval.guards import checks
from agentmem_dev.eval.guards.client import Api, Response
from agentmem_dev.eval.guards.corpus import Outcome

BAD_INPUT_TIMEOUT_S = 20.0
MAX_HOLD_S = 15.0


def generate(gen: dict[str, Any]) -> bytes:
    """The body a ``gen`` spec describes (see the module docstring)."""
    kind, n = gen["kind"], int(gen.get("n", 1000))
    template = str(gen.get("template", "@"))
    if kind == "deep_list":
        inner = "[" * n + "]" * n
    elif kind == "deep_dict":
        inner = '{"a":' * n + "1" + "}" * n
    elif kind == "digits":
        inner = "9" * n
    elif kind == "str":
        inner = json.dumps(str(gen.get("char", "a")) * n, ensure_ascii=False)
    elif kind == "repeat":
        inner = str(gen.get("text", "a")) * n
    else:
        raise ValueError(f"unknown generator {kind!r}")
    return template.replace("@", inner, 1).encode("utf-8")


def body_of(request: dict[str, Any]) -> bytes | None:
    if "gen" in request:
        return generate(request["gen"])
    if "raw_b64" in request:
        return base64.b64decode(request["raw_b64"])
    if "raw" in request:
        return str(request["raw"]).encode("utf-8")
    if "body" in request:
        return json.dumps(request["body"], ensure_ascii=False).encode("utf-8")
    return None


def _slow(base_url: str, request: dict[str, Any]) -> tuple[bool, str]:
    """(held open past hold_s, what happened)."""
    split = urlsplit(base_url)
    hold = min(float(request.get("hold_s", 10)), MAX_HOLD_S)
    kind = request["slow"]
    head = f"{request.get('method', 'POST')} {request.get('path', '/v1/turns')} HTTP/1.1\r\nHost: x\r\n"
    with socket.create_connection(
        (split.hostname or "127.0.0.1", split.port or 80), timeout=hold + 5
    ) as sock:
        if kind == "body":
            sock.sendall((head + "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{").encode())
        else:
            sock.sendall(head.encode())
        deadline = time.monotonic() + hold
        sock.settimeout(1.0)
        while time.monotonic() < deadline:
            try:
                if kind == "trickle":
                    sock.sendall(b"X")
                chunk = sock.recv(4096)
                if not chunk:
                    return False, "the server closed the connection"
                return False, "the server answered: " + chunk.decode("latin-1")[:60]
            except TimeoutError:
                continue
            except OSError as exc:
                return False, f"closed ({type(exc).__name__})"
        return True, f"still open after {hold:.0f}s"


def run_bad_input(base: Api, case: dict[str, Any]) -> Outcome:
    outcome = Outcome(case["id"], "bad_input", case.get("lang", "?"))
    request = case["request"]
    if "slow" in request:
        held, what = _slow(base.base_url, request)
        if held:
            outcome.hits.add("through")
        outcome.detail = what
        return outcome
    api = base if request.get("scope", True) else base.as_(None, None)
    headers = [tuple(pair) for pair in request.get("headers", [])]
    body = body_of(request)
    if body is not None and "body" in request and not any(k.lower() == "content-type" for k, _ in headers):
        headers.append(("Content-Type", "application/json"))
    answer = api.raw(
        request.get("method", "POST"),
        request["path"],
        body,
        headers,
        scope=request.get("scope", True),
        timeout_s=BAD_INPUT_TIMEOUT_S,
    )
    outcome.figures = {"status": answer.status, "seconds": round(answer.seconds, 3)}
    if answer.status >= 500 or answer.timed_out:
        outcome.hits.add("through")
        outcome.detail = f"{answer.status or answer.error}: {answer.text[:120]}"
    elif answer.status == 0:
        outcome.detail = f"no answer ({answer.error}); counted as a refusal"
    return outcome


# ------------------------------------------------------------------------------------ fairness


def _flood(api: Api, case: dict[str, Any]) -> tuple[int, int]:
    """Post batches until a 429 (bounded); (requests sent, the first 429's index or -1)."""
    users = int(case.get("users", 1))
    for number in range(int(case.get("max_requests", 40))):
        scoped = api.as_(api.tenant, f"flood-{number % users}")
        batch = [
            {
                "session_id": "f",
                "user": f"Flood {number}-{i}: I like green tea.",
                "message_id": f"{case['id']}-{number}-{i}",
            }
            for i in range(int(case.get("batch", 100)))
        ]
        answer = scoped.post_turns(batch, retries=0)
        if answer.status == 429:
            return number + 1, number
    return int(case.get("max_requests", 40)), -1


def _timed(call: Any, count: int) -> list[float]:
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def run_fairness(base: Api, case: dict[str, Any], tenant: str) -> Outcome:
    outcome = Outcome(case["id"], "fairness", case.get("lang", "?"))
    kind = case["kind"]
    if kind == "queue_flood":
        sent, refused_at = _flood(base.as_(f"{tenant}-flood-{case['id']}", "u"), case)
        other = base.as_(f"{tenant}-other-{case['id']}", "u")
        turns = [
            {
                "session_id": "s",
                "user": f"I live in Porto ({case['id']} {i}).",
                "message_id": f"{case['id']}-o{i}",
            }
            for i in range(int(case.get("other_batch", 1)))
        ]
        answer: Response = other.post_turns(turns, retries=0)
        outcome.figures = {"flood_requests": sent, "flood_429_at": refused_at, "other_status": answer.status}
        if refused_at < 0:
            outcome.inconclusive = True
            outcome.detail = "the flooding tenant never got 429"
        elif answer.status != 202:
            outcome.hits.add("through")
            outcome.detail = f"the other tenant got {answer.status}"
        return outcome
    if kind == "context_load":
        return _context_load(base, case, tenant, outcome)
    raise ValueError(f"case {case['id']}: unknown fairness kind {kind!r}")


def _context_load(base: Api, case: dict[str, Any], tenant: str, outcome: Outcome) -> Outcome:
    quiet = base.as_(f"{tenant}-quiet", f"q-{case['id']}")
    heavy = base.as_(
        f"{tenant}-heavy" if case.get("other_tenant", True) else f"{tenant}-quiet", f"h-{case['id']}"
    )
    quiet.call("POST", "/v1/memories", {"content": "I live in Lisbon and I like jazz."})
    heavy.call("POST", "/v1/memories", {"content": "I live in Oslo and I like opera."})
    probe = lambda: quiet.call("POST", "/v1/context", {"query": "Where do I live?"})  # noqa: E731
    samples = int(case.get("samples", 15))
    _timed(probe, 3)  # warm
    idle = _timed(probe, samples)
    query = (str(case.get("query", "opera ")) * 20000)[: int(case.get("query_chars", 16000))]
    route = case.get("route", "/v1/context")
    heavy_body: dict[str, Any] = {"query": query}
    if route == "/v1/recall":
        heavy_body["k"] = 100
    stop = threading.Event()
    seconds = min(float(case.get("seconds", 4.0)), 10.0)

    def hammer() -> int:
        sent = 0
        while not stop.is_set():
            heavy.call("POST", route, heavy_body)
            sent += 1
        return sent

    with ThreadPoolExecutor(max_workers=int(case.get("threads", 4))) as pool:
        futures = [pool.submit(hammer) for _ in range(int(case.get("threads", 4)))]
        time.sleep(0.3)
        loaded: list[float] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and len(loaded) < samples * 4:
            loaded.extend(_timed(probe, 1))
        stop.set()
        heavy_calls = sum(f.result() for f in futures)
    idle_p50, loaded_p50 = checks.p50(idle), checks.p50(loaded)
    factor = float(case.get("factor", 5.0))
    outcome.figures = {
        "idle_p50_ms": round((idle_p50 or 0) * 1000, 1),
        "loaded_p50_ms": round((loaded_p50 or 0) * 1000, 1),
        "loaded_max_ms": round(max(loaded, default=0) * 1000, 1),
        "heavy_calls": heavy_calls,
        "samples": len(loaded),
        "idle_stdev_ms": round(statistics.pstdev(idle) * 1000, 1) if idle else None,
    }
    if idle_p50 and loaded_p50 and loaded_p50 > factor * idle_p50:
        outcome.hits.add("through")
        outcome.detail = (
            f"p50 {outcome.figures['idle_p50_ms']} ms idle -> {outcome.figures['loaded_p50_ms']} ms"
        )
    return outcome
