"""Conflict judgement by rules (docs/design.md "Dedup, merge and conflicts"): lean to "not a conflict"; a false supersede
destroys a true fact, a missed one only leaves two memories side by side.

:func:`judge` and :func:`judge_update` compare one pair; :func:`rank` and :func:`decide` settle a
new fact against what is stored; :func:`is_doubtful` names the pairs the rules kept apart that a
model may still settle (the write path asks one at most three times a turn)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from agentmem.domain.attributes import infer_all, is_multi_valued, same_attribute_conflict
from agentmem.domain.endings import Said, ended_by, shares_topic
from agentmem.domain.keys import MULTI_VALUED_KEYS, SINGLE_VALUED_KEYS
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import Category, MemoryRecord
from agentmem.domain.reading import Reading, may_supersede
from agentmem.domain.reading.stored import reading_of, rules_reading
from agentmem.domain.similarity import Calibration, SimilarityThresholds
from agentmem.domain.text import normalize

CONFLICT_CATEGORIES = frozenset({Category.IDENTITY, Category.PREFERENCE, Category.FACT, Category.POLICY})
_NEGATION = lazy_compile(
    r"不|没|别|非|无|\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|won't|can't|no longer)\b",
    re.IGNORECASE,
)


class Judgement(StrEnum):
    DUPLICATE = "duplicate"  # reinforce the existing memory
    SUPERSEDE = "supersede"  # the new fact replaces the old one
    REVISE = "revise"  # the new fact gives another value to a statement of its conversation (a supersede)
    KEEP_BOTH = "keep_both"


@dataclass(frozen=True, slots=True)
class NewFact:
    content: str
    category: Category
    key: str | None
    value: str | None
    update_strength: int = 0  # 2 explicit change, 1 present-tense cue, 0 none
    user_stated: bool = True  # only what the user said replaces by attribute (not an inferred reply)
    message_id: str | None = None  # the turn it comes from: facts of one turn never replace each other
    reading: Reading | None = None  # the statement reader's reading: None reads the content by rules
    at: datetime | None = None  # when it was said (a correction amends what was said shortly before)
    session_id: str | None = None  # the conversation it was said in
    topical: Mapping[str, float] | None = (
        None  # a retraction's topic's similarity to each record (endings.Said)
    )

    @property
    def read(self) -> Reading:
        return self.reading if self.reading is not None else rules_reading(self.content)


def allowed(new: NewFact, old: MemoryRecord, *, by_attribute: bool = False) -> bool:
    """Whether the reading lets ``new`` retire ``old`` (:func:`~agentmem.domain.reading.may_supersede`)."""
    return may_supersede(new.read, reading_of(old), by_attribute=by_attribute)


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
        return False  # episodes coexist (docs/design.md)
    if new.key in MULTI_VALUED_KEYS or old.key in MULTI_VALUED_KEYS:
        return False  # a second allergy adds, it does not replace
    if is_multi_valued(new.content) or is_multi_valued(old.content):
        return False  # a second hobby, pet or language adds too, however it is worded
    if _different_attributes(new.content, old.content):
        return False  # "moved the meeting" does not replace where I live
    if new.key and old.key and new.key != old.key:
        return False  # different attributes (occupation vs manager)
    new_subject, old_subject = subject_of(new.content), subject_of(old.content)
    if new_subject and old_subject and new_subject != old_subject:
        return False  # "my sister lives in X" is not replaced by "I moved to X"
    shared = shares_topic(new.content, old.content)
    if new.update_strength >= 2:
        return (shared and similarity >= thresholds.update_topic) or similarity >= thresholds.update_alone
    return shared and similarity >= thresholds.update_alone


_SPEAKER_PREFIX = lazy_compile(r"^[^:：\n]{1,40}[:：]\s*")
_RELATION_EN = lazy_compile(
    r"^(?:my|our)\s+(?:new\s+|old\s+|current\s+|younger\s+|older\s+|little\s+|big\s+)?"
    r"(sister|brother|son|daughter|wife|husband|partner|girlfriend|boyfriend|mom|mum|mother|dad|father|friend|"
    r"boss|manager|colleague|coworker|kids?|children|parents?|grand\w+|aunt|uncle|cousin|neighbou?r|roommate|"
    r"dog|cat|team|company)\b",
    re.IGNORECASE,
)
_SELF_EN = lazy_compile(r"^(?:i|i'm|i've|i'd|i'll|my|me|we|we're|we've|our)\b", re.IGNORECASE)
_RELATION_ZH = lazy_compile(
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


def _different_attributes(a: str, b: str) -> bool:
    """Both texts state a recognised attribute and no attribute is common to both."""
    left, right = infer_all(a), infer_all(b)
    if not left or not right:
        return False
    return not {(x.subject, x.name.partition("@")[0]) for x in left} & {
        (y.subject, y.name.partition("@")[0]) for y in right
    }


def replaces_by_attribute(new: NewFact, old: MemoryRecord) -> bool:
    """Same subject, same single-valued attribute, a different value (:mod:`agentmem.domain.attributes`):
    a user-stated fact replaces ``old`` whether or not it says "changed to". Facts of the same
    turn never replace each other; a pinned memory is never replaced here (the write path asks
    for a confirmation first, as for an explicit update)."""
    if not new.user_stated or old.pinned:
        return False  # a reply never replaces what the user said; a pinned memory is asked first
    if old.category is Category.EPISODIC and new.category is Category.EPISODIC:
        return False
    if new.message_id is not None and new.message_id in old.source_refs.message_ids:
        return False
    news = new.read.attributes
    # The reader only ever takes a value away from the user ("someone", "the world": never the
    # same subject), so the tables' own reading of ``old`` rules most records out cheaply first.
    if not any(same_attribute_conflict(n, o) for n in news for o in infer_all(old.content)):
        return False
    return any(same_attribute_conflict(n, o) for n in news for o in reading_of(old).attributes)


def attribute_keys(content: str) -> frozenset[str]:
    """The attributes under which ``content`` can replace, or be replaced by, another text
    through :func:`replaces_by_attribute`: the base names (``residence``, ``event:launch`` without
    its ``@`` qualifier) of the single-valued attributes it states with a value. Two texts whose
    keys do not meet can never replace each other by attribute (:func:`same_attribute_conflict`
    asks for the same base name, both single-valued, both with a value), so a search index may
    keep a memory's keys and a caller skip reading memories whose keys miss the new fact's."""
    keys = set()
    for attribute in infer_all(content):
        base = attribute.name.partition("@")[0]
        if attribute.single and attribute.value and base != "favourite:":
            keys.add(base)
    return frozenset(keys)


# ---------------------------------------------------------------------------- deciding one fact

NEAREST = 3  # the rules (and the model) look at the three most similar records, plus same-key ones

Ranked = list[tuple[float, MemoryRecord]]
JudgeObserver = Callable[[NewFact, MemoryRecord, float, Judgement], None]


def rank(
    vector: npt.NDArray[np.float32],
    pool: Iterable[MemoryRecord],
    calibration: Calibration,
    model_id: str,
    cosines: Mapping[str, float] | None = None,
) -> Ranked:
    """``pool`` by calibrated similarity to ``vector`` (the new fact's embedding), most similar
    first; the raw cosine of a record is ``cosines[memory_id]`` when given (the search index's,
    for records read without their vector), else computed from the record's vector. A record
    embedded by another model (or with no cosine at all) counts as unrelated (0.0). Ties keep
    the order of ``pool``."""
    known = cosines or {}
    ranked: Ranked = []
    for other in pool:
        if other.embedding_model != model_id:
            sim = 0.0
        elif (cosine := known.get(other.memory_id)) is not None:
            sim = calibration.documents(cosine)
        elif other.embedding is not None:
            sim = calibration.documents(float(np.dot(vector, np.asarray(other.embedding, dtype=np.float32))))
        else:
            sim = 0.0
        ranked.append((sim, other))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    return ranked


def decide(
    fact: NewFact,
    ranked: Sequence[tuple[float, MemoryRecord]],
    thresholds: SimilarityThresholds,
    *,
    on_judge: JudgeObserver | None = None,
) -> tuple[Judgement, MemoryRecord | None]:
    """How ``fact`` relates to what is stored (``ranked`` as :func:`rank` orders it): first, a
    user-stated fact replaces the most similar record about the same attribute with another value
    (:func:`replaces_by_attribute`, over the whole pool); then the rule judge over the same-key
    records (they may be worded quite differently) and the :data:`NEAREST` most similar, where
    the first verdict other than "keep both" wins; otherwise an update-marked fact may replace
    one of the nearest (:func:`judge_update`). The record is None
    exactly when the verdict is :attr:`Judgement.KEEP_BOTH`. ``on_judge`` sees every rule
    verdict, in order, the attribute path's supersede included (observation only)."""
    nearest = list(ranked[:NEAREST])
    keyed = [(s, o) for s, o in ranked if fact.key and o.key == fact.key]
    for sim, other in ranked:  # a new value of the same attribute wins over "a duplicate of a reply"
        if replaces_by_attribute(fact, other) and allowed(fact, other, by_attribute=True):
            if on_judge is not None:
                on_judge(fact, other, sim, Judgement.SUPERSEDE)
            return Judgement.SUPERSEDE, other
    for sim, other in keyed + nearest:
        verdict = judge(fact, other, sim, thresholds)
        if verdict is Judgement.SUPERSEDE and not allowed(fact, other):
            verdict = Judgement.KEEP_BOTH  # doubtful, a wish, or another person's: keep both
        if on_judge is not None:
            on_judge(fact, other, sim, verdict)
        if verdict is not Judgement.KEEP_BOTH:
            return verdict, other
    for sim, other in nearest:
        if judge_update(fact, other, sim, thresholds) and allowed(fact, other):
            return Judgement.SUPERSEDE, other
    ended = ended_by(
        Said(fact.read, fact.content, fact.at, fact.session_id, fact.message_id),
        ranked,
        thresholds,
    )
    if ended is not None:
        return Judgement.SUPERSEDE, ended
    return Judgement.KEEP_BOTH, None


def in_conflict_band(
    fact: NewFact, old: MemoryRecord, similarity: float, thresholds: SimilarityThresholds
) -> bool:
    """Whether the pair could be a conflict at all: calibrated similarity in the conflict band
    [conflict_low, dedup) and both in the same conflict-prone category."""
    if not thresholds.conflict_low <= similarity < thresholds.dedup:
        return False
    return fact.category in CONFLICT_CATEGORIES and old.category is fact.category


def is_doubtful(
    fact: NewFact, old: MemoryRecord, similarity: float, thresholds: SimilarityThresholds
) -> bool:
    """The rules kept both, but the pair sits in the conflict band: same conflict-prone
    category, no disagreement of keys (different attributes, or a multi-valued key that adds
    rather than replaces), not pinned. Only these may go to a model."""
    if not in_conflict_band(fact, old, similarity, thresholds) or old.pinned:
        return False
    if fact.key and old.key and fact.key != old.key:
        return False
    if fact.key in MULTI_VALUED_KEYS or old.key in MULTI_VALUED_KEYS:
        return False
    return not (is_multi_valued(fact.content) or is_multi_valued(old.content))  # a hobby adds: never asked


def doubtful_pairs(
    fact: NewFact, ranked: Sequence[tuple[float, MemoryRecord]], thresholds: SimilarityThresholds
) -> Ranked:
    """The :data:`NEAREST` pairs a model may settle when the rules kept both (:func:`is_doubtful`),
    most similar first."""
    return [(s, o) for s, o in ranked[:NEAREST] if is_doubtful(fact, o, s, thresholds)]
