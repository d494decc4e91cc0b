"""Conflict judgement by rules (seed 000 §7.4): lean to "not a conflict"; a false supersede
destroys a true fact, a missed one only leaves two memories side by side."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agentmem.domain.keys import SINGLE_VALUED_KEYS
from agentmem.domain.models import Category, MemoryRecord
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import normalize, terms

CONFLICT_CATEGORIES = frozenset({Category.IDENTITY, Category.PREFERENCE, Category.FACT, Category.POLICY})
_NEGATION = re.compile(r"不|没|别|非|无|\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|won't|can't|no longer)\b", re.IGNORECASE)


class Judgement(StrEnum):
    DUPLICATE = "duplicate"  # reinforce the existing memory
    SUPERSEDE = "supersede"  # the new fact replaces the old one
    KEEP_BOTH = "keep_both"


@dataclass(frozen=True, slots=True)
class NewFact:
    content: str
    category: Category
    key: str | None
    value: str | None
    update_strength: int = 0  # 2 explicit change, 1 present-tense cue, 0 none


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def judge(new: NewFact, old: MemoryRecord, similarity: float, thresholds: SimilarityThresholds) -> Judgement:
    """Decide how ``new`` relates to ``old`` given their calibrated similarity."""
    if new.key and old.key == new.key:
        same_value = normalize(new.value or "") == normalize(old.value or "")
        if same_value:
            return Judgement.DUPLICATE
        if new.key in SINGLE_VALUED_KEYS:
            return Judgement.SUPERSEDE
    if normalize(new.content) == normalize(old.content) or similarity >= thresholds.dedup:
        return Judgement.DUPLICATE
    if new.category not in CONFLICT_CATEGORIES or old.category is not new.category:
        return Judgement.KEEP_BOTH
    if thresholds.conflict_low <= similarity < thresholds.dedup and _negated(new.content) != _negated(old.content):
        return Judgement.SUPERSEDE
    return Judgement.KEEP_BOTH


def judge_update(new: NewFact, old: MemoryRecord, similarity: float, thresholds: SimilarityThresholds) -> bool:
    """Does an update-marked fact replace ``old``? Explicit change + same topic (a shared topic
    term and some similarity) or a close paraphrase; a present-tense cue needs both."""
    if new.update_strength == 0 or old.pinned:
        return False
    shared = shares_topic(new.content, old.content)
    if new.update_strength >= 2:
        return (shared and similarity >= thresholds.update_topic) or similarity >= thresholds.update_alone
    return shared and similarity >= thresholds.update_alone


_SPEAKER_PREFIX = re.compile(r"^[^:：\n]{1,40}[:：]\s*")
_GENERIC_TERMS = frozenset(
    """每天 每周 每月 每年 现在 最近 目前 今天 明天 昨天 上周 下周 上个 下个 这周 这个 那个 一个 已经 早上 晚上
    下午 上午 时候 感觉 觉得 可能 应该 还是 终于 一下 now new today week month year day time really just also
    still going get got make made thing things lot bit""".split()
)


def shares_topic(a: str, b: str) -> bool:
    """Whether two facts share a topic term (numbers, speaker prefixes and generic words aside)."""
    def topical(text: str) -> set[str]:
        return {t for t in terms(_SPEAKER_PREFIX.sub("", text)) if not t.isdigit() and t not in _GENERIC_TERMS}

    return bool(topical(a) & topical(b))
