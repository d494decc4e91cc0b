"""``score_block.best`` and ``lexical_matcher`` give, bit for bit, what the one-memory-at-a-time
scorer gives, and the same order (score to 9 places, then the newer id): recall and the context
slots rank through them, so any drift would change answers. Both of ``best``'s text paths (a
listing's postings, one call per candidate with the hopeless ones skipped) are held to it."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.asked import asked, states
from agentmem.domain.models import Category, Layer, MemoryRecord, Scope
from agentmem.domain.score_block import Ranked, ScoreBlock, best
from agentmem.domain.scoring import Scorer, lexical_matcher
from agentmem.domain.temporal import Period, query_period
from agentmem.domain.text import lexical_match
from agentmem.services.caches import ScoreBlocks

S = Scope("t1", "u1")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

TEXTS = [
    "My daughter Lena starts school in September.",
    "The lighthouse review moved to Saturday 5pm.",
    "I prefer green tea, not coffee.",
    "我喜欢吃火锅，不太喜欢麻辣烫。",
    "磐石项目的截止日期是5月12日，预算280万元。",
    "我们把灯塔的评审改到周六下午5点。",
    "Alice recommended a book about bouldering 攀岩.",
    "",
]
QUERIES = [
    "when does Lena start school?",
    "lighthouse review",
    "what do I drink?",
    "我喜欢吃什么？",
    "磐石项目预算",
    "灯塔评审什么时候？",
    "bouldering 攀岩",
    "",
    "   ",
    "what did I do in May?",
    "我5月做了什么？",
]


def record(i: int, content: str, *, minutes: int, **changes: object) -> MemoryRecord:
    at = NOW - timedelta(minutes=minutes)
    fields: dict[str, object] = {
        "scope": S,
        "memory_id": f"m{i:04d}",
        "content": content,
        "category": Category.FACT,
        "importance": (i % 10) / 10,
        "created_at": at,
        "valid_from": at,
        **changes,
    }
    return MemoryRecord(**fields)  # type: ignore[arg-type]


def one_by_one(
    scorer: Scorer,
    records: list[MemoryRecord],
    query: str,
    sims: dict[str, float],
    bm25: dict[str, float],
    period: Period | None,
) -> list[tuple[float, tuple[float, float, float, float], float]]:
    out = []
    for r in records:
        lexical = max(lexical_match(query, r.content), bm25.get(r.memory_id, 0.0))
        parts = scorer.components(
            r, now=NOW, query=query, similarity=sims.get(r.memory_id, 0.0), lexical=lexical
        )
        when = scorer.period_match(r, period)
        out.append((scorer.total(parts) + scorer.period_weight * when, parts, when))
    return out


def test_lexical_matcher_equals_lexical_match_for_every_text_in_both_languages() -> None:
    for query in QUERIES:
        match = lexical_matcher(query)
        for content in TEXTS + QUERIES:
            assert match(content) == lexical_match(query, content), (query, content)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.text(max_size=80))
def test_lexical_matcher_equals_lexical_match_for_any_text(query: str, content: str) -> None:
    assert lexical_matcher(query)(content) == lexical_match(query, content)


def reference_order(
    scorer: Scorer,
    records: list[MemoryRecord],
    query: str,
    sims: dict[str, float],
    bm25: dict[str, float],
    top: int | None,
    slot: bool,
) -> list[tuple[str, tuple[float, float, float, float], bool, bool]]:
    """What ranking one memory at a time gives: every score, the slot bonus, round, sort, cut."""
    question = asked(query) if slot else None
    keyed = []
    for r, (total, parts, when) in zip(
        records, one_by_one(scorer, records, query, sims, bm25, query_period(query, NOW)), strict=True
    ):
        fills = question is not None and states(r.content, question)
        final = total + (scorer.slot_weight if fills else 0.0)
        keyed.append((round(final, 9), r.memory_id, parts, when > 0.0, fills))
    keyed.sort(key=lambda k: (k[0], k[1]), reverse=True)
    if top is not None:
        keyed = keyed[: max(0, top)]
    return [(m, parts, when, fills) for _, m, parts, when, fills in keyed]


def run_best(
    scorer: Scorer,
    records: list[MemoryRecord],
    query: str,
    sims: dict[str, float],
    bm25: dict[str, float],
    top: int | None,
    slot: bool,
    terms: bool,
) -> list[tuple[str, tuple[float, float, float, float], bool, bool]]:
    question = asked(query) if slot else None
    got = best(
        scorer,
        ScoreBlock(records, terms=terms),
        now=NOW,
        query=query,
        similarity=np.array([sims.get(r.memory_id, np.nan) for r in records], dtype=np.float64),
        lexical_floor=np.array([bm25.get(r.memory_id, 0.0) for r in records], dtype=np.float64),
        period=query_period(query, NOW),
        top=top,
        states=(lambda text: states(text, question)) if question is not None else None,
    )
    assert all(isinstance(x, float) for item in got for x in item.parts)
    return [(g.record.memory_id, g.parts, g.in_period, g.fills) for g in got]


def test_recency_equals_recency_pinned_permanent_and_hour_boundaries() -> None:
    scorer = Scorer(half_life_hours=48.0)
    records = [record(i, "x", minutes=m) for i, m in enumerate((0, 59, 60, 61, 119, 120, 60 * 24 * 400, -30))]
    records += [
        record(90, "pinned", minutes=600, pinned=True),
        record(91, "permanent", minutes=600, layer=Layer.PERMANENT),
        record(92, "accessed later", minutes=6000, last_accessed_at=NOW - timedelta(hours=2)),
        record(93, "no times", minutes=0, created_at=None, valid_from=None),
    ]
    got = {
        g.record.memory_id: g.parts[2]
        for g in best(
            scorer,
            ScoreBlock(records),
            now=NOW,
            query="",
            similarity=np.full(len(records), np.nan),
            lexical_floor=np.zeros(len(records)),
        )
    }
    recency = [got[r.memory_id] for r in records]
    assert recency == [scorer.recency(r, NOW) for r in records]
    assert recency[-4:] == [1.0, 1.0, scorer.recency(records[-2], NOW), 1.0]
    assert recency[1] == recency[0] > recency[2] > recency[-6]  # whole hours: 59 min is still hour 0


@pytest.mark.parametrize("terms", [False, True])
@pytest.mark.parametrize("top", [None, 1, 5, 30, 59, 60, 100])
def test_best_equals_the_one_at_a_time_scorer_bit_for_bit(top: int | None, terms: bool) -> None:
    scorer = Scorer()
    records = [record(i, TEXTS[i % len(TEXTS)], minutes=37 * i, pinned=i % 7 == 0) for i in range(60)]
    sims = {r.memory_id: (i * 0.0173) % 1.3 - 0.1 for i, r in enumerate(records) if i % 3}
    bm25 = {r.memory_id: (i * 0.071) % 1.0 for i, r in enumerate(records) if i % 4 == 0}
    for query in [*QUERIES, "what is my daughter's name?", "Lena 几岁？"]:
        for slot in (False, True):
            want = reference_order(scorer, records, query, sims, bm25, top, slot)
            assert run_best(scorer, records, query, sims, bm25, top, slot, terms) == want, (query, slot)


@pytest.mark.parametrize("terms", [False, True])
def test_ties_and_scores_a_rounding_apart_order_as_the_one_at_a_time_scorer(terms: bool) -> None:
    """Equal memories under different ids (ties broken by the newer id), and scores apart by less
    than the rounding to 9 places, on either side of the top-th: the cut must not decide by the
    unrounded score what the rounded one decides otherwise."""
    scorer = Scorer()
    base = 0.3
    records, sims = [], {}
    for i in range(40):
        records.append(record(i, "same text 同样的话", minutes=0, importance=0.5))
        sims[records[-1].memory_id] = base + (i % 5) * 4e-10  # within a rounding step of each other
    for top in (1, 3, 7, 8, 9, 20, 39):
        want = reference_order(scorer, records, "same", sims, {}, top, False)
        assert run_best(scorer, records, "same", sims, {}, top, False, terms) == want, top


@pytest.mark.parametrize("terms", [False, True])
def test_the_slot_bonus_lifts_a_memory_from_under_the_cut_as_the_one_at_a_time_scorer(terms: bool) -> None:
    """Memories that state what the query asks (where one lives), scored just under the top-th
    of the others, end in the answer through the bonus; the cuts must leave them in reach."""
    scorer = Scorer()
    records, sims = [], {}
    for i in range(50):
        says = i % 5 == 0
        content = ("I live in Berlin." if i % 2 else "我住在上海。") if says else f"note {i} about the garden"
        records.append(record(i, content, minutes=i, importance=0.5))
        # those that state it are ~0.2 under the others: more than a full text match makes up, less than
        # one with the bonus (so the text match of a hopeless-looking memory must still be made)
        under = (0.35 if i % 2 else 0.28) if says else 0.0  # the text match is 0.6 (en), 0.4 (zh)
        sims[records[-1].memory_id] = 0.6 - under + (i % 7) * 0.001
    for query in ("where do I live?", "我住在哪里？"):
        for top in (5, 10, 20):
            want = reference_order(scorer, records, query, sims, {}, top, True)
            assert sum(fills for *_, fills in want) >= min(top, 10) // 2, "the case must exercise the bonus"
            assert run_best(scorer, records, query, sims, {}, top, True, terms) == want, (query, top)


@pytest.mark.parametrize("seed", range(12))
def test_best_equals_the_one_at_a_time_scorer_on_random_listings(seed: int) -> None:
    rng = random.Random(seed)
    scorer = Scorer(half_life_hours=rng.choice([24.0, 24.0 * 182.5]))
    words = [
        "tea",
        "coffee",
        "Lena",
        "school",
        "review",
        "Saturday",
        "项目",
        "预算",
        "评审",
        "周六",
        "喜欢",
        "猫",
    ]
    records = [
        record(
            i,
            " ".join(rng.choices(words, k=rng.randint(0, 6))),
            minutes=rng.randint(-120, 60 * 24 * 800),
            importance=rng.choice([0.1, 0.5, 0.5, 0.9]),
            pinned=rng.random() < 0.1,
        )
        for i in range(rng.randint(1, 250))
    ]
    sims = {r.memory_id: rng.choice([rng.random(), 0.5, -0.2, 1.4]) for r in records if rng.random() < 0.8}
    bm25 = {r.memory_id: rng.random() for r in records if rng.random() < 0.2}
    for query in [
        "tea or coffee",
        "Lena school Saturday",
        "项目预算",
        "周六的评审",
        "what did I do in May?",
        "",
    ]:
        top = rng.choice([None, 1, 10, 30, len(records) - 1])
        slot = rng.random() < 0.5
        want = reference_order(scorer, records, query, sims, bm25, top, slot)
        for terms in (False, True):
            assert run_best(scorer, records, query, sims, bm25, top, slot, terms) == want, (query, top)


def test_the_period_lifts_only_the_memories_in_the_named_span() -> None:
    scorer = Scorer()
    may = record(
        1, "我们在五月去了杭州 trip to Hangzhou", minutes=0, valid_from=datetime(2026, 5, 10, tzinfo=UTC)
    )
    april = record(2, "trip to Hangzhou 杭州", minutes=0, valid_from=datetime(2026, 4, 10, tzinfo=UTC))
    for query in ("what did I do in May?", "我5月做了什么？"):
        period = query_period(query, NOW)
        assert period is not None
        got: list[Ranked] = best(
            scorer,
            ScoreBlock([may, april]),
            now=NOW,
            query=query,
            similarity=np.full(2, np.nan),
            lexical_floor=np.zeros(2),
            period=period,
        )
        assert {g.record.memory_id: g.in_period for g in got} == {may.memory_id: True, april.memory_id: False}


def test_the_block_cache_keys_on_the_records_themselves() -> None:
    cache = ScoreBlocks(size=2)
    a = [record(i, "x", minutes=i) for i in range(3)]
    assert cache.of(a) is cache.of(list(a))  # the same records: the same block
    equal = [record(i, "x", minutes=i) for i in range(3)]  # equal, but other objects
    assert cache.of(equal) is not cache.of(a)
    cache.of([a[0]])
    cache.of([a[1]])  # a third and fourth listing evict the oldest
    assert len(cache) == 2
    assert cache.of(a).terms
