"""The period a query names (domain/temporal.py), in English and Chinese, against a fixed now."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentmem.domain.temporal import Period, query_period

NOW = datetime(2023, 10, 20, 12, 0, tzinfo=UTC)  # a Friday


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What painting did she show on October 13, 2023?", day(2023, 10, 13), day(2023, 10, 14)),
        ("what happened on 7 May 2023", day(2023, 5, 7), day(2023, 5, 8)),
        ("Where was I in March 2022?", day(2022, 3, 1), day(2022, 4, 1)),
        ("When did Melanie go camping in June?", day(2023, 6, 1), day(2023, 7, 1)),
        ("What did I buy in December?", day(2022, 12, 1), day(2023, 1, 1)),  # the latest December
        ("What did I do last weekend?", day(2023, 10, 14), day(2023, 10, 16)),
        ("and last week?", day(2023, 10, 9), day(2023, 10, 16)),
        ("what did we decide last month", day(2023, 9, 1), day(2023, 10, 1)),
        ("the trip in 2021", day(2021, 1, 1), day(2022, 1, 1)),
        ("what did I eat yesterday", day(2023, 10, 19), day(2023, 10, 20)),
        ("the day before yesterday", day(2023, 10, 18), day(2023, 10, 19)),
        ("我上个月去了哪里？", day(2023, 9, 1), day(2023, 10, 1)),
        ("上周末做了什么", day(2023, 10, 14), day(2023, 10, 16)),
        ("2023年5月我住在哪", day(2023, 5, 1), day(2023, 6, 1)),
        ("2022年3月8日的会议", day(2022, 3, 8), day(2022, 3, 9)),
        ("6月份的旅行", day(2023, 6, 1), day(2023, 7, 1)),
        ("前天说了什么", day(2023, 10, 18), day(2023, 10, 19)),
        ("去年的项目", day(2022, 1, 1), day(2023, 1, 1)),
    ],
)
def test_a_named_period_resolves_against_now(query: str, start: datetime, end: datetime) -> None:
    assert query_period(query, NOW) == Period(start, end)


@pytest.mark.parametrize("query", ["两周前", "two weeks ago", "三天前", "3 days ago"])
def test_ago_is_a_span_around_the_point_it_names(query: str) -> None:
    period = query_period(query, NOW)
    assert period is not None
    days = 14 if "周" in query or "week" in query else 3
    point = NOW.replace(day=NOW.day - days)
    assert period.holds(point)
    assert not period.holds(NOW)


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline go to the conference?",
        "What may I bring?",
        "我住在哪里？",
        "March on!",
        "13 apples",
    ],
)
def test_a_query_without_a_period_names_none(query: str) -> None:
    assert query_period(query, NOW) is None


def test_an_impossible_date_names_none() -> None:
    assert query_period("on February 30, 2023", NOW) is None
    assert query_period("2023年13月", NOW) is None


@pytest.mark.parametrize(
    ("query", "written"),
    [
        ("我五月去了哪里", "我5月去了哪里"),
        ("二〇二三年三月我在哪", "2023年3月我在哪"),
        ("我九月十二号搬的家", "我9月12号搬的家"),
        ("十月份的事", "10月份的事"),
    ],
)
def test_chinese_numerals_name_the_same_period_as_digits(query: str, written: str) -> None:
    assert query_period(query, NOW) == query_period(written, NOW) is not None
