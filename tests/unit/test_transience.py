"""Short-term facts (domain/transience.py): a state of a near time is short-term, valid until that
time ends; past events, durable attributes and facts without a near time are long-term — in
English and Chinese. Through the write path and consolidation: it expires and stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentmem.bootstrap import Container
from agentmem.clock import ManualClock
from agentmem.domain.models import Confidence, Layer, Scope, Turn
from agentmem.domain.transience import short_term_until

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
S = Scope("t1", "u1")


@pytest.mark.parametrize(
    ("text", "lasts"),
    [
        ("I'm at the airport right now.", timedelta(hours=12)),
        ("I'm working from home today.", timedelta(days=1)),
        ("I have a dentist appointment this afternoon.", timedelta(days=1)),
        ("I feel exhausted tonight.", timedelta(days=1)),
        ("My sister is visiting this weekend.", timedelta(days=7)),
        ("We're in Lisbon for the next few days.", timedelta(days=7)),
        ("这周我在上海出差。", timedelta(days=7)),
        ("今天有点头疼。", timedelta(days=1)),
        ("我现在在机场。", timedelta(hours=12)),
        ("今晚要加班。", timedelta(days=1)),
    ],
)
def test_a_state_of_a_near_time_lasts_until_that_time_ends(text: str, lasts: timedelta) -> None:
    assert short_term_until(text, AT) == AT + lasts


@pytest.mark.parametrize(
    "text",
    [
        "Today I went to the fair.",  # a past event stays true
        "我今天去了趟超市。",
        "I moved to Berlin today.",  # a durable attribute said today
        "I started playing tennis this week.",
        "I'm vegetarian these days.",  # "these days", "currently": a durable present
        "Currently I'm reading Dune.",
        "I live in Berlin.",  # no near time
        "我在一家物流公司做数据分析师。",
        "今天天气不错。",  # no state of the speaker
    ],
)
def test_past_events_durable_attributes_and_timeless_facts_are_long_term(text: str) -> None:
    assert short_term_until(text, AT) is None


def test_through_the_write_path_it_is_short_term_then_expires_and_stays(
    container: Container, clock: ManualClock
) -> None:
    clock.set(AT)
    for mid, text in (("m1", "I'm working from home today."), ("m2", "I keep bees in my garden.")):
        container.pipeline.ingest(
            Turn(scope=S, session_id="s1", user=text, assistant="", at=AT, message_id=mid)
        )
    by_content = {r.content: r for r in container.store.list(S).items}
    today = by_content["I'm working from home today."]
    assert today.layer is Layer.SHORT_TERM and today.valid_to == AT + timedelta(days=1)
    assert today.expires_at is None  # DynamoDB's TTL would delete it instead of letting it expire
    assert by_content["I keep bees in my garden."].layer is Layer.LONG_TERM
    clock.set(AT + timedelta(days=2))
    container.consolidation.consolidate(S, now=AT + timedelta(days=2))
    after = {r.content: r for r in container.store.list(S).items}
    assert after["I'm working from home today."].confidence is Confidence.EXPIRED
    assert after["I keep bees in my garden."].confidence is Confidence.CONFIRMED
