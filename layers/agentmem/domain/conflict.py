"""Conflict judgement by rules (seed 000 §7.4): lean to "not a conflict"; a false supersede
destroys a true fact, a missed one only leaves two memories side by side."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agentmem.domain.keys import MULTI_VALUED_KEYS, SINGLE_VALUED_KEYS
from agentmem.domain.models import Category, MemoryRecord
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import normalize, terms

CONFLICT_CATEGORIES = frozenset({Category.IDENTITY, Category.PREFERENCE, Category.FACT, Category.POLICY})
_NEGATION = re.compile(
    r"不|没|别|非|无|\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|won't|can't|no longer)\b",
    re.IGNORECASE,
)


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
    if thresholds.conflict_low <= similarity < thresholds.dedup and _negated(new.content) != _negated(
        old.content
    ):
        return Judgement.SUPERSEDE
    return Judgement.KEEP_BOTH


def judge_update(
    new: NewFact, old: MemoryRecord, similarity: float, thresholds: SimilarityThresholds
) -> bool:
    """Does an update-marked fact replace ``old``? Explicit change + same topic (a shared topic
    term and some similarity) or a close paraphrase; a present-tense cue needs both."""
    if new.update_strength == 0 or old.pinned:
        return False
    if new.category is Category.EPISODIC and old.category is Category.EPISODIC:
        return False  # episodes coexist (seed 000 §7.4)
    if new.key in MULTI_VALUED_KEYS or old.key in MULTI_VALUED_KEYS:
        return False  # a second allergy adds, it does not replace
    if new.key and old.key and new.key != old.key:
        return False  # different attributes (occupation vs manager)
    new_subject, old_subject = subject_of(new.content), subject_of(old.content)
    if new_subject and old_subject and new_subject != old_subject:
        return False  # "my sister lives in X" is not replaced by "I moved to X"
    shared = shares_topic(new.content, old.content)
    if new.update_strength >= 2:
        return (shared and similarity >= thresholds.update_topic) or similarity >= thresholds.update_alone
    return shared and similarity >= thresholds.update_alone


_SPEAKER_PREFIX = re.compile(r"^[^:：\n]{1,40}[:：]\s*")
_RELATION_EN = re.compile(
    r"^(?:my|our)\s+(?:new\s+|old\s+|current\s+|younger\s+|older\s+|little\s+|big\s+)?"
    r"(sister|brother|son|daughter|wife|husband|partner|girlfriend|boyfriend|mom|mum|mother|dad|father|friend|"
    r"boss|manager|colleague|coworker|kids?|children|parents?|grand\w+|aunt|uncle|cousin|neighbou?r|roommate|"
    r"dog|cat|team|company)\b",
    re.IGNORECASE,
)
_SELF_EN = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|me|we|we're|we've|our)\b", re.IGNORECASE)
_RELATION_ZH = re.compile(
    r"^我(?:的|们的|们|家的?)?(?:新|老)?(女儿|儿子|老婆|老公|妻子|丈夫|太太|先生|妈妈|爸爸|母亲|父亲|姐姐|妹妹|哥哥|弟弟|"
    r"朋友|同事|老板|领导|上司|经理|孩子|爷爷|奶奶|外公|外婆|猫|狗|室友|邻居|团队|公司)"
)


def subject_of(text: str) -> str | None:
    """Who a fact is about: "self", a relation ("sister", "女儿"), or None when unclear."""
    body = _SPEAKER_PREFIX.sub("", text).strip()
    for pattern in (_RELATION_EN, _RELATION_ZH):
        found = pattern.match(body)
        if found:
            return found.group(1).lower()
    if _SELF_EN.match(body) or body.startswith(("我", "咱")):
        return "self"
    return None


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

    return bool(topical(a) & topical(b))
