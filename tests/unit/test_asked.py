"""The read side of attributes (domain/asked.py): which attribute a question asks for and whether
a memory states it, in English and Chinese, for the user, a relation or a transcript speaker."""

from __future__ import annotations

import pytest

from agentmem.domain.asked import asked, states

FILLS = [
    ("Which city do I live in?", "We relocated to Denver last month and we're still unpacking."),
    ("Where do I live these days?", "I moved to Lisbon in March."),
    ("Who is my manager?", "After the reorg I report to Rachel."),
    ("Where do I work now?", "I joined Stripe last week."),
    ("What car do I drive?", "I sold the Civic and bought a Kia EV6."),
    ("What do I do for fun?", "I started playing tennis on weekends."),
    ("Where does my sister live?", "My sister lives in Boston."),
    ("Who does my sister work for?", "My sister works at Google."),
    ("Where does Caroline live?", "Caroline: I moved to Denver in May."),
    ("我现在住在哪里？", "我上个月搬到北京海淀了。"),
    ("我的领导是谁？", "我现在归王磊管。"),
    ("我在哪家公司上班？", "我上周入职了字节做后端。"),
    ("我开什么车？", "我把旧车卖了，买了一辆比亚迪汉。"),
]

MISSES = [
    # another subject than the one asked about
    ("Where do I live?", "My sister lives in Boston."),
    ("Where does Caroline live?", "Melanie: I moved to Denver in May."),
    ("Where does my sister live?", "I live in Leeds."),
    # another attribute
    ("Who is my manager?", "I moved to Lisbon in March."),
    ("我住在哪里？", "我现在归王磊管。"),
    # no value stated
    ("Where do I live?", "I'm thinking of moving to Berlin."),
    ("Where do I live?", "I don't live in Leeds any more."),
]


@pytest.mark.parametrize(("query", "memory"), FILLS)
def test_a_memory_stating_what_the_question_asks_fills_it(query: str, memory: str) -> None:
    question = asked(query)
    assert question is not None, query
    assert states(memory, question), (query, memory)


@pytest.mark.parametrize(("query", "memory"), MISSES)
def test_another_subject_attribute_or_no_value_does_not(query: str, memory: str) -> None:
    question = asked(query)
    assert question is not None, query
    assert not states(memory, question), (query, memory)


@pytest.mark.parametrize(
    "text",
    [
        "I live in Berlin.",  # a statement asks nothing
        "帮我写一段自我介绍",
        "What is the boiling point of mercury?",  # a question about no attribute of the user
        "How do I reset my router password?",
        "",
    ],
)
def test_statements_and_questions_about_nothing_personal_ask_for_no_attribute(text: str) -> None:
    assert asked(text) is None
