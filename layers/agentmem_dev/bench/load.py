"""``agentmem bench load``: concurrent clients against the local server on loopback, bounded in
time, then an accounting of every turn the server accepted (nothing lost under load),
then fairness under one user's flood (docs/design.md "Performance targets").

Each client thread posts turns (``POST /v1/turns``) and asks for context (``POST /v1/context``)
in a loop until the time is up. The server is the real one (``agentmem serve``: with ``workers``
api worker processes and an event-source process, or ``workers=0`` everything in this process)
over a fresh data directory, or an already running server given by ``--url`` together with its
``--data-dir`` (the accounting reads its stores). After the load stops the queue is drained
(bounded), then every accepted message id must be one of: processed by the write path, rejected
with a reason, or dead-lettered. ``missing`` must be 0.

Fairness: a quiet user of the same tenant asks for context one call after another, first alone
(its idle p50), then while ``flood_clients`` threads of one other user send context calls with
long queries (``flood_chars`` characters; the server reads the first
:data:`~agentmem.services.recall.QUERY_CHARS`) as fast as they are answered. Reported: the quiet
user's p50 / p95 idle and under the flood, their ratio (target <= 2), and what the flood got
(served, refused with 429 — a refused flooder waits ``FLOOD_BACKOFF_S`` before its next call, so
the refusals measure the share, not a loopback spin).
"""

from __future__ import annotations

import http.client
import json
import random
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.bootstrap import Container, bootstrap
from agentmem.domain.models import Scope
from agentmem.settings import load_settings
from agentmem_dev.bench.common import (
    machine,
    percentiles,
    ratio,
    say,
    synthetic_facts,
    synthetic_queries,
)
from agentmem_dev.emulator.runner import CHECKPOINT
from agentmem_dev.emulator.service import LocalService
from agentmem_dev.emulator.workers import default_workers

TENANT = "load"
QUIET_USER = "u0"  # has memories from the mixed load
FLOOD_USER = "flood"
FLOOD_BACKOFF_S = 0.02


@dataclass
class ClientStats:
    accepted: list[tuple[str, str]] = field(default_factory=list)  # (user, message id)
    # 429s: refused with a reason, counted, never dropped
    refused_queue_full: int = 0  # the bounded queue (or the tenant's share of it) is full
    refused_share: int = 0  # over the user's / tenant's share of requests in flight
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
                if status == 429:  # over the user's share of requests in flight: refused, not an error
                    stats.refused_share += 1
                    continue  # counted, not timed: a refusal's latency is not a context call's
                stats.context_ms.append((time.perf_counter() - started) * 1000)
                if status != 200:
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
            if status != 429:
                stats.turn_ms.append((time.perf_counter() - started) * 1000)
            if status == 202:
                stats.accepted.extend((user, m) for m in payload.get("message_ids", []))
            elif status == 429 and payload.get("error") == "queue_full":
                stats.refused_queue_full += 1
            elif status == 429:
                stats.refused_share += 1
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
    """Wait until the queue holds nothing pending or in flight and the projector has read the
    whole outbox (the server's event sources work both)."""
    started = time.monotonic()
    queue: Any = container.queue
    feed = container.adapters.changes
    while time.monotonic() - started < timeout_s:
        stats = queue.stats()
        queued = stats.get("pending", 0) + stats.get("inflight", 0)
        unprojected = feed is not None and bool(feed.read_outbox(feed.outbox_checkpoint(CHECKPOINT), 1))
        if not queued and not unprojected:
            break
        time.sleep(0.2)
    return round(time.monotonic() - started, 2)


class _Client:
    """A keep-alive client of ``/v1/context`` for one user."""

    def __init__(self, base: str, user: str) -> None:
        split = urllib.parse.urlsplit(base)
        self.host, self.port = split.hostname or "127.0.0.1", split.port or 80
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        self.headers = {"Content-Type": "application/json", "X-Tenant-Id": TENANT, "X-User-Id": user}

    def context(self, query: str) -> int:
        body = json.dumps({"query": query, "mode": "chat"}, ensure_ascii=False).encode("utf-8")
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/v1/context", body=body, headers=self.headers)
                response = self.conn.getresponse()
                response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                return response.status
            except (OSError, http.client.HTTPException):
                # the server closed an idle keep-alive connection (or refused and closed): reconnect
                self.conn.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def _quiet(base: str, queries: list[str], seconds: float, max_calls: int) -> tuple[list[float], Counter[int]]:
    """The quiet user's context calls, one after another: latencies of the 200s, and statuses."""
    client = _Client(base, QUIET_USER)
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    deadline = time.monotonic() + seconds
    try:
        client.context(queries[0])  # a warm connection and caches, not measured
        for i in range(max_calls):
            if time.monotonic() >= deadline:
                break
            started = time.perf_counter()
            status = client.context(queries[i % len(queries)])
            statuses[status] += 1
            if status == 200:
                latencies.append((time.perf_counter() - started) * 1000)
    finally:
        client.close()
    return latencies, statuses


def _flood(base: str, index: int, chars: int, stop: threading.Event, statuses: Counter[int]) -> None:
    client = _Client(base, FLOOD_USER)
    rng = random.Random(1000 + index)
    words = synthetic_queries(50, seed=300 + index)
    try:
        while not stop.is_set():
            query = ""
            while len(query) < chars:
                query += rng.choice(words) + " "
            try:
                status = client.context(query[:chars])
            except (OSError, http.client.HTTPException):
                status = 0
            statuses[status] += 1
            if status != 200:
                stop.wait(FLOOD_BACKOFF_S)
    finally:
        client.close()


def fairness(
    base: str,
    *,
    flood_clients: int = 4,
    flood_chars: int = 6000,
    seconds: float = 8.0,
    max_calls: int = 200,
    progress: bool = True,
) -> dict[str, Any]:
    """The quiet user's context latency alone, then under one user's flood (module docstring)."""
    queries = synthetic_queries(50, seed=7)
    say(progress, f"load: fairness: {QUIET_USER} alone for up to {seconds:.0f} s ...")
    idle, idle_statuses = _quiet(base, queries, seconds, max_calls)
    stop = threading.Event()
    flood_statuses: Counter[int] = Counter()
    flooders = [
        threading.Thread(target=_flood, args=(base, i, flood_chars, stop, flood_statuses), daemon=True)
        for i in range(flood_clients)
    ]
    for thread in flooders:
        thread.start()
    time.sleep(1.0)  # the flood in full swing before measuring
    say(
        progress,
        f"load: fairness: {QUIET_USER} under {flood_clients} flooding clients for up to {seconds:.0f} s ...",
    )
    flooded, flooded_statuses = _quiet(base, queries, seconds, max_calls)
    stop.set()
    for thread in flooders:
        thread.join(timeout=90)
    idle_stats, flooded_stats = percentiles(idle), percentiles(flooded)
    return {
        "flood_clients": flood_clients,
        "flood_chars": flood_chars,
        "quiet_idle": {**idle_stats, "calls": len(idle), "statuses": dict(idle_statuses)},
        "quiet_flooded": {**flooded_stats, "calls": len(flooded), "statuses": dict(flooded_statuses)},
        "p50_ratio": ratio(flooded_stats["p50_ms"], idle_stats["p50_ms"]),
        "p95_ratio": ratio(flooded_stats["p95_ms"], idle_stats["p95_ms"]),
        "target_p50_ratio": 2.0,
        "flood_served": flood_statuses.get(200, 0),
        "flood_refused_429": flood_statuses.get(429, 0),
        "flood_other": sum(v for k, v in flood_statuses.items() if k not in (200, 429)),
    }


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
    workers: int | None = None,
    flood_clients: int = 4,
    flood_chars: int = 6000,
    fairness_seconds: float = 8.0,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Run the load and the fairness phase; returns throughput, latencies, the accounting of
    accepted turns and the quiet user's latency idle and under the flood."""
    tmp = None
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="agentmem-load-")
        data_dir = tmp.name
    settings = load_settings(data_dir=Path(data_dir), embedder=embedder, queue_capacity=capacity)
    container = bootstrap(settings)  # the accounting's view of the stores (and the in-process server's)
    workers = default_workers() if workers is None else workers
    service = None
    started_at = time.perf_counter()
    try:
        if url is None:
            say(progress, f"load: starting the server ({workers or 'no'} worker processes) ...")
            service = LocalService(settings, workers=workers, container=container if not workers else None)
            service.start().serve_in_background()
            url = service.url
        startup_s = round(time.perf_counter() - started_at, 2)
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
        say(progress, f"load: {len(accepted)} turns accepted; draining the queue and the stream ...")
        drain_seconds = _drain(container, drain_timeout_s)
        accounting = _account(container, accepted)
        fair = fairness(
            url,
            flood_clients=flood_clients,
            flood_chars=flood_chars,
            seconds=fairness_seconds,
            progress=progress,
        )
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
                "embedder": service.model_id if service is not None else container.embedder.model_id,
                "queue_capacity": capacity,
                "workers": workers if service is not None else None,
                "target": "local server" if service is not None else url,
            },
            "startup_s": startup_s if service is not None else None,
            "turn_requests": len(turn_ms),
            "turns_accepted": len(accepted),
            "turns_refused_queue_full": sum(s.refused_queue_full for s in stats),
            "refused_over_share": sum(s.refused_share for s in stats),
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
            "fairness": fair,
        }
    finally:
        if service is not None:
            service.stop()
        if tmp is not None:
            tmp.cleanup()
