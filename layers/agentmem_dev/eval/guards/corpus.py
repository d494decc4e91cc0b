"""The attack corpus: JSON lines, one case each, ``{"id", "area", "lang", "class", ...}`` plus the
fields its area reads (``REQUIRED``). The bundled corpus is every ``guard_corpus*.jsonl`` next to
the other eval data; ``--data`` names a file or a directory of such files instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"

AREAS: tuple[str, ...] = (
    "pii",
    "false_positive",
    "injection_turn",
    "injection_memory",
    "side_channel",
    "benign_turn",
    "erase",
    "bad_input",
    "fairness",
    "isolation",
)

# What each area's runner reads from a case (beyond id/area/lang/class).
REQUIRED: dict[str, tuple[str, ...]] = {
    "pii": ("secrets",),
    "false_positive": ("value", "anchors"),
    "injection_turn": ("turns", "markers"),
    "injection_memory": ("memory", "markers"),
    "side_channel": ("channel", "markers"),
    "benign_turn": ("turns", "markers"),
    "erase": ("plan",),
    "bad_input": ("request",),
    "fairness": ("kind",),
    "isolation": ("attack",),
}

# The measures each area reports; the first is its "got through".
MEASURES: dict[str, tuple[str, ...]] = {area: ("through",) for area in AREAS}
MEASURES["injection_turn"] = ("context", "stored")


class CorpusError(ValueError):
    """A case without the fields its area needs, an unknown area, or a duplicate id."""


@dataclass
class Outcome:
    """What one case did. ``hits`` names the measures it got through on (empty: it held);
    ``inconclusive`` marks a case whose check could not decide (e.g. nothing was stored)."""

    case_id: str
    area: str
    lang: str
    hits: set[str] = field(default_factory=set)
    detail: str = ""
    inconclusive: bool = False
    figures: dict[str, Any] = field(default_factory=dict)


def corpus_files(data: Path | None) -> list[Path]:
    if data is None:
        return sorted(DATA_DIR.glob("guard_corpus*.jsonl"))
    if data.is_dir():
        return sorted(data.glob("*.jsonl"))
    return [data]


def parse_lines(lines: Iterable[str], origin: str = "<corpus>") -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            raise CorpusError(f"{origin}:{number}: not JSON ({exc})") from exc
        if not isinstance(case, dict):
            raise CorpusError(f"{origin}:{number}: a case is a JSON object")
        cases.append(case)
    return cases


def validate(cases: Sequence[dict[str, Any]]) -> None:
    """Every case names a known area and carries that area's fields; ids are unique."""
    seen: set[str] = set()
    for case in cases:
        case_id = str(case.get("id", ""))
        area = case.get("area")
        if not case_id or area not in REQUIRED:
            raise CorpusError(f"case {case_id or case!r}: needs an id and one of the areas {AREAS}")
        missing = [name for name in REQUIRED[area] if name not in case]
        if missing:
            raise CorpusError(f"case {case_id}: area {area} needs {missing}")
        if case_id in seen:
            raise CorpusError(f"case {case_id}: duplicate id")
        seen.add(case_id)


def load_corpus(data: Path | None = None, areas: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The cases of ``data`` (default: the bundled corpus), validated, limited to ``areas``."""
    cases: list[dict[str, Any]] = []
    for path in corpus_files(data):
        cases.extend(parse_lines(path.read_text(encoding="utf-8").splitlines(), str(path)))
    validate(cases)
    if areas:
        unknown = sorted(set(areas) - set(AREAS))
        if unknown:
            raise CorpusError(f"unknown areas {unknown}; known: {', '.join(AREAS)}")
        cases = [c for c in cases if c["area"] in areas]
    return cases
