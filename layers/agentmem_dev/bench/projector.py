"""``agentmem bench projector``: stream records per second into the embedded projections.

``n`` synthetic memories (hash-embedded, one entity each, spread over a few users and sessions)
are written to the source of truth in batches, which puts ``n`` INSERT rows on the change stream
(the SQLite outbox); then :meth:`LocalRunner.pump_stream` runs until the stream is drained: each
batch becomes a DynamoDB Streams event for the real projector λ, which upserts the search index
and the graph and adds FOLLOWS / SIMILAR_TO / BELONGS_TO edges.

Named baseline: the same records applied through :meth:`Projector.apply` directly (no stream
read, no event encoding, no λ envelope): the ratio is the cost of the Lambda-shaped plumbing.

Time on a 2-core machine: ~10 s for the default 2,000 records.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain import ids
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.ports import PROJECTOR_CHECKPOINT, Change, Put, StreamBacklog
from agentmem_dev.bench.common import (
    T0,
    TENANT,
    local_container,
    machine,
    ratio,
    say,
    synthetic_entities,
    synthetic_facts,
)
from agentmem_dev.emulator.runner import LocalRunner

DEFAULT_RECORDS = 2_000
USERS = 4
SESSION_SIZE = 20


def synthetic_records(count: int, embedder: HashEmbedder, *, seed: int = 17) -> list[MemoryRecord]:
    """``count`` memories over ``USERS`` scopes, in sessions of ``SESSION_SIZE``."""
    rng = random.Random(seed)
    texts = synthetic_facts(count, seed=seed)
    vectors = embedder.embed_documents(texts)
    out = []
    for number, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        at = T0 + timedelta(seconds=30 * number)
        scope = Scope(TENANT, f"projector-user-{number % USERS}")
        out.append(
            MemoryRecord(
                scope=scope,
                memory_id=ids.memory_id(at, f"projector:{number}"),
                content=text,
                category=rng.choice((Category.FACT, Category.EPISODIC, Category.PREFERENCE)),
                source_refs=SourceRefs(f"s{number // (SESSION_SIZE * USERS)}", (f"m{number}",)),
                embedding=tuple(float(x) for x in vector),
                embedding_model=embedder.model_id,
                created_at=at,
                updated_at=at,
                valid_from=at,
                entities=synthetic_entities(rng),
            )
        )
    return out


def _lag(container: Any) -> int | None:
    """The changes the projector has not read yet (the embedded outbox's backlog)."""
    feed = container.adapters.changes
    return feed.outbox_backlog(PROJECTOR_CHECKPOINT).waiting if isinstance(feed, StreamBacklog) else None


def _write(container: Any, records: Sequence[MemoryRecord]) -> None:
    for start in range(0, len(records), 500):
        container.store.transact([Put(r, None) for r in records[start : start + 500]])


def run(
    *,
    sizes: Sequence[int] | None = None,
    repetitions: int | None = None,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Records per second through the stream + projector λ, and through Projector.apply."""
    count = int(sizes[0]) if sizes else DEFAULT_RECORDS
    reps = max(1, repetitions or 1)
    embedder = HashEmbedder()
    records = synthetic_records(count, embedder)
    with local_container(embedder) as (container, _clock):  # warm-up: loads the projector λ
        _write(container, records[:20])
        while LocalRunner(container).pump_stream():
            pass
    stream_runs: list[dict[str, Any]] = []
    direct_runs: list[float] = []
    for rep in range(reps):
        say(progress, f"projector: {count} records through the stream (repetition {rep + 1}/{reps}) ...")
        with local_container(embedder) as (container, clock):
            clock.set(T0 + timedelta(days=1))
            _write(container, records)
            runner = LocalRunner(container)
            started = time.perf_counter()
            batches = 0
            while runner.pump_stream():
                batches += 1
            seconds = time.perf_counter() - started
            stream_runs.append(
                {
                    "seconds": seconds,
                    "batches": batches,
                    "failures": runner.stats.stream_failures,
                    "lag_after": _lag(container),
                }
            )
        say(progress, f"projector: {count} records through Projector.apply (baseline) ...")
        with local_container(embedder) as (container, clock):
            clock.set(T0 + timedelta(days=1))
            _write(container, records)
            now = clock.now()
            started = time.perf_counter()
            for record in records:
                container.projector.apply(
                    Change("INSERT", record.scope, record.memory_id, record, None), now=now
                )
            direct_runs.append(time.perf_counter() - started)
    best = min(stream_runs, key=lambda r: r["seconds"])
    direct = min(direct_runs)
    rate = count / best["seconds"] if best["seconds"] else None
    base_rate = count / direct if direct else None
    return {
        "benchmark": "projector",
        "records": count,
        "seconds": round(best["seconds"], 3),
        "records_per_second": round(rate, 1) if rate else None,
        "stream_batches": best["batches"],
        "failures": best["failures"],
        "lag_after": best["lag_after"],
        "baseline": {
            "name": "Projector.apply directly (no stream read, event encoding or λ envelope)",
            "seconds": round(direct, 3),
            "records_per_second": round(base_rate, 1) if base_rate else None,
        },
        "ratio_records_per_second_vs_baseline": ratio(rate, base_rate),
        "machine": machine(),
        "settings": {
            "records": count,
            "users": USERS,
            "embedder": embedder.model_id,
            "stream_batch": 100,
            "reported": "best of the repetitions",
        },
        "repetitions": reps,
    }
