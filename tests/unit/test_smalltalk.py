"""Small talk by structure (zh and en): greetings, thanks, laughter, emoji, weather and
pleasantries store nothing; a first-person fact or durable content is never small talk."""

from __future__ import annotations

import pytest

from agentmem.domain.extraction import extract_from_user
from agentmem.domain.smalltalk import is_small_talk

SMALL_TALK = [
    "今天天气不错",
    "今天天气真好啊！",
    "外面好冷",
    "哈哈哈哈",
    "😀😀👍",
    "谢谢你，辛苦了！",
    "你真厉害！",
    "豆豆一定很可爱！",
    "早上好！",
    "Nice weather today.",
    "It's raining again.",
    "haha",
    "lol",
    "Thanks so much, you're so helpful!",
    "You're the best!",
    "I'm good, thanks!",
    "Doudou must be adorable!",
    "Have a great day!",
    "Nice weather in Boston today.",
]
NOT_SMALL_TALK = [
    "我养了一只叫豆豆的柯基。",
    "我住在上海浦东。",
    "今天天气不错，我去了西湖划船。",
    "我今天去了西湖",
    "音乐会很棒",
    "下周三下午3点开会",
    "I love pottery.",
    "The concert was great!",
    "It's raining in Seattle where I live.",
    "The meeting moved to 3pm.",
    "Caroline's support group was so powerful.",
    "My sister is visiting next week.",
    "用 PostgreSQL 就好",
]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize("text", NOT_SMALL_TALK)
def test_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


@pytest.mark.parametrize(
    "text", ["今天天气不错", "哈哈，谢谢！", "Nice weather today, haha.", "😂", "You're so helpful!"]
)
def test_small_talk_stores_nothing(text: str) -> None:
    assert extract_from_user(text) == []


def test_a_fact_next_to_small_talk_is_kept_alone() -> None:
    assert [c.content for c in extract_from_user("Nice weather in Boston today, I just moved here.")] == [
        "I just moved here."
    ]
