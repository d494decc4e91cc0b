"""The one Scorer: validated weights, bounded and monotone scores, hour-quantised half-life recency,
no decay for pinned/permanent memories, and the query-free retention value."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.models import Category, Layer, MemoryRecord, Scope
from agentmem.domain.scoring import Scorer, ScoringWeights
from agentmem.domain.text import lexical_match

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SCOPE = Scope("t1", "u1")


def rec(
    importance: float = 0.5, *, at: datetime = T0, content: str = "我住在杭州", **changes: object
) -> MemoryRecord:
    record = MemoryRecord(
        scope=SCOPE,
        memory_id="01KE6P4YM0AGDWN18MDS7D5GTR",
        content=content,
        category=Category.IDENTITY,
        importance=importance,
        created_at=at,
        updated_at=at,
    )
    return replace(record, **changes) if changes else record


# ---------------------------------------------------------------------------- weights


@pytest.mark.parametrize(
    "weights",
    [
        (0.5, 0.2, 0.1, 0.1),  # sums to 0.9
        (0.5, 0.3, 0.2, 0.2),  # sums to 1.2
        (0.0, 0.0, 0.0, 0.0),
        (1.2, -0.2, 0.0, 0.0),  # sums to 1 but one is negative
        (0.6, 0.6, -0.1, -0.1),
        (math.nan, 0.5, 0.25, 0.25),
    ],
)
def test_invalid_weights_are_refused(weights: tuple[float, float, float, float]) -> None:
    with pytest.raises(ValueError):
        ScoringWeights(*weights)


def test_valid_weights_are_accepted_and_defaults_sum_to_one() -> None:
    w = ScoringWeights(0.25, 0.25, 0.25, 0.25)
    assert (w.semantic, w.lexical, w.recency, w.importance) == (0.25, 0.25, 0.25, 0.25)
    d = ScoringWeights()
    assert d.semantic + d.lexical + d.recency + d.importance == pytest.approx(1.0)


@pytest.mark.parametrize("half_life", [0.0, -24.0])
def test_non_positive_half_life_is_refused(half_life: float) -> None:
    with pytest.raises(ValueError):
        Scorer(half_life_hours=half_life)


# ---------------------------------------------------------------------------- the score


def test_score_is_the_weighted_sum_of_its_components() -> None:
    scorer = Scorer(ScoringWeights(0.4, 0.3, 0.2, 0.1), half_life_hours=10)
    record = rec(0.8)
    scored = scorer.score(record, now=T0 + timedelta(hours=10), similarity=0.5, lexical=0.25)
    assert scored.components == {"semantic": 0.5, "lexical": 0.25, "recency": 0.5, "importance": 0.8}
    assert scored.score == pytest.approx(0.4 * 0.5 + 0.3 * 0.25 + 0.2 * 0.5 + 0.1 * 0.8)
    assert scored.record is record


def test_lexical_defaults_to_the_seed_match_on_the_content() -> None:
    record = rec(content="我住在杭州西湖边")
    scored = Scorer().score(record, now=T0, query="杭州西湖", similarity=0.0)
    assert scored.components["lexical"] == pytest.approx(lexical_match("杭州西湖", record.content))
    assert scored.components["lexical"] > 0.5
    unrelated = Scorer().score(record, now=T0, query="quantum chromodynamics", similarity=0.0)
    assert unrelated.components["lexical"] == 0.0
    assert scored.score > unrelated.score


def test_channels_are_carried_through() -> None:
    scored = Scorer().score(rec(), now=T0, similarity=0.3, lexical=0.0, channels=("vector", "keyword"))
    assert scored.channels == ("vector", "keyword")


component = st.floats(min_value=-2.0, max_value=3.0, allow_nan=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
hours = st.integers(min_value=0, max_value=24 * 365 * 5)


@st.composite
def weights(draw: st.DrawFn) -> ScoringWeights:
    raw = [draw(st.integers(min_value=0, max_value=20)) for _ in range(4)]
    if sum(raw) == 0:
        raw[0] = 1
    total = sum(raw)
    parts = [r / total for r in raw]
    parts[-1] = 1.0 - sum(parts[:-1])
    return ScoringWeights(*[max(0.0, p) for p in parts])


@settings(max_examples=200, deadline=None)
@given(w=weights(), sim=component, lex=component, imp=unit, age=hours, half=st.floats(1.0, 24.0 * 365))
def test_score_is_bounded(
    w: ScoringWeights, sim: float, lex: float, imp: float, age: int, half: float
) -> None:
    scored = Scorer(w, half).score(rec(imp), now=T0 + timedelta(hours=age), similarity=sim, lexical=lex)
    assert -1e-9 <= scored.score <= 1.0 + 1e-9
    assert all(0.0 <= v <= 1.0 for v in scored.components.values())


@settings(max_examples=200, deadline=None)
@given(w=weights(), a=unit, b=unit, lex=unit, imp=unit, age=hours)
def test_score_is_monotone_in_similarity(
    w: ScoringWeights, a: float, b: float, lex: float, imp: float, age: int
) -> None:
    lo, hi = sorted((a, b))
    scorer, now = Scorer(w), T0 + timedelta(hours=age)
    assert (
        scorer.score(rec(imp), now=now, similarity=lo, lexical=lex).score
        <= scorer.score(rec(imp), now=now, similarity=hi, lexical=lex).score + 1e-12
    )


@settings(max_examples=200, deadline=None)
@given(w=weights(), a=unit, b=unit, sim=unit, imp=unit, age=hours)
def test_score_is_monotone_in_lexical(
    w: ScoringWeights, a: float, b: float, sim: float, imp: float, age: int
) -> None:
    lo, hi = sorted((a, b))
    scorer, now = Scorer(w), T0 + timedelta(hours=age)
    assert (
        scorer.score(rec(imp), now=now, similarity=sim, lexical=lo).score
        <= scorer.score(rec(imp), now=now, similarity=sim, lexical=hi).score + 1e-12
    )


@settings(max_examples=200, deadline=None)
@given(w=weights(), a=unit, b=unit, sim=unit, lex=unit, age=hours)
def test_score_is_monotone_in_importance(
    w: ScoringWeights, a: float, b: float, sim: float, lex: float, age: int
) -> None:
    lo, hi = sorted((a, b))
    scorer, now = Scorer(w), T0 + timedelta(hours=age)
    assert (
        scorer.score(rec(lo), now=now, similarity=sim, lexical=lex).score
        <= scorer.score(rec(hi), now=now, similarity=sim, lexical=lex).score + 1e-12
    )


@settings(max_examples=200, deadline=None)
@given(w=weights(), a=hours, b=hours, sim=unit, lex=unit, imp=unit)
def test_score_never_grows_with_age(
    w: ScoringWeights, a: int, b: int, sim: float, lex: float, imp: float
) -> None:
    young, old = sorted((a, b))
    scorer = Scorer(w)
    assert (
        scorer.score(rec(imp), now=T0 + timedelta(hours=old), similarity=sim, lexical=lex).score
        <= scorer.score(rec(imp), now=T0 + timedelta(hours=young), similarity=sim, lexical=lex).score + 1e-12
    )


def test_more_recent_memory_outranks_an_older_one_all_else_equal() -> None:
    scorer = Scorer(half_life_hours=24)
    now = T0 + timedelta(days=10)
    fresh = scorer.score(rec(0.5, at=now - timedelta(hours=1)), now=now, similarity=0.5, lexical=0.5)
    stale = scorer.score(rec(0.5, at=T0), now=now, similarity=0.5, lexical=0.5)
    assert fresh.score > stale.score


# ---------------------------------------------------------------------------- recency


def test_recency_is_quantised_to_the_hour() -> None:
    scorer = Scorer(half_life_hours=5)
    record = rec()
    a = scorer.score(record, now=T0 + timedelta(hours=2, minutes=1), similarity=0.4, lexical=0.1)
    b = scorer.score(record, now=T0 + timedelta(hours=2, minutes=59, seconds=59), similarity=0.4, lexical=0.1)
    c = scorer.score(record, now=T0 + timedelta(hours=3), similarity=0.4, lexical=0.1)
    assert a.score == b.score
    assert a.components["recency"] == pytest.approx(0.5 ** (2 / 5))
    assert c.score < b.score
    # Within the first hour nothing has decayed yet.
    assert scorer.recency(record, T0 + timedelta(minutes=59)) == 1.0


@pytest.mark.parametrize("half_life", [1.0, 24.0, 24.0 * 30, 24.0 * 365])
def test_recency_halves_at_exactly_one_half_life(half_life: float) -> None:
    scorer = Scorer(half_life_hours=half_life)
    record = rec()
    assert scorer.recency(record, T0) == 1.0
    assert scorer.recency(record, T0 + timedelta(hours=half_life)) == pytest.approx(0.5)
    assert scorer.recency(record, T0 + timedelta(hours=2 * half_life)) == pytest.approx(0.25)


def test_recency_counts_from_the_latest_confirmation() -> None:
    scorer = Scorer(half_life_hours=24)
    now = T0 + timedelta(days=4)
    untouched = rec()
    accessed = replace(untouched, last_accessed_at=now - timedelta(days=1))
    assert scorer.recency(untouched, now) == pytest.approx(0.5**4)
    assert scorer.recency(accessed, now) == pytest.approx(0.5)


def test_a_memory_from_the_future_does_not_score_above_fresh() -> None:
    scorer = Scorer(half_life_hours=24)
    assert scorer.recency(rec(at=T0 + timedelta(days=3)), T0) == 1.0


@pytest.mark.parametrize("protected", [{"pinned": True}, {"layer": Layer.PERMANENT}])
def test_pinned_and_permanent_memories_never_decay(protected: dict[str, object]) -> None:
    scorer = Scorer(half_life_hours=24)
    record = rec(0.4, **protected)
    later = T0 + timedelta(days=3650)
    assert scorer.recency(record, later) == 1.0
    assert scorer.score(record, now=later, similarity=0.2, lexical=0.0).score == pytest.approx(
        scorer.score(record, now=T0, similarity=0.2, lexical=0.0).score
    )
    assert scorer.retention(record, later) == scorer.retention(record, T0)
    # an ordinary record of the same importance does decay
    assert scorer.recency(rec(0.4), later) < 1e-6


# ---------------------------------------------------------------------------- retention


def test_retention_uses_recency_and_importance_renormalised() -> None:
    scorer = Scorer(ScoringWeights(0.5, 0.2, 0.1, 0.2), half_life_hours=24)
    record = rec(0.6)
    assert scorer.retention(record, T0) == pytest.approx((0.1 * 1.0 + 0.2 * 0.6) / 0.3)
    assert scorer.retention(record, T0 + timedelta(hours=24)) == pytest.approx((0.1 * 0.5 + 0.2 * 0.6) / 0.3)


def test_retention_without_recency_or_importance_weight_is_the_importance() -> None:
    scorer = Scorer(ScoringWeights(0.7, 0.3, 0.0, 0.0))
    assert scorer.retention(rec(0.35), T0 + timedelta(days=400)) == 0.35


@settings(max_examples=100, deadline=None)
@given(w=weights(), a=unit, b=unit, age=hours)
def test_retention_is_bounded_and_prefers_the_more_important(
    w: ScoringWeights, a: float, b: float, age: int
) -> None:
    scorer, now = Scorer(w), T0 + timedelta(hours=age)
    lo, hi = sorted((a, b))
    r_lo, r_hi = scorer.retention(rec(lo), now), scorer.retention(rec(hi), now)
    assert 0.0 <= r_lo <= r_hi + 1e-12 <= 1.0 + 2e-12
