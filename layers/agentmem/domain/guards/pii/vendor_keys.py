"""Keys by a maintained rule set: detect-secrets' vendor formats (:mod:`.vendor_rules`, generated),
decided with context so benign strings pass.

A match counts when its value (the pattern's first group, else the match without the delimiters
some patterns take with it) looks made up: at least :data:`MIN_CHARS` long, letters *and* digits,
and a Shannon entropy of at least :data:`MIN_ENTROPY` bits per character, and no
documentation sample (``…EXAMPLE``). So a version string, a
product code, a UUID in a doc or a barcode (no letters, or too regular) stay, and ``AKIA…`` /
``SG.…`` / ``xoxb-…`` / ``…-us6`` keys go. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache

from agentmem.domain.guards.pii._text import Span
from agentmem.domain.guards.pii.vendor_rules import VENDOR_RULES

__all__ = ["MIN_CHARS", "MIN_ENTROPY", "entropy", "find_vendor_key", "looks_made_up"]

MIN_CHARS = 16
MIN_ENTROPY = 3.0
_DELIMITERS = " \t\r\n=:\"'"


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_made_up(value: str) -> bool:
    """Long enough, letters and digits, and varied enough to be a generated key; a documentation
    sample (``AKIAIOSFODNN7EXAMPLE``) is no key."""
    return (
        "example" not in value.lower()
        and len(value) >= MIN_CHARS
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= MIN_ENTROPY
    )


@cache
def _compiled() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, flags) for _, pattern, flags in VENDOR_RULES)


def find_vendor_key(text: str) -> Iterator[Span]:
    """Spans of vendor keys (detect-secrets' formats) whose value looks made up."""
    for pattern in _compiled():
        for match in pattern.finditer(text):
            if pattern.groups and match.group(1):
                start, end = match.span(1)
            else:
                start, end = match.span()
                while start < end and text[start] in _DELIMITERS:
                    start += 1
                while end > start and text[end - 1] in _DELIMITERS:
                    end -= 1
            if looks_made_up(text[start:end]):
                yield start, end
