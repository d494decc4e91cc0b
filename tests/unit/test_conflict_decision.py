"""Settling one new fact against what is stored: ranking by calibrated similarity, the rule
judge over same-key records and the three nearest, explicit updates, and the doubtful pairs a
model may still settle. Lean to "keep both": a false supersede destroys a true fact."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agentmem.domain.conflict import (
    NEAREST,
    Judgement,
    NewFact,
    decide,
    doubtful_pairs,
    in_conflict_band,
    is_doubtful,
    rank,
    replaces_by_attribute,
)
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.domain.similarity import Calibration, SimilarityThresholds

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TH = SimilarityThresholds()  # conflict band [0.75, 0.95)
MODEL = "test/4"
IDENTITY = Calibration(MODEL, 0.0, 0.9, 0.0, 0.9)  # calibrated similarity == cosine


def rec(
    memory_id: str,
    content: str,
    category: Category = Category.PREFERENCE,
    *,
    key: str | None = None,
    value: str | None = None,
    embedding: tuple[float, ...] | None = None,
    model: str | None = MODEL,
) -> MemoryRecord:
    return MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id=memory_id,
        content=content,
        category=category,
        key=key,
        value=value,
        embedding=embedding,
        embedding_model=model if embedding is not None else None,
        created_at=T0,
        updated_at=T0,
    )


def unit(cosine: float) -> tuple[float, ...]:
    """A unit vector at ``cosine`` from (1, 0, 0, 0)."""
    return (cosine, float(np.sqrt(1.0 - cosine**2)), 0.0, 0.0)


NEW_VECTOR = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


# ---------------------------------------------------------------------------- rank


def test_rank_orders_by_calibrated_similarity_and_ignores_other_models() -> None:
    pool = [
        rec("far", "I like hiking", embedding=unit(0.2)),
        rec("near", "I enjoy jasmine tea", embedding=unit(0.85)),
        rec("other-model", "I like green tea", embedding=unit(1.0), model="hash/256"),
        rec("unembedded", "我喜欢绿茶"),
        rec("mid", "我喜欢乌龙茶", embedding=unit(0.5)),
    ]
    ranked = rank(NEW_VECTOR, pool, IDENTITY, MODEL)
    assert [r.memory_id for _, r in ranked] == ["near", "mid", "far", "other-model", "unembedded"]
    assert [round(s, 4) for s, _ in ranked] == [0.85, 0.5, 0.2, 0.0, 0.0]


def test_rank_applies_the_models_calibration() -> None:
    strict = Calibration(MODEL, 0.5, 0.95, 0.0, 0.9)  # this model's unrelated pairs sit at 0.5
    (sim, _), (low, _) = rank(
        NEW_VECTOR, [rec("a", "x", embedding=unit(0.95)), rec("b", "y", embedding=unit(0.4))], strict, MODEL
    )
    assert round(sim, 4) == 0.9 and low == 0.0


# ---------------------------------------------------------------------------- decide


def fact(
    content: str,
    category: Category = Category.PREFERENCE,
    key: str | None = None,
    value: str | None = None,
    update: int = 0,
) -> NewFact:
    return NewFact(content, category, key, value, update)


def test_a_same_key_record_is_found_however_differently_worded() -> None:
    old = rec("old", "我住在成都", Category.IDENTITY, key="residence", value="成都")
    nearest = [rec(f"n{i}", f"我喜欢第{i}种茶") for i in range(NEAREST)]
    ranked = [(0.9, n) for n in nearest] + [(0.05, old)]  # far from the top three
    assert decide(fact("我搬到重庆了", Category.IDENTITY, "residence", "重庆", 2), ranked, TH) == (
        Judgement.SUPERSEDE,
        old,
    )
    en_old = rec("en", "My manager is Priya Sharma.", Category.IDENTITY, key="manager", value="Priya Sharma")
    en_new = fact("My new boss is Tom Okafor.", Category.IDENTITY, "manager", "Tom Okafor")
    assert decide(en_new, [(0.1, en_old)], TH) == (Judgement.SUPERSEDE, en_old)


def test_a_near_paraphrase_is_a_duplicate_of_the_nearest() -> None:
    tea = rec("tea", "I like green tea.")
    ranked = [(0.97, tea), (0.8, rec("x", "I like black coffee."))]
    assert decide(fact("I really like green tea"), ranked, TH) == (Judgement.DUPLICATE, tea)


def test_only_the_three_nearest_are_judged_by_similarity() -> None:
    negated = rec("neg", "I don't like green tea", Category.PREFERENCE)
    near = [(0.9, rec(f"n{i}", f"I like tea number {i}", Category.FACT)) for i in range(NEAREST)]
    assert decide(fact("I like green tea"), [(0.8, negated)], TH) == (Judgement.SUPERSEDE, negated)
    assert decide(fact("I like green tea"), [*near, (0.8, negated)], TH) == (Judgement.KEEP_BOTH, None)


def test_an_explicit_update_replaces_the_same_topic_but_a_second_allergy_adds() -> None:
    old = rec("old", "I work at Acme in Leeds.", Category.IDENTITY)
    moved = fact("I now work at Globex in Leeds.", Category.IDENTITY, update=2)
    assert decide(moved, [(0.5, old)], TH) == (Judgement.SUPERSEDE, old)
    peanuts = rec("p", "我对花生过敏", key="allergy", value="花生")
    shrimp = fact("我现在对虾也过敏了", key="allergy", value="虾", update=2)
    assert decide(shrimp, [(0.6, peanuts)], TH) == (Judgement.KEEP_BOTH, None)


def test_every_rule_verdict_is_seen_in_order_until_one_decides() -> None:
    seen: list[tuple[str, float, Judgement]] = []
    a, b, c = rec("a", "I like hiking"), rec("b", "I like green tea."), rec("c", "I like tea")
    result = decide(
        fact("I like green tea"),
        [(0.6, a), (0.97, b), (0.5, c)],
        TH,
        on_judge=lambda _f, old, sim, verdict: seen.append((old.memory_id, sim, verdict)),
    )
    assert result == (Judgement.DUPLICATE, b)
    assert seen == [("a", 0.6, Judgement.KEEP_BOTH), ("b", 0.97, Judgement.DUPLICATE)]


# ---------------------------------------------------------------------------- doubtful


def test_doubtful_pairs_sit_in_the_band_of_one_conflict_prone_category() -> None:
    old = rec("old", "I enjoy jasmine tea.")
    new = fact("I like green tea.")
    assert is_doubtful(new, old, 0.75, TH) and is_doubtful(new, old, 0.94, TH)
    assert not is_doubtful(new, old, 0.74, TH) and not is_doubtful(new, old, 0.95, TH)
    assert not is_doubtful(new, replace(old, category=Category.FACT), 0.85, TH)
    assert not is_doubtful(
        fact("今天天气很好", Category.GENERAL), rec("g", "昨天下雨了", Category.GENERAL), 0.85, TH
    )


def test_pinned_records_and_disagreeing_or_multi_valued_keys_are_never_doubtful() -> None:
    new = fact("我对花生过敏", key="allergy", value="花生")
    assert in_conflict_band(new, rec("a", "我对虾过敏", key="allergy"), 0.85, TH)
    assert not is_doubtful(new, rec("a", "我对虾过敏", key="allergy"), 0.85, TH)  # a second allergy adds
    job = fact("I work as a nurse", Category.IDENTITY, key="occupation")
    boss = rec("m", "My manager is Priya", Category.IDENTITY, key="manager")
    assert in_conflict_band(job, boss, 0.85, TH) and not is_doubtful(job, boss, 0.85, TH)
    pinned = replace(rec("p", "I enjoy jasmine tea."), pinned=True)
    assert in_conflict_band(fact("I like green tea."), pinned, 0.85, TH)
    assert not is_doubtful(fact("I like green tea."), pinned, 0.85, TH)


def test_only_the_nearest_three_doubtful_pairs_go_to_a_model() -> None:
    teas = [rec(f"t{i}", f"I like tea number {i}") for i in range(5)]
    ranked = [(0.9, teas[0]), (0.6, teas[1]), (0.85, teas[2]), (0.8, teas[3]), (0.8, teas[4])]
    pairs = doubtful_pairs(fact("I like green tea"), ranked, TH)
    assert [r.memory_id for _, r in pairs] == ["t0", "t2"]


# ---------------------------------------------------------------------------- properties

_KEYS = st.sampled_from([None, "residence", "occupation", "allergy"])
_CATEGORIES = st.sampled_from([Category.PREFERENCE, Category.IDENTITY, Category.GENERAL, Category.EPISODIC])
_CONTENTS = st.sampled_from(
    ["I live in Leeds", "I don't live in Leeds", "我住在杭州", "我不住在杭州", "I now work at Acme"]
)
_RECORD = st.builds(
    lambda i, content, category, key, value: rec(f"r{i}", content, category, key=key, value=value),
    st.integers(0, 10**6),
    _CONTENTS,
    _CATEGORIES,
    _KEYS,
    st.sampled_from([None, "Leeds", "杭州"]),
)
_FACT = st.builds(
    NewFact, _CONTENTS, _CATEGORIES, _KEYS, st.sampled_from([None, "Leeds", "杭州"]), st.integers(0, 2)
)


@given(_FACT, st.lists(st.tuples(st.floats(0.0, 1.0), _RECORD), max_size=8))
def test_the_decision_touches_only_same_key_or_nearest_records(
    fact_: NewFact, pairs: list[tuple[float, MemoryRecord]]
) -> None:
    ranked = sorted(pairs, key=lambda p: p[0], reverse=True)
    verdict, other = decide(fact_, ranked, TH)
    assert (other is None) == (verdict is Judgement.KEEP_BOTH)
    if other is not None:
        nearest = [o for _, o in ranked[:NEAREST]]
        assert (
            any(other is o for o in nearest)
            or (fact_.key is not None and other.key == fact_.key)
            or replaces_by_attribute(fact_, other)  # same attribute, another value: anywhere in the pool
        )
    for sim, old in doubtful_pairs(fact_, ranked, TH):
        assert TH.conflict_low <= sim < TH.dedup and not old.pinned
        assert old.key != "allergy" and fact_.key != "allergy"
