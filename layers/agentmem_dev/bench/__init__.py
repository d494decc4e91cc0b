"""Benchmarks (``agentmem bench <name>``, ``make bench``): one module per benchmark, each a
``run(**options) -> dict`` that reports its machine, settings, repetitions and, where one
exists, a named baseline measured in the same run with the ratio to it (absolute times drift on
shared machines; ratios travel better).

- ``recall``: context-assembly latency in-process and over loopback HTTP at growing store sizes;
- ``ingest``: turns per second through the write path, embedder time apart;
- ``projector``: stream records per second into the embedded projections;
- ``cold-start``: handler import times and the dependency footprint;
- ``cost``: LLM calls, tokens and embedding calls per turn and per context request;
- ``load``: concurrent clients against the local server, then every accepted turn accounted for,
  then a quiet user's context latency alone and under one user's flood of long queries;
- ``soak``: a steady load past short retention horizons: data-dir growth per 1,000 turns before
  and after them (bounded?) and the server's RSS per minute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentmem_dev.bench.common import machine, say

BENCHMARKS = ("recall", "ingest", "projector", "cold-start", "cost", "load", "soak")


def _runner(name: str) -> Callable[..., dict[str, Any]]:
    if name == "recall":
        from agentmem_dev.bench import recall

        return recall.run
    if name == "ingest":
        from agentmem_dev.bench import ingest

        return ingest.run
    if name == "projector":
        from agentmem_dev.bench import projector

        return projector.run
    if name == "cold-start":
        from agentmem_dev.bench import cold_start

        return cold_start.run
    if name == "cost":
        from agentmem_dev.bench import cost

        return cost.run
    if name == "load":
        from agentmem_dev.bench import load

        return load.run
    if name == "soak":
        from agentmem_dev.bench import soak

        return soak.run
    raise ValueError(f"unknown benchmark {name!r}; expected one of {', '.join(BENCHMARKS)} or all")


def run_benchmark(name: str, **options: Any) -> dict[str, Any]:
    """Run one benchmark (or ``all``, each with its defaults plus ``progress``/``repetitions``
    when given) and return its report."""
    if name != "all":
        return _runner(name)(**options)
    shared = {k: v for k, v in options.items() if k == "progress"}
    started = time.perf_counter()
    results: dict[str, Any] = {}
    for bench in BENCHMARKS:
        t0 = time.perf_counter()
        results[bench] = _runner(bench)(**shared)
        results[bench]["wall_seconds"] = round(time.perf_counter() - t0, 1)
        say(bool(options.get("progress", True)), f"{bench}: done in {results[bench]['wall_seconds']} s")
    return {"benchmarks": results, "machine": machine(), "seconds": round(time.perf_counter() - started, 1)}


def render(name: str, result: dict[str, Any]) -> str:
    """Markdown tables of a report (one benchmark or ``all``)."""
    from agentmem_dev.bench.report import markdown

    if name == "all":
        return markdown(result)
    return markdown({"benchmarks": {name: result}, "machine": result.get("machine", {})})
