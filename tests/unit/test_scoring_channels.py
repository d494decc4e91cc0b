"""The scorer's two bounded channels: the graph bonus a seed passes on, and the period bonus."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.domain.scoring import RelevanceFloor, Scorer
from agentmem.domain.temporal import Period, query_period

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def rec(content: str = "我住在杭州", *, at: datetime = T0, **changes: object) -> MemoryRecord:
    record = MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id="01KE6P4YM0AGDWN18MDS7D5GTR",
        content=content,
        category=Category.IDENTITY,
        importance=0.5,
        created_at=at,
        updated_at=at,
    )
    return replace(record, **changes) if changes else record


def test_a_seed_passes_a_decaying_bounded_bonus() -> None:
    scorer = Scorer()
    one, two = scorer.propagate(0.8, 1), scorer.propagate(0.8, 2)
    assert one == pytest.approx(0.8 * scorer.graph_decay)
    assert two == pytest.approx(0.8 * scorer.graph_decay**2) and two < one
    assert scorer.propagate(7.0, 1) <= 1.0 and scorer.propagate(-1.0, 1) == 0.0


def test_the_graph_bonus_is_explained_and_adds_at_most_its_weight() -> None:
    scorer = Scorer()
    base = scorer.score(rec("I went to a poetry reading."), now=T0, query="poetry", similarity=0.5)
    lifted = scorer.with_graph(base, 1.0, ("keyword", "graph:1"))
    assert lifted.score == pytest.approx(base.score + scorer.graph_weight)
    assert lifted.components["graph"] == 1.0
    assert lifted.channels == ("keyword", "graph:1")
    assert scorer.with_graph(base, 5.0, ()).score == pytest.approx(lifted.score)  # bounded


def test_a_memory_of_the_named_period_gets_the_period_bonus_in_both_languages() -> None:
    scorer = Scorer()
    now = T0 + timedelta(days=40)
    inside, outside = rec(at=T0), rec("I moved to Lisbon.", at=T0 - timedelta(days=60))
    for query in ("我上个月住在哪里？", "Where did I live last month?"):
        period = query_period(query, now)
        assert scorer.period_match(inside, period) == 1.0
        assert scorer.period_match(outside, period) == 0.0
    assert scorer.period_match(inside, None) == 0.0
    # valid_from, when set, is the memory's time
    moved = rec(at=T0 - timedelta(days=60), valid_from=T0)
    assert scorer.period_match(moved, Period(T0, T0 + timedelta(days=1))) == 1.0
    base = scorer.score(inside, now=now)
    lifted = scorer.with_period(base)
    assert lifted.score == pytest.approx(base.score + scorer.period_weight)
    assert lifted.components["period"] == 1.0


@pytest.mark.parametrize("field", ["graph_weight", "graph_decay", "period_weight", "slot_weight"])
def test_channel_weights_are_validated(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Scorer(**{field: 1.5})  # type: ignore[arg-type]


def test_the_slot_bonus_is_explained_and_counts_as_relevance() -> None:
    scorer = Scorer()
    base = scorer.score(rec(importance=0.9), now=T0)  # no query: nothing links it to one
    assert scorer.relevance(base) == 0.0
    filled = scorer.with_slot(base)
    assert filled.score == pytest.approx(base.score + scorer.slot_weight)
    assert filled.components["slot"] == 1.0
    assert scorer.relevance(filled) == pytest.approx(scorer.slot_weight)


def test_the_relevance_floor_drops_what_nothing_links_to_the_query_however_important() -> None:
    scorer = Scorer()
    related = scorer.score(rec("I keep bees"), now=T0, similarity=0.4, lexical=0.0)
    weak = scorer.score(rec("I keep ants"), now=T0, similarity=0.05, lexical=0.0)
    unrelated = scorer.score(rec("我女儿在学钢琴", importance=1.0, pinned=True), now=T0)
    assert unrelated.score > weak.score  # importance and recency alone rank it above
    kept = RelevanceFloor().apply(scorer, [related, unrelated, weak])
    assert kept == [related, weak]  # the order is kept
    assert RelevanceFloor(ratio=0.5).apply(scorer, [related, unrelated, weak]) == [related]
    assert RelevanceFloor(minimum=0.1).apply(scorer, [related, weak]) == [related]
    assert RelevanceFloor().apply(scorer, []) == []


@pytest.mark.parametrize("field", ["minimum", "ratio"])
def test_floor_values_are_validated(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RelevanceFloor(**{field: 1.5})  # type: ignore[arg-type]
