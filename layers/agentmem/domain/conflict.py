"""Conflict judgement by rules (seed 000 §7.4): lean to "not a conflict"; a false supersede
destroys a true fact, a missed one only leaves two memories side by side."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agentmem.domain.keys import SINGLE_VALUED_KEYS
from agentmem.domain.models import Category, MemoryRecord
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import normalize

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
    is_update: bool


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
    if thresholds.conflict_low <= similarity < thresholds.dedup:
        if new.is_update and similarity >= thresholds.merge:
            return Judgement.SUPERSEDE
        if _negated(new.content) != _negated(old.content):
            return Judgement.SUPERSEDE
    return Judgement.KEEP_BOTH
