"""Runs the corpus against a live server, phase by phase, and counts what got through.

Phases: (1) the content areas' writes, one barrier, their reads; (2) erase plans, in parallel
(each waits on its own barriers); (3) bad input (slow-connection cases in the background
from the start); (4) isolation; (5) fairness, last, because a flooded queue slows everything
after it. Waits run in threads; the server does the CPU work.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from agentmem_dev.eval.guards import content, erase, isolation, robustness
from agentmem_dev.eval.guards.client import Api, barrier, local_server
from agentmem_dev.eval.guards.corpus import AREAS, MEASURES, Outcome, load_corpus

CONTENT_AREAS = ("pii", "false_positive", "benign_turn", "injection_turn", "injection_memory", "side_channel")
WORKERS = 4

T = TypeVar("T")


class _Progress:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.perf_counter()

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.perf_counter() - self.started
            print(f"[eval guards {elapsed:6.1f}s] {message}", file=sys.stderr, flush=True)


def _parallel(items: Sequence[T], work: Callable[[T], Any], workers: int = WORKERS) -> list[Any]:
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items) or 1))) as pool:
        return list(pool.map(work, items))


def _scope(base: Api, run: str, case: dict[str, Any]) -> Api:
    return base.as_(f"g{run}-{case['area'].replace('_', '-')}", str(case["id"]))


def run_cases(base: Api, cases: Sequence[dict[str, Any]], *, progress: bool = True) -> dict[str, Any]:
    """Run ``cases`` against the server at ``base`` and summarise them (see :func:`summarise`)."""
    say = _Progress(progress)
    run = uuid.uuid4().hex[:6]
    by_area: dict[str, list[dict[str, Any]]] = {area: [] for area in AREAS}
    for case in cases:
        by_area[case["area"]].append(case)
    outcomes: list[Outcome] = []
    phases: dict[str, float] = {}
    started = time.perf_counter()

    slow_cases = [c for c in by_area["bad_input"] if "slow" in c["request"]]
    background = ThreadPoolExecutor(max_workers=max(1, len(slow_cases)))
    slow_futures: list[Future[Outcome]] = [
        background.submit(robustness.run_bad_input, base.as_(f"g{run}-bad", "u"), c) for c in slow_cases
    ]

    content_cases = [c for area in CONTENT_AREAS for c in by_area[area]]
    if content_cases:
        say(f"content areas: writing {len(content_cases)} cases")
        written = _parallel(content_cases, lambda c: content.submit(_scope(base, run, c), c))
        say("content areas: waiting for ingest and projection")
        if not barrier(base, f"content-{run}"):
            say("content areas: the barrier timed out; reading what is there")
        say(f"content areas: reading back {len(content_cases)} cases")
        outcomes += _parallel(
            list(zip(content_cases, written, strict=True)),
            lambda pair: content.judge(_scope(base, run, pair[0]), pair[0], pair[1]),
        )
        phases["content"] = time.perf_counter() - started

    if by_area["erase"]:
        mark = time.perf_counter()
        say(f"erase: {len(by_area['erase'])} plans")
        filler = base.as_(f"g{run}-filler", "f")
        outcomes += _parallel(
            by_area["erase"], lambda c: erase.run_case(_scope(base, run, c), filler, c), workers=16
        )
        phases["erase"] = time.perf_counter() - mark

    fast_bad = [c for c in by_area["bad_input"] if "slow" not in c["request"]]
    if fast_bad:
        mark = time.perf_counter()
        say(f"bad input: {len(fast_bad)} requests")
        outcomes += _parallel(fast_bad, lambda c: robustness.run_bad_input(_scope(base, run, c), c))
        phases["bad_input"] = time.perf_counter() - mark

    if by_area["isolation"]:
        mark = time.perf_counter()
        say(f"isolation: {len(by_area['isolation'])} attacks")
        outcomes += isolation.run(base, by_area["isolation"], base.as_(f"g{run}-victim", "alice"))
        phases["isolation"] = time.perf_counter() - mark

    if by_area["fairness"]:
        mark = time.perf_counter()
        ordered = sorted(by_area["fairness"], key=lambda c: c["kind"] == "queue_flood")
        for case in ordered:
            say(f"fairness: {case['id']} ({case['kind']})")
            outcomes.append(robustness.run_fairness(base, case, f"g{run}-fair"))
        phases["fairness"] = time.perf_counter() - mark

    if slow_futures:
        say(f"bad input: waiting for {len(slow_futures)} slow connections")
        outcomes += [f.result() for f in slow_futures]
    background.shutdown(wait=True)
    order = {c["id"]: i for i, c in enumerate(cases)}
    outcomes.sort(key=lambda o: order.get(o.case_id, 0))
    return summarise(cases, outcomes, time.perf_counter() - started, phases)


def summarise(
    cases: Sequence[dict[str, Any]], outcomes: Sequence[Outcome], seconds: float, phases: dict[str, float]
) -> dict[str, Any]:
    """Per area: ``tried``, ``through`` (the area's first measure), ``ids`` of those, every
    measure's count and ids, the ``inconclusive`` ids; per case the details of every case that
    got through or carries figures."""
    areas: dict[str, Any] = {}
    for area in AREAS:
        mine = [o for o in outcomes if o.area == area]
        if not mine:
            continue
        measures = {
            name: {"through": len(ids), "ids": ids}
            for name in MEASURES[area]
            for ids in [[o.case_id for o in mine if name in o.hits]]
        }
        first = MEASURES[area][0]
        areas[area] = {
            "by_class": _through_by(mine, cases, "class", first),
            "by_language": _through_by(mine, cases, "lang", first),
            "tried": len(mine),
            "through": measures[first]["through"],
            "ids": measures[first]["ids"],
            "measures": measures,
            "inconclusive": [o.case_id for o in mine if o.inconclusive],
        }
    from agentmem.adapters.guard_heads import load_directive_head

    head = load_directive_head()
    return {
        "areas": areas,
        "directive_head": head.held_out if head else None,
        "cases": len(outcomes),
        "by_language": dict(sorted(Counter(str(c.get("lang", "?")) for c in cases).items())),
        "seconds": round(seconds, 1),
        "phases": {k: round(v, 1) for k, v in phases.items()},
        "details": [
            {
                "id": o.case_id,
                "area": o.area,
                "lang": o.lang,
                "hits": sorted(o.hits),
                "detail": o.detail,
                "inconclusive": o.inconclusive,
                "figures": o.figures,
            }
            for o in outcomes
            if o.hits or o.inconclusive or o.area == "fairness"
        ],
    }


def _through_by(
    outcomes: Sequence[Outcome], cases: Sequence[dict[str, Any]], key: str, measure: str
) -> dict[str, list[int]]:
    """Per value of a case field (``class``, ``lang``): ``[tried, got through]`` on ``measure``."""
    field = {str(c["id"]): str(c.get(key, "?")) for c in cases}
    out: dict[str, list[int]] = {}
    for o in outcomes:
        row = out.setdefault(field.get(o.case_id, "?"), [0, 0])
        row[0] += 1
        row[1] += measure in o.hits
    return dict(sorted(out.items()))


def run_guard_eval(
    data: Path | None = None,
    *,
    areas: Sequence[str] | None = None,
    server_url: str | None = None,
    embedder: str | None = None,
    token: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Load the corpus (default: the bundled one), run it against ``server_url`` or a fresh
    local server (raises ``ServerDidNotStart`` when it cannot start) and summarise."""
    cases = load_corpus(data, areas)
    say = _Progress(progress)
    if server_url:
        report = run_cases(Api(server_url.rstrip("/"), token=token), cases, progress=progress)
        report["server"] = server_url
        return report
    say("starting agentmem serve on a free loopback port ...")
    with local_server(embedder=embedder) as url:
        report = run_cases(Api(url), cases, progress=progress)
    report["server"] = "local (fresh temporary data dir)"
    return report
