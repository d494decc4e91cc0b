"""The period a query asks about, resolved against ``now`` (recall's temporal channel).

"What did I do last weekend?", "the painting she showed on October 13, 2023", "camping in June",
"上个月", "2023年5月", "三天前" name a span of time; a memory whose time (``valid_from``, else
``created_at`` — for a conversation, the session's date) lies in it answers better than one that
does not. :func:`query_period` finds the first such mention in English or Chinese and returns the
half-open span ``[start, end)`` in ``now``'s time zone, or ``None`` when the query names no
period. A month without a year (``in June``, ``6月``) is the latest one that has begun by ``now``;
"N days/weeks/months ago" is the span of that unit around the point it names. Pure: the clock is
an argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentmem.domain.lazy_re import lazy_compile

_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12,
    "dec": 12,
}  # fmt: skip
_M = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_D = r"(\d{1,2})(?:st|nd|rd|th)?"
_Y = r"((?:19|20)\d{2})"
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_N = r"(\d{1,2}|[一两二三四五六七八九十]|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_EN_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_EN_NUM |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10}

_RULES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in [
        ("mdy", rf"\b{_M}\s+{_D},?\s+{_Y}\b"),
        ("dmy", rf"\b{_D}\s+(?:of\s+)?{_M},?\s+{_Y}\b"),
        ("my", rf"\b{_M},?\s+{_Y}\b"),
        ("zh_ymd", r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
        ("zh_ym", r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月"),
        ("zh_md", r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
        ("md", rf"\b(?:on\s+){_M}\s+{_D}\b"),
        ("m", rf"\b(?:in|during|of|since)\s+(?:early\s+|late\s+|mid-?)?{_M}\b"),
        ("zh_m", r"(?<![\d年])(\d{1,2})\s*月份?(?![\d日号])"),
        ("zh_y", r"((?:19|20)\d{2})\s*年(?!\s*\d)"),
        ("y", rf"\b(?:in|during|of)\s+{_Y}\b"),
        ("ago", rf"\b{_N}\s+(day|week|month|year)s?\s+ago\b"),
        ("zh_ago", r"(\d{1,2}|[一两二三四五六七八九十])\s*(天|周|个?星期|个?礼拜|个?月|年)(?:之|以)?前"),
        ("yesterday", r"\byesterday\b|昨天|昨日"),
        ("before_yesterday", r"\bday before yesterday\b|前天"),
        ("today", r"\btoday\b|今天|今日"),
        ("last_weekend", r"\blast\s+weekend\b|上个?周末"),
        ("last_week", r"\blast\s+week\b|上个?(?:周|星期|礼拜)"),
        ("this_week", r"\bthis\s+week\b|这个?(?:周|星期|礼拜)|本周"),
        ("last_month", r"\blast\s+month\b|上个?月"),
        ("this_month", r"\bthis\s+month\b|这个月|本月"),
        ("last_year", r"\blast\s+year\b|去年"),
        ("this_year", r"\bthis\s+year\b|今年"),
    ]
]
_RULES.sort(key=lambda rule: rule[0] != "before_yesterday")  # "day before yesterday" first


@dataclass(frozen=True, slots=True)
class Period:
    """A half-open span of time ``[start, end)``."""

    start: datetime
    end: datetime

    def holds(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _day(now: datetime, year: int, month: int, day: int) -> Period | None:
    try:
        start = now.replace(year=year, month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
    except ValueError:
        return None
    return Period(start, start + timedelta(days=1))


def _month(now: datetime, year: int, month: int) -> Period | None:
    if not 1 <= month <= 12:
        return None
    start = now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=year + 1, month=1) if month == 12 else start.replace(month=month + 1)
    return Period(start, end)


def _latest_month(now: datetime, month: int) -> Period | None:
    """The latest ``month`` that has begun by ``now``."""
    return _month(now, now.year if month <= now.month else now.year - 1, month)


def _year(now: datetime, year: int) -> Period:
    start = now.replace(year=year, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return Period(start, start.replace(year=year + 1))


def _number(text: str) -> int:
    low = text.lower()
    if low.isdigit():
        return int(low)
    return _EN_NUM.get(low) or _ZH_NUM.get(text, 1)


def _ago(now: datetime, count: int, unit: str) -> Period:
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    point = now - timedelta(days=count * days)
    half = timedelta(days=max(1, days // 2)) if unit != "day" else timedelta(days=1)
    return Period(point - half, point + half)


def _resolve(name: str, groups: tuple[str, ...], now: datetime) -> Period | None:
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday())
    if name == "mdy":
        return _day(now, int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1]))
    if name == "dmy":
        return _day(now, int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0]))
    if name == "my":
        return _month(now, int(groups[1]), _MONTHS[groups[0].lower()])
    if name == "zh_ymd":
        return _day(now, int(groups[0]), int(groups[1]), int(groups[2]))
    if name == "zh_ym":
        return _month(now, int(groups[0]), int(groups[1]))
    if name in ("zh_md", "md"):
        month, day = (
            (int(groups[0]), int(groups[1]))
            if name == "zh_md"
            else (_MONTHS[groups[0].lower()], int(groups[1]))
        )
        latest = _latest_month(now, month)
        return None if latest is None else _day(now, latest.start.year, month, day)
    if name == "m":
        return _latest_month(now, _MONTHS[groups[0].lower()])
    if name == "zh_m":
        return _latest_month(now, int(groups[0]))
    if name in ("zh_y", "y"):
        return _year(now, int(groups[0]))
    if name == "ago":
        return _ago(now, _number(groups[0]), groups[1].lower())
    if name == "zh_ago":
        unit = {"天": "day", "周": "week", "年": "year"}.get(groups[1][-1], "month")
        unit = "week" if groups[1][-1] in "期拜" else unit
        return _ago(now, _number(groups[0]), unit)
    spans = {
        "yesterday": (today - timedelta(days=1), today),
        "before_yesterday": (today - timedelta(days=2), today - timedelta(days=1)),
        "today": (today, today + timedelta(days=1)),
        "last_weekend": (monday - timedelta(days=2), monday),
        "last_week": (monday - timedelta(days=7), monday),
        "this_week": (monday, monday + timedelta(days=7)),
    }
    if name in spans:
        return Period(*spans[name])
    first = today.replace(day=1)
    if name == "last_month":
        previous = (first - timedelta(days=1)).replace(day=1)
        return Period(previous, first)
    if name == "this_month":
        return _month(now, now.year, now.month)
    if name == "last_year":
        return _year(now, now.year - 1)
    return _year(now, now.year)  # this_year


_ZH_DATE_NUMBER = lazy_compile(r"[〇零一二两三四五六七八九十]+(?=\s*[年月日号])")
_ZH_DIGIT = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "两": 2}


def _zh_number(run: str) -> str:
    """``五`` -> ``5``, ``十二`` -> ``12``, ``三十一`` -> ``31``, ``二〇二三`` -> ``2023``."""
    if "十" not in run:
        return "".join(str(_ZH_DIGIT[c]) for c in run)
    tens, _, ones = run.partition("十")
    return str((_ZH_DIGIT.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGIT.get(ones, 0) if ones else 0))


def _arabic_dates(query: str) -> str:
    """Chinese numerals before 年 / 月 / 日 / 号 written as digits (``我五月去了哪`` -> ``我5月去了哪``)."""
    return _ZH_DATE_NUMBER.sub(lambda m: _zh_number(m.group(0)), query)


def query_period(query: str, now: datetime) -> Period | None:
    """The span of time ``query`` asks about (see the module), or ``None``: the first rule,
    most specific first, that matches and names a real date. Chinese numerals count as digits
    (``五月``, ``二〇二三年三月``)."""
    query = _arabic_dates(query)
    for name, pattern in _RULES:
        match = pattern.search(query)
        if match is not None and (period := _resolve(name, match.groups(), now)) is not None:
            return period
    return None
