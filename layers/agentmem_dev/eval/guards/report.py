"""The evaluator's table (``area | tried | got through``, as in the guards issue), the per-case
failures for ``--verbose``, and the fold of ``--json`` output into ``reports/eval.json`` and
``reports/eval.md`` that ``make eval`` runs after the other evals have written them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentmem_dev.eval.guards.corpus import AREAS

LABELS: dict[str, str] = {
    "pii": "PII that should be redacted",
    "false_positive": "benign values wrongly redacted",
    "injection_turn": "injection on the turn path: stored / reached `/v1/context`",
    "injection_memory": "injection via `POST /v1/memories` (and MCP) accepted",
    "side_channel": "side channels (session state, `speaker`, tags, policy, PATCH, MCP)",
    "benign_turn": "benign look-alikes of orders quarantined or held (false positives)",
    "erase": "erase that brought data back",
    "bad_input": "bad input answered with a 5xx or no answer",
    "fairness": "denial of service / fairness",
    "isolation": "isolation (every route, MCP, odd headers, forged cursors)",
}


def _through(area: str, summary: dict[str, Any]) -> str:
    if area == "injection_turn":
        measures = summary["measures"]
        return f"{measures['stored']['through']} / {measures['context']['through']}"
    return str(summary["through"])


def table(report: dict[str, Any]) -> list[str]:
    """The Markdown table of every area the report has."""
    lines = ["| area | tried | got through |", "|---|---|---|"]
    for area in AREAS:
        summary = report["areas"].get(area)
        if summary:
            note = f" ({len(summary['inconclusive'])} inconclusive)" if summary["inconclusive"] else ""
            lines.append(f"| {LABELS[area]} | {summary['tried']} | {_through(area, summary)}{note} |")
    return lines


def breakdown(report: dict[str, Any]) -> list[str]:
    """Per area, what got through by class and by language (``class tried/through``), only the
    classes and languages where something got through, and the directive head's held-out figures."""
    lines: list[str] = []
    for area in AREAS:
        summary = report["areas"].get(area)
        if not summary or "by_class" not in summary:
            continue
        for key in ("by_class", "by_language"):
            rows = summary[key]
            hit = [f"{name} {row[1]}/{row[0]}" for name, row in rows.items() if row[1]]
            total = f"{len(rows)} {key.removeprefix('by_').replace('language', 'languages').replace('class', 'classes')}"
            lines.append(f"- {area} {key.replace('_', ' ')} ({total}): " + (", ".join(hit) or "none through"))
    head = report.get("directive_head")
    if head:
        lines.append(
            "- directive head, held-out file ({n:.0f} texts): accuracy {accuracy}, to_assistant recall "
            "{to_assistant_recall}, to_others recall {to_others_recall}, benign false positives "
            "{benign_false_positive}".format(**head)
        )
    return lines


def render(report: dict[str, Any], *, verbose: bool = False) -> str:
    out = ["guard eval", "----------", *table(report), ""]
    langs = ", ".join(f"{k} {v}" for k, v in report.get("by_language", {}).items())
    out.append(f"{report['cases']} cases ({langs}) in {report['seconds']} s against {report.get('server')}")
    out += breakdown(report)
    for detail in report["details"]:
        if detail["area"] == "fairness":
            out.append(f"fairness {detail['id']}: {json.dumps(detail['figures'], ensure_ascii=False)}")
    if verbose:
        out.append("")
        for detail in report["details"]:
            if detail["hits"] or detail["inconclusive"]:
                tag = "/".join(detail["hits"]) or "inconclusive"
                out.append(
                    f"THROUGH {detail['id']} [{detail['area']} {detail['lang']}] {tag}: {detail['detail']}"
                )
    else:
        for area in AREAS:
            summary = report["areas"].get(area)
            if summary and summary["ids"]:
                shown = ", ".join(summary["ids"][:12]) + (" ..." if len(summary["ids"]) > 12 else "")
                out.append(f"{area}: {shown}")
    return "\n".join(out)


def markdown(report: dict[str, Any]) -> str:
    """The section ``make eval`` appends to ``reports/eval.md``."""
    return "\n".join(
        [
            "## Guards (attack corpus against a live local server)",
            "",
            *table(report),
            "",
            *breakdown(report),
            "",
            f"{report['cases']} cases in {report['seconds']} s; ids that got through are in "
            "`reports/eval.json` under `guards`.",
            "",
        ]
    )


def fold(args: Sequence[str] | None = None) -> int:
    """``python -m agentmem_dev.eval.guards fold --guards FILE --json-out FILE --md-out FILE``:
    add the guard report (``agentmem eval guards --json``) to the combined eval report and its
    Markdown. A missing or empty guard file is recorded as absent."""
    from agentmem_dev.eval.locomo import read_report

    parser = argparse.ArgumentParser(prog="python -m agentmem_dev.eval.guards fold")
    parser.add_argument("--guards", required=True)
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--md-out", required=True)
    ns = parser.parse_args(args)
    source, json_out, md_out = Path(ns.guards), Path(ns.json_out), Path(ns.md_out)
    guards = (
        read_report(source.read_text(encoding="utf-8"))
        if source.is_file() and source.stat().st_size
        else None
    )
    combined: dict[str, Any] = json.loads(json_out.read_text(encoding="utf-8")) if json_out.is_file() else {}
    combined["guards"] = guards
    json_out.write_text(json.dumps(combined, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    text = md_out.read_text(encoding="utf-8") if md_out.is_file() else "# agentmem evaluation\n\n"
    section = markdown(guards) if guards else "## Guards\n\n(absent)\n"
    md_out.write_text(text.rstrip("\n") + "\n\n" + section, encoding="utf-8")
    print(section)
    return 0
