"""Entities for the graph in English and Chinese: people (Chinese names by surname and context),
places, organisations and products; entities at the start of a sentence are neither taken nor
dropped for being capitalised."""

from __future__ import annotations

import pytest

from agentmem.domain.entities import entity_names, find_entities


def kinds(text: str) -> dict[str, str]:
    return {e.text: e.kind for e in find_entities(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Melanie went to the beach with Caroline.", {"Melanie", "Caroline"}),
        (
            "Yesterday Alice and I visited the Bank of America office in New York.",
            {"Alice", "Bank of America", "New York"},
        ),
        ("Dr. Smith recommended PostgreSQL and AWS Lambda.", {"Dr. Smith", "PostgreSQL", "AWS Lambda"}),
        ("I read J. R. R. Tolkien's books on my iPhone 15.", {"J. R. R. Tolkien", "iPhone 15"}),
        ("GPT-4 helped me write it.", {"GPT-4"}),
        ("Which laptop? I'd recommend the MacBook Air M3.", {"MacBook Air M3"}),
    ],
)
def test_english_entities(text: str, expected: set[str]) -> None:
    assert set(entity_names(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Luckily the weather held.",
        "Yesterday was long.",
        "Honestly, it was fine.",
        "Try the soup.",
        "Going home now.",
    ],
)
def test_a_capitalised_opener_is_not_an_entity(text: str) -> None:
    assert entity_names(text) == ()


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("我同事王小明说下周去杭州出差。", "王小明", "person"),
        ("我和李雷去爬山了", "李雷", "person"),
        ("我老板张总很严格", "张总", "person"),
        ("李老师布置了作业", "李老师", "person"),
        ("欧阳娜娜是我朋友", "欧阳娜娜", "person"),
        ("我女朋友叫陈静", "陈静", "person"),
        ("我和小王去了西湖", "小王", "person"),
        ("我养了一只叫豆豆的柯基。", "豆豆", "name"),
        ("我同事王小明说下周去杭州出差。", "杭州", "place"),
        ("我住在深圳南山区", "深圳南山区", "place"),
        ("我和小王去了西湖", "西湖", "place"),
        ("我上个月搬到北京海淀了。", "北京", "place"),
        ("我在腾讯工作", "腾讯", "org"),
        ("我在华东师范大学读书", "华东师范大学", "org"),
        ("我在星河科技上班", "星河科技", "org"),
        ("你的场景适合PostgreSQL", "PostgreSQL", "product"),
    ],
)
def test_chinese_entities(text: str, name: str, kind: str) -> None:
    assert kinds(text).get(name) == kind


@pytest.mark.parametrize("text", ["明天去爬山", "我很喜欢和平", "今天天气不错", "我的手机号是[PHONE]"])
def test_no_chinese_entity_without_a_cue(text: str) -> None:
    assert entity_names(text) == ()


def test_a_name_is_not_split_by_a_following_word() -> None:
    assert "王小明" in entity_names("王小明说他明天到")
    assert "王小" not in entity_names("我同事王小明说下周到")


def test_entities_are_unique_and_capped() -> None:
    text = "Alice, Bob, Carol, Dave, Erin, Frank, Grace, Heidi and Ivan met Alice again."
    names = entity_names(text)
    assert len(names) == 8 and len({n.casefold() for n in names}) == 8
