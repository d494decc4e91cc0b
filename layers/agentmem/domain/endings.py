"""How a statement ends an earlier fact without naming a new value of its attribute: a
retraction ("I stopped doing hot yoga") ends the nearest fact of the same topic; a correction ("I
meant 8pm") ends the statement it amends, said shortly before or in the same conversation, and
is stored as that statement with the new value in place. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentmem.domain.attribute_rules import DAYS, MONTHS
from agentmem.domain.attributes import is_multi_valued
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import MemoryRecord, Source
from agentmem.domain.reading import Reading, Stance, may_end, may_revise
from agentmem.domain.reading.cues import retraction_topic
from agentmem.domain.reading.stored import reading_of
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import terms

REVISION = 0.8  # the revision pair head's probability from which a statement revises one of its conversation
REVISION_PAIRS = 3  # how many of a conversation's statements the pair head is asked about, per fact
NEAREST = 3  # a retraction looks at the three most similar records (as the conflict rules do)
_SPEAKER_PREFIX = lazy_compile(r"^[^:：\n]{1,40}[:：]\s*")


@dataclass(frozen=True, slots=True)
class Said:
    """A new statement as the endings read it."""

    reading: Reading
    content: str
    at: datetime | None = None
    session_id: str | None = None
    message_id: str | None = None


_GENERIC_TERMS = frozenset(
    [
        "每天",
        "每周",
        "每月",
        "每年",
        "现在",
        "最近",
        "目前",
        "今天",
        "明天",
        "昨天",
        "上周",
        "下周",
        "上个",
        "下个",
        "这周",
        "这个",
        "那个",
        "一个",
        "已经",
        "早上",
        "晚上",
        "下午",
        "上午",
        "时候",
        "感觉",
        "觉得",
        "可能",
        "应该",
        "还是",
        "终于",
        "一下",
        "now",
        "new",
        "today",
        "week",
        "month",
        "year",
        "day",
        "time",
        "really",
        "just",
        "also",
        "still",
        "going",
        "get",
        "got",
        "make",
        "made",
        "thing",
        "things",
        "lot",
        "bit",
    ]
)


def shares_topic(a: str, b: str) -> bool:
    """Whether two facts share a topic term (numbers, speaker prefixes and generic words aside)."""

    def topical(text: str) -> set[str]:
        return {
            t for t in terms(_SPEAKER_PREFIX.sub("", text)) if not t.isdigit() and t not in _GENERIC_TERMS
        }

    ours, theirs = topical(a), topical(b)
    return bool(ours & theirs) or any(_same_term(x, y) for x in ours for y in theirs)


CORRECTION_WINDOW = timedelta(
    hours=2
)  # a correction amends what was said this long before it (or in its session)


def ended_by(
    fact: Said, ranked: Sequence[tuple[float, MemoryRecord]], thresholds: SimilarityThresholds
) -> MemoryRecord | None:
    """The earlier fact a retraction or a correction ends, when it names no new value the other
    paths could match: for a retraction, the nearest user fact of the same topic (a shared topic
    term and some similarity, or a close paraphrase) that is not multi-valued; for a correction,
    the newest user fact said within :data:`CORRECTION_WINDOW` before it (the statement it
    amends), preferring one that states a value of the same shape (a date, a number, a name)."""
    reading = fact.reading
    if reading.stance not in {Stance.RETRACTS, Stance.CORRECTS}:
        return None
    if reading.stance is Stance.RETRACTS:
        return _retracted(fact, ranked, thresholds)
    if reading.stance is not Stance.CORRECTS or fact.at is None:
        return None
    recent = [
        o
        for _, o in ranked
        if o.source is Source.USER
        and not o.pinned
        and o.valid_from is not None
        and o.valid_from < fact.at
        and (o.valid_from >= fact.at - CORRECTION_WINDOW or same_session(fact, o))
        and (fact.message_id is None or fact.message_id not in o.source_refs.message_ids)
        and may_end(reading, reading_of(o))
    ]
    if not recent:
        return None
    shape = _value_shape(fact.content)
    recent.sort(
        key=lambda o: (shape is not None and _value_shape(o.content) == shape, o.valid_from), reverse=True
    )
    return recent[0]


def _retracted(
    fact: Said, ranked: Sequence[tuple[float, MemoryRecord]], thresholds: SimilarityThresholds
) -> MemoryRecord | None:
    """The fact a retraction ends: among the nearest few user facts it may end, one of the same
    topic (a shared topic term, a word's other forms too: "smoking" / "smoke") with some
    similarity or with the retraction's topic terms found in it, or a close paraphrase. Nothing
    otherwise: a retraction that names its topic in other words ("I gave up coffee" of "three
    espressos a day") keeps both, the read path preferring the newer."""
    for sim, old in ranked[:NEAREST]:
        if not _may_retract(fact, old):
            continue
        shared = shares_topic(fact.content, old.content)
        close = shared and (sim >= thresholds.update_topic or contained(fact.content, old.content))
        if close or sim >= thresholds.update_alone:
            return old
    return None


def _may_retract(fact: Said, old: MemoryRecord) -> bool:
    if old.pinned or old.source is not Source.USER or not may_end(fact.reading, reading_of(old)):
        return False
    if fact.message_id is not None and fact.message_id in old.source_refs.message_ids:
        return False  # a statement of the same message is said with it, not before it
    return reading_of(old).stance is not Stance.RETRACTS  # an earlier retraction is history already


def revision_candidates(
    fact: Said, ranked: Sequence[tuple[float, MemoryRecord]], thresholds: SimilarityThresholds
) -> list[MemoryRecord]:
    """The statements of the same conversation that ``fact`` could give a new value to ("I want
    to leave on the 12th" after "a bus on the 6th, please"; "try Big 4" after "a table at Villa
    Romano"): the user's earlier facts of this session (:func:`may_revise`; not pinned, not
    multi-valued, not from the same message, not a duplicate), those stating a value of the same
    shape first, then the most similar. No floor of similarity: two requests of one task read
    alike to the embedder whatever their slot (a departure and a return date), so the learned
    head decides, over the first :data:`REVISION_PAIRS` of them. Whether one
    *is* revised is the learned revision pair head's call (the write path asks it); across
    conversations only the attribute tables and change words retire a fact."""
    if fact.at is None or fact.session_id is None or is_multi_valued(fact.content):
        return []
    shape = _value_shape(fact.content)
    eligible = [
        (sim, o)
        for sim, o in ranked
        if sim < thresholds.dedup
        and same_session(fact, o)
        and o.source is Source.USER
        and not o.pinned
        and o.valid_from is not None
        and o.valid_from < fact.at
        and (fact.message_id is None or fact.message_id not in o.source_refs.message_ids)
        and not is_multi_valued(o.content)
        and may_revise(fact.reading, reading_of(o))
    ]
    eligible.sort(
        key=lambda p: (shape is not None and _value_shape(p[1].content) == shape, p[0]), reverse=True
    )
    return [o for _, o in eligible]


def same_session(fact: Said, old: MemoryRecord) -> bool:
    return fact.session_id is not None and old.source_refs.session_id == fact.session_id


_WHEN = lazy_compile(
    rf"^(?:{MONTHS}|{DAYS}|\d+\w*|ago|last|since|year|month|week|today|yesterday|back)$", re.IGNORECASE
)


def _same_term(a: str, b: str) -> bool:
    """Two stemmed terms of one word ("smok" / "smoke"): equal, or one a prefix of the other of
    at least four letters."""
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def contained(retraction: str, old: str) -> bool:
    """Whether at least two thirds of what a retraction is about (its terms, the retraction's
    own markers and its time words aside) are terms of ``old``: "I stopped doing hot yoga" of "I
    do hot yoga at …", "I quit smoking in March" of "I smoke five a day"."""
    about = {t for t in terms(retraction_topic(retraction)) if not _WHEN.match(t)}
    olds = terms(old)
    found = sum(1 for t in about if any(_same_term(t, o) for o in olds))
    return bool(about) and found * 3 >= 2 * len(about)


_SHAPES = (
    (
        "date",
        lazy_compile(
            r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b\d{1,2}(?:st|nd|rd|th)\b|周[一二三四五六日天]|星期|礼拜|\d+[号日]|[上下]周",
            re.IGNORECASE,
        ),
    ),
    (
        "time",
        lazy_compile(
            r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\d{1,2}:\d{2}|[零一二三四五六七八九十\d]+点", re.IGNORECASE
        ),
    ),
    ("number", lazy_compile(r"\d[\d,.]*\d|\d|[一二两三四五六七八九十百千万]+(?:岁|块|元|公斤|斤|万|千)")),
    # a name (not the clause's first word): "I meant Lyon, not Lille", "his name is Darren"
    ("name", lazy_compile(r"(?<!^)(?<![.!?:：]\s)(?<!^\w)\b(?-i:(?!I\b)[A-Z][a-z]+(?:\s[A-Z][a-z]+)*)\b")),
)


def amended(correction: str, old: str) -> str | None:
    """``old`` with the value a correction gives put in place of its own, where both state one
    value of the same shape (a date, a time, a number): "The dinner is at 7pm" corrected by "I
    meant 8pm" is "The dinner is at 8pm". None when the shapes do not meet."""
    for _, pattern in _SHAPES:
        olds = [m for m in pattern.finditer(old)]
        news = [m.group(0) for m in pattern.finditer(correction) if m.group(0) not in old]
        if len(olds) == 1 and news:
            return old[: olds[0].start()] + news[0] + old[olds[0].end() :]
    return None


def _value_shape(text: str) -> str | None:
    for name, pattern in _SHAPES:
        if pattern.search(text):
            return name
    return None
