"""The code's docs live in the repository: no docstring, comment or message under ``layers/``
points a reader at a document outside it (the design notes, the seed write-ups, issue numbers of
a tracker the repository does not carry), and every pointer into ``docs/`` names a page that
exists and, where it quotes a section, a heading of that page."""

from __future__ import annotations

import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "layers"

OUTSIDE = {
    "a seed write-up": re.compile(r"\bseeds?\s+0\d\d\b|\bseeds'", re.IGNORECASE),
    "the design notes": re.compile(r"\bDESIGN\b|DESIGN\.md"),
    "an issue number": re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE),
    "the workspace": re.compile(r"in the workspace|shared/(?:DESIGN|STYLE|seeds|reviews)|/work/shared"),
    "a section sign": re.compile(r"(?<!\d)\s*§"),
}
POINTER = re.compile(r"docs/([\w/-]+\.md)(?:\s+\"([^\"]+)\")?")


def sources() -> list[Path]:
    return sorted(p for p in LAYERS.rglob("*.py") if ".egg-info" not in p.parts)


@cache
def prose(path: Path) -> list[tuple[int, str]]:
    """The comments and string literals of a module, whitespace folded, with their line."""
    out = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            out.append((token.start[0], " ".join(token.string.split())))
    return out


def outside_references(text: str) -> list[str]:
    found = []
    for what, pattern in OUTSIDE.items():
        for match in pattern.finditer(text):
            if what == "a section sign" and re.search(r"RFC \d+\s*$", text[: match.start()]):
                continue  # a public standard's section (RFC 9110 §10.2.3), not a project document
            found.append(what)
    return found


def test_the_patterns_catch_what_they_should() -> None:
    assert outside_references("Rule classification (seed 000 §4.4): rules first") == [
        "a seed write-up",
        "a section sign",
    ]
    assert outside_references("validated at start-up (DESIGN §8.4)")[0] == "the design notes"
    assert outside_references("One guard for every entrance (issue 9)") == ["an issue number"]
    assert outside_references("the seeds' thresholds") == ["a seed write-up"]
    assert outside_references("an HTTP date (RFC 9110 §10.2.3)") == []
    assert outside_references("a TOTP seed in base32, docs/guards.md") == []


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(LAYERS)))
def test_no_docstring_cites_a_document_outside_the_repository(path: Path) -> None:
    bad = [(line, what, text[:100]) for line, text in prose(path) for what in outside_references(text)]
    assert bad == []


def headings(page: Path) -> list[str]:
    return [
        line.lstrip("#").strip()
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]


def test_every_pointer_into_docs_names_a_page_and_a_heading_that_exist() -> None:
    broken = []
    seen = 0
    for path in sources():
        for line, text in prose(path):
            for match in POINTER.finditer(text):
                seen += 1
                page = ROOT / "docs" / match.group(1)
                where = f"{path.relative_to(LAYERS)}:{line}"
                if not page.is_file():
                    broken.append((where, match.group(1)))
                elif match.group(2) and not any(h.startswith(match.group(2)) for h in headings(page)):
                    broken.append((where, f'{match.group(1)} "{match.group(2)}"'))
    assert seen > 20  # the pointers are found at all
    assert broken == []
