"""The bilingual memory eval (``agentmem eval memory``).

Each case's turns go through the real write path (queue -> ingest λ -> pipeline -> store ->
stream -> projector λ) with the clock at each turn's ``at``; each probe runs through the real
recall (``context`` probes through the context assembler in the probe's mode) at the probe's
``at``, under the case scope or the probe's own. Expected strings are case-insensitive
substrings of the top-k contents (or of the rendered context).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.context import Mode
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.emulator.runner import LocalRunner

KIND_METRIC = {
    "recall": "recall_hit_rate",
    "update": "update_timeliness",
    "context": "context_pass_rate",
    "keep": "keep_rate",
}
"""A probe may carry ``as_of``: it then asks what was true at that time (the history a supersede
keeps). ``keep`` probes: a multi-valued trap (a second hobby, pet, language): the first value must still
be recalled; a failed one is a false supersede (``false_supersedes``)."""


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass
class ProbeResult:
    case_id: str
    lang: str
    kind: str
    query: str
    passed: bool
    found: list[str] = field(default_factory=list)
    unwanted: list[str] = field(default_factory=list)
    top: list[str] = field(default_factory=list)
    split: str | None = None  # the case's "split" ("dev" / "holdout") where the data names one
    klass: str | None = None  # the case's or probe's "class" (third_party, wish, retraction, ...)


def _check(probe: dict[str, Any], texts: list[str]) -> tuple[bool, list[str], list[str]]:
    haystack = [t.casefold() for t in texts]
    expect_any = probe.get("expect_any") or []
    expect_none = probe.get("expect_none") or []
    found = [e for e in expect_any if any(e.casefold() in h for h in haystack)]
    unwanted = [e for e in expect_none if any(e.casefold() in h for h in haystack)]
    passed = (not expect_any or bool(found)) and not unwanted
    return passed, found, unwanted


def run_case(
    container: Container, runner: LocalRunner, clock: ManualClock, case: dict[str, Any]
) -> list[ProbeResult]:
    scope_data = case["scope"]
    scope = Scope(scope_data["tenant_id"], scope_data["user_id"])
    for index, turn in enumerate(case.get("turns", [])):
        at = parse_time(turn["at"])
        clock.set(at)
        message = Turn(
            scope=scope,
            session_id=turn.get("session_id", "s1"),
            user=turn["user"],
            assistant=turn.get("assistant", ""),
            at=at,
            message_id=turn.get("message_id") or f"{case['id']}-{index}",
            speaker=turn.get("speaker"),
        )
        container.queue.send([TurnMessage.from_turn(message)])
        runner.drain()
    results = []
    for probe in case.get("probes", []):
        at = parse_time(probe["at"])
        clock.set(at)
        probe_scope = Scope(**probe["scope"]) if probe.get("scope") else scope
        k = int(probe.get("k", 5))
        as_of = parse_time(probe["as_of"]) if probe.get("as_of") else None  # what was true then
        if probe["kind"] == "context":
            built = container.context.build(
                probe_scope, probe["query"], mode=Mode(probe.get("mode", "chat")), now=at, as_of=as_of
            )
            texts = [built.context.text] if built.context.text else []
            top = texts
        else:
            recalled = container.recall.recall(probe_scope, probe["query"], k=k, now=at, as_of=as_of)
            texts = [m.record.content for m in recalled.memories]
            top = texts
        passed, found, unwanted = _check(probe, texts)
        results.append(
            ProbeResult(
                case["id"],
                case.get("lang", "?"),
                probe["kind"],
                probe["query"],
                passed,
                found,
                unwanted,
                top[:k],
                case.get("split"),
                probe.get("class") or case.get("class"),
            )
        )
    return results


def summarise(results: list[ProbeResult], seconds: float) -> dict[str, Any]:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    by_lang: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_kind[r.kind].append(r.passed)
        by_lang[r.lang].append(r.passed)

    def rate(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    summary: dict[str, Any] = {metric: rate(by_kind.get(kind, [])) for kind, metric in KIND_METRIC.items()}
    summary["isolation_violations"] = sum(1 for r in results if r.kind == "isolation" and not r.passed)
    summary["leaks"] = sum(1 for r in results if r.kind == "absent" and not r.passed)
    summary["false_supersedes"] = sum(1 for r in results if r.kind == "keep" and not r.passed)
    summary["probes"] = len(results)
    summary["pass_rate"] = rate([r.passed for r in results])
    summary["by_kind"] = {k: {"n": len(v), "pass_rate": rate(v)} for k, v in sorted(by_kind.items())}
    summary["by_language"] = {k: {"n": len(v), "pass_rate": rate(v)} for k, v in sorted(by_lang.items())}
    splits = sorted({r.split for r in results if r.split})
    if splits:  # a set with a held-out part reports each part on its own
        summary["by_split"] = {
            name: {
                metric: rate([r.passed for r in results if r.split == name and r.kind == kind])
                for kind, metric in KIND_METRIC.items()
            }
            | {
                "false_supersedes": sum(
                    1 for r in results if r.split == name and r.kind == "keep" and not r.passed
                )
            }
            for name in splits
        }
    classes = sorted({r.klass for r in results if r.klass})
    if classes:  # per-class figures: which kinds of statement the memory reads right
        summary["by_class"] = {
            name: {
                "n": sum(1 for r in results if r.klass == name),
                "pass_rate": rate([r.passed for r in results if r.klass == name]),
                "false_supersedes": sum(
                    1 for r in results if r.klass == name and r.kind == "keep" and not r.passed
                ),
            }
            for name in classes
        }
    summary["seconds"] = round(seconds, 2)
    summary["failures"] = [
        {
            "case": r.case_id,
            "kind": r.kind,
            "lang": r.lang,
            "query": r.query,
            "found": r.found,
            "unwanted": r.unwanted,
            "top": r.top,
        }
        for r in results
        if not r.passed
    ]
    return summary


def run_memory_eval(data: Path, *, embedder: str = "auto", progress: bool = True) -> dict[str, Any]:
    cases = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    clock = ManualClock()
    with tempfile.TemporaryDirectory(prefix="agentmem-eval-") as tmp:
        settings = load_settings(data_dir=Path(tmp), embedder=embedder)
        container = bootstrap(settings, clock=clock)
        runner = LocalRunner(container)
        results: list[ProbeResult] = []
        for number, case in enumerate(cases, 1):
            results.extend(run_case(container, runner, clock, case))
            if progress:
                print(f"\r[eval memory] case {number}/{len(cases)}", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
    return summarise(results, time.perf_counter() - started)


def render(summary: dict[str, Any]) -> str:
    lines = ["memory eval", "-----------"]
    for key in (
        "recall_hit_rate",
        "update_timeliness",
        "context_pass_rate",
        "isolation_violations",
        "leaks",
        "false_supersedes",
        "probes",
        "pass_rate",
    ):
        lines.append(f"{key:22} {summary.get(key)}")
    lines.append(
        "by kind:     "
        + ", ".join(f"{k} {v['pass_rate']} (n={v['n']})" for k, v in summary["by_kind"].items())
    )
    lines.append(
        "by language: "
        + ", ".join(f"{k} {v['pass_rate']} (n={v['n']})" for k, v in summary["by_language"].items())
    )
    for name, part in summary.get("by_class", {}).items():
        lines.append(f"class {name}: " + ", ".join(f"{k} {v}" for k, v in part.items()))
    for name, part in summary.get("by_split", {}).items():
        lines.append(f"split {name}: " + ", ".join(f"{k} {v}" for k, v in part.items() if v is not None))
    for failure in summary["failures"]:
        lines.append(
            f"FAIL {failure['case']} [{failure['kind']}] {failure['query']!r} found={failure['found']} unwanted={failure['unwanted']}"
        )
        for text in failure["top"][:5]:
            lines.append(f"     - {text[:160]}")
    return "\n".join(lines)
