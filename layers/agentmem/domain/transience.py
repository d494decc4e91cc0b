"""Short-term facts (docs/memory-lifecycle.md "Short-term memories"): a state that
holds only for a near time the sentence names — "I'm at the airport right now", "I'm working from
home today", "这周我在上海出差", "今天有点头疼" — is written to the short-term layer, expiring when
that time ends; consolidation marks it ``expired`` then (``domain/consolidation.py``).

A fact is short-term when it has all three:
- a near-time marker of the present: today, tonight, this morning/afternoon/evening, right now,
  at the moment, this week/weekend, for the next few days ("currently", "these days" are not: they
  mark a durable present, "I'm currently reading Dune"), 今天, 今晚, 今早, 现在, 这会儿, 这周, 本周,
  这几天, 这两天, 周末;
- a present state or plan of the speaker: a present-tense or progressive verb (I'm, I am, I have,
  I feel, I'll be, I'm …ing; 在, 正在, 有点, 要, 得), not a past event ("Today I went to the fair"
  stays: it happened, and stays true);
- no durable attribute: a fact that states where the user lives or works, a hobby, a pet …
  (:func:`~agentmem.domain.attributes.infer_all`) is long-term even when said today ("I moved to
  Berlin today").
Pure.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from agentmem.domain.attributes import infer_all
from agentmem.domain.lazy_re import LazyPattern, lazy_compile
from agentmem.domain.text import language

__all__ = ["short_term_until"]


def _r(pattern: str) -> LazyPattern:
    return lazy_compile(pattern, re.IGNORECASE)


# (marker, how long the state it names lasts from the moment it is said)
_MARKERS: tuple[tuple[LazyPattern, timedelta], ...] = (
    (_r(r"\b(?:right now|at the moment|just now)\b|现在|这会儿|此刻"), timedelta(hours=12)),
    (
        _r(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b|今天|今晚|今早|今天上午|今天下午|今儿"),
        timedelta(days=1),
    ),
    (
        _r(
            r"\b(?:this week|this weekend|for the next (?:few|couple of) days)\b|这周|本周|这几天|这两天|这个周末|周末"
        ),
        timedelta(days=7),
    ),
)
_PRESENT_EN = _r(
    r"\b(?:i'?m|i am|i have|i've got|i feel|i'll be|i will be|we'?re|we are|we have|my \w+ (?:is|are))\b"
    r"(?!\s+(?:been|lived|worked)\b)"
)
_PAST_EN = _r(r"\b(?:went|was|were|had|did|saw|met|visited|finished|got back|bought|made|moved|started)\b")
_PRESENT_ZH = lazy_compile(
    r"正在|在(?!过)|有点|有些|要|得|还在|感觉|觉得|不太舒服|头疼|出差|加班|请假|休假|值班"
)
_PAST_ZH = lazy_compile(r"了(?![解])|过(?!敏)")


def short_term_until(text: str, at: datetime) -> datetime | None:
    """When the short-term state ``text`` states ends (said at ``at``), or None for a long-term
    fact (see the module docstring)."""
    lasting = [span for marker, span in _MARKERS if marker.search(text)]
    if not lasting:
        return None
    if language(text) == "zh":
        if not _PRESENT_ZH.search(text) or _PAST_ZH.search(text):
            return None
    elif not _PRESENT_EN.search(text) or _PAST_EN.search(text):
        return None
    if any(a.value or not a.single for a in infer_all(text)):
        return None  # a durable attribute said today is still durable
    return at + max(lasting)
