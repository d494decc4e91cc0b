"""Scorer.score_many and lexical_matcher give, bit for bit, what the one-memory-at-a-time
scorer gives: recall and the context slots rank through them, so any drift would change answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.models import Category, Layer, MemoryRecord, Scope
from agentmem.domain.scoring import Scorer, lexical_matcher
from agentmem.domain.temporal import Period, query_period
from agentmem.domain.text import lexical_match

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


def test_score_many_recency_equals_recency_pinned_permanent_and_hour_boundaries() -> None:
    scorer = Scorer(half_life_hours=48.0)
    records = [record(i, "x", minutes=m) for i, m in enumerate((0, 59, 60, 61, 119, 120, 60 * 24 * 400, -30))]
    records += [
        record(90, "pinned", minutes=600, pinned=True),
        record(91, "permanent", minutes=600, layer=Layer.PERMANENT),
        record(92, "accessed later", minutes=6000, last_accessed_at=NOW - timedelta(hours=2)),
        record(93, "no times", minutes=0, created_at=None, valid_from=None),
    ]
    got = scorer.score_many(
        [(r.memory_id, r) for r in records], now=NOW, query="", similarities={}, lexical_floor={}
    )
    recency = [parts[2] for _, _, _, parts, _ in got]
    assert recency == [scorer.recency(r, NOW) for r in records]
    assert recency[-4:] == [1.0, 1.0, scorer.recency(records[-2], NOW), 1.0]
    assert recency[1] == recency[0] > recency[2] > recency[-6]  # whole hours: 59 min is still hour 0


def test_score_many_equals_the_one_at_a_time_scorer_bit_for_bit() -> None:
    scorer = Scorer()
    records = [record(i, TEXTS[i % len(TEXTS)], minutes=37 * i, pinned=i % 7 == 0) for i in range(60)]
    sims = {r.memory_id: (i * 0.0173) % 1.3 - 0.1 for i, r in enumerate(records) if i % 3}
    bm25 = {r.memory_id: (i * 0.071) % 1.0 for i, r in enumerate(records) if i % 4 == 0}
    for query in QUERIES:
        period = query_period(query, NOW)
        got = scorer.score_many(
            [(r.memory_id, r) for r in records],
            now=NOW,
            query=query,
            similarities=sims,
            lexical_floor=bm25,
            period=period,
        )
        want = one_by_one(scorer, records, query, sims, bm25, period)
        assert [(total, parts, when) for total, _, _, parts, when in got] == want, query
        assert [m for _, m, _, _, _ in got] == [r.memory_id for r in records]


def test_score_many_period_lifts_only_the_memories_in_the_named_span() -> None:
    scorer = Scorer()
    may = record(
        1, "我们在五月去了杭州 trip to Hangzhou", minutes=0, valid_from=datetime(2026, 5, 10, tzinfo=UTC)
    )
    april = record(2, "trip to Hangzhou 杭州", minutes=0, valid_from=datetime(2026, 4, 10, tzinfo=UTC))
    for query in ("what did I do in May?", "我5月做了什么？"):
        period = query_period(query, NOW)
        assert period is not None
        got = {
            m: when
            for _, m, _, _, when in scorer.score_many(
                [(may.memory_id, may), (april.memory_id, april)],
                now=NOW,
                query=query,
                similarities={},
                lexical_floor={},
                period=period,
            )
        }
        assert got == {may.memory_id: 1.0, april.memory_id: 0.0}
