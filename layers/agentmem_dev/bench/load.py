"""``agentmem bench load``: concurrent clients against the local server on loopback, bounded in
time, then an accounting of every turn the server accepted (issue 4: nothing lost under load).

Each client thread posts turns (``POST /v1/turns``) and asks for context (``POST /v1/context``)
in a loop until the time is up. The server is the real one (``agentmem serve``'s HTTP server,
queue poller and stream reader) over a fresh data directory, or an already running server given
by ``--url`` together with its ``--data-dir`` (the accounting reads its stores). After the load
stops the queue is drained (bounded), then every accepted message id must be one of: processed
by the write path, rejected with a reason, or dead-lettered. ``missing`` must be 0.
"""

from __future__ import annotations

import json
import random
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.bootstrap import Container, bootstrap
from agentmem.domain.models import Scope
from agentmem.settings import load_settings
from agentmem_dev.bench.common import machine, percentiles, say, synthetic_facts, synthetic_queries
from agentmem_dev.emulator.runner import LocalRunner
from agentmem_dev.emulator.server import make_server

TENANT = "load"


@dataclass
class ClientStats:
    accepted: list[tuple[str, str]] = field(default_factory=list)  # (user, message id)
    refused: int = 0  # 429 (queue full, or over a share): refused with a reason, counted, never dropped
    errors: Counter[str] = field(default_factory=Counter)
    samples: dict[str, Any] = field(default_factory=dict)  # first error body per kind
    turn_ms: list[float] = field(default_factory=list)
    context_ms: list[float] = field(default_factory=list)


def _post(url: str, body: dict[str, Any], user: str, timeout: float = 30.0) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "X-Tenant-Id": TENANT, "X-User-Id": user},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        payload = exc.read()
        try:
            return exc.code, json.loads(payload or b"{}")
        except json.JSONDecodeError:
            return exc.code, {}


def _client(
    base: str, index: int, users: int, deadline: float, stats: ClientStats, context_share: float
) -> None:
    rng = random.Random(index)
    facts = synthetic_facts(200, seed=100 + index)
    queries = synthetic_queries(50, seed=200 + index)
    sequence = 0
    while time.monotonic() < deadline:
        user = f"u{rng.randrange(users)}"
        started = time.perf_counter()
        try:
            if rng.random() < context_share:
                status, payload = _post(
                    f"{base}/v1/context", {"query": rng.choice(queries), "mode": "chat"}, user
                )
                stats.context_ms.append((time.perf_counter() - started) * 1000)
                if status == 429:  # over the user's share of requests in flight: refused, not an error
                    stats.refused += 1
                elif status != 200:
                    stats.errors[f"context_{status}"] += 1
                    stats.samples.setdefault(f"context_{status}", payload)
                continue
            sequence += 1
            message_id = f"load-{index}-{sequence}"
            turn = {
                "session_id": f"s{index}",
                "user": rng.choice(facts),
                "assistant": "OK.",
                "message_id": message_id,
            }
            status, payload = _post(f"{base}/v1/turns", turn, user)
            stats.turn_ms.append((time.perf_counter() - started) * 1000)
            if status == 202:
                stats.accepted.extend((user, m) for m in payload.get("message_ids", []))
            elif status == 429:
                stats.refused += 1
            else:
                stats.errors[f"turns_{status}"] += 1
                stats.samples.setdefault(f"turns_{status}", payload)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            stats.errors[type(exc).__name__] += 1


def _account(container: Container, accepted: list[tuple[str, str]]) -> dict[str, int]:
    """Where every accepted turn ended up."""
    queue: Any = container.queue
    dead = {d.message_id for d in queue.dead_letters(100_000)} if hasattr(queue, "dead_letters") else set()
    counts: Counter[str] = Counter()
    for user, message_id in accepted:
        scope = Scope(TENANT, user)
        if container.turn_log.is_processed(scope, message_id):
            counts["processed"] += 1
        elif message_id in dead:
            counts["dead_lettered"] += 1
        else:
            counts["missing"] += 1
    return {
        "processed": counts["processed"],
        "dead_lettered": counts["dead_lettered"],
        "missing": counts["missing"],
    }


def _drain(container: Container, timeout_s: float) -> float:
    """Wait until the queue holds nothing pending or in flight (the runner threads work it)."""
    started = time.monotonic()
    queue: Any = container.queue
    while time.monotonic() - started < timeout_s:
        stats = queue.stats()
        if stats.get("pending", 0) == 0 and stats.get("inflight", 0) == 0:
            break
        time.sleep(0.2)
    return round(time.monotonic() - started, 2)


def run(
    *,
    clients: int = 8,
    seconds: float = 20.0,
    users: int = 20,
    context_share: float = 0.3,
    embedder: str = "auto",
    capacity: int = 1000,
    drain_timeout_s: float = 600.0,
    url: str | None = None,
    data_dir: str | None = None,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Run the load; returns throughput, latencies and the accounting of accepted turns."""
    tmp = None
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="agentmem-load-")
        data_dir = tmp.name
    settings = load_settings(data_dir=Path(data_dir), embedder=embedder, queue_capacity=capacity)
    container = bootstrap(settings)
    server = runner = None
    try:
        if url is None:
            container.embedder.embed_query("warm up")
            runner = LocalRunner(container)
            runner.start()
            server = make_server("127.0.0.1", 0, container)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            url = f"http://127.0.0.1:{server.server_address[1]}"
        say(progress, f"load: {clients} clients for {seconds:.0f} s against {url}")
        deadline = time.monotonic() + seconds
        stats = [ClientStats() for _ in range(clients)]
        threads = [
            threading.Thread(
                target=_client, args=(url, i, users, deadline, stats[i], context_share), daemon=True
            )
            for i in range(clients)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        accepted = [a for s in stats for a in s.accepted]
        say(progress, f"load: {len(accepted)} turns accepted; draining the queue ...")
        drain_seconds = _drain(container, drain_timeout_s)
        accounting = _account(container, accepted)
        errors: Counter[str] = Counter()
        for s in stats:
            errors.update(s.errors)
        turn_ms = [v for s in stats for v in s.turn_ms]
        context_ms = [v for s in stats for v in s.context_ms]
        queue_stats: dict[str, Any] = (
            dict(container.queue.stats()) if hasattr(container.queue, "stats") else {}
        )
        return {
            "machine": machine(),
            "settings": {
                "clients": clients,
                "seconds": seconds,
                "users": users,
                "context_share": context_share,
                "embedder": container.embedder.model_id,
                "queue_capacity": capacity,
                "target": "in-process server" if server is not None else url,
            },
            "turn_requests": len(turn_ms),
            "turns_accepted": len(accepted),
            "turns_refused_queue_full": sum(s.refused for s in stats),
            "context_requests": len(context_ms),
            "errors": dict(errors),
            "error_samples": {k: v for s in stats for k, v in s.samples.items()},
            "requests_per_s": round((len(turn_ms) + len(context_ms)) / elapsed, 1) if elapsed else None,
            "turn_post": percentiles(turn_ms),
            "context": percentiles(context_ms),
            "drain_seconds": drain_seconds,
            "ingested_per_s": round(accounting["processed"] / (elapsed + drain_seconds), 1),
            "accounted": accounting,
            "all_accounted": accounting["missing"] == 0,
            "queue": queue_stats,
        }
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        if runner is not None:
            runner.stop()
        if tmp is not None:
            tmp.cleanup()
