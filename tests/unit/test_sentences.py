"""Sentence splitting in English and Chinese: abbreviations, titles, initials, decimals and
versions, URLs and e-mails, list numbers, ellipses and CJK punctuation with closing quotes."""

from __future__ import annotations

import pytest

from agentmem.domain.sentences import split_sentences
from agentmem.domain.text import split_sentences as text_split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # titles: a name always follows
        ("Dr. Smith moved to Boston. He likes it.", ["Dr. Smith moved to Boston.", "He likes it."]),
        ("Mr. and Mrs. Lee came by. We had tea.", ["Mr. and Mrs. Lee came by.", "We had tea."]),
        ("Prof. Zhang teaches maths. I attend.", ["Prof. Zhang teaches maths.", "I attend."]),
        (
            "We hiked up Mt. Rainier in June. It was cold.",
            ["We hiked up Mt. Rainier in June.", "It was cold."],
        ),
        # St.: Saint before a name, Street at the end of a sentence
        ("I moved to St. Louis last year. I love it.", ["I moved to St. Louis last year.", "I love it."]),
        ("I live on Main St. It's quiet.", ["I live on Main St.", "It's quiet."]),
        # company suffixes and dotted abbreviations: a boundary only before a sentence opener
        ("I work at Acme Inc. The office is in Austin.", ["I work at Acme Inc.", "The office is in Austin."]),
        ("Globex Ltd. hired me in May.", ["Globex Ltd. hired me in May."]),
        ("I moved to the U.S. last year. It was hard.", ["I moved to the U.S. last year.", "It was hard."]),
        ("I'm from the U.K. I moved here in 2020.", ["I'm from the U.K.", "I moved here in 2020."]),
        (
            "The meeting is at 9 a.m. tomorrow. Don't be late.",
            ["The meeting is at 9 a.m. tomorrow.", "Don't be late."],
        ),
        ("We left at 5 p.m. We got home late.", ["We left at 5 p.m.", "We got home late."]),
        ("She has a Ph.D. in chemistry.", ["She has a Ph.D. in chemistry."]),
        (
            "I like fruit, e.g. apples and pears. I hate figs.",
            ["I like fruit, e.g. apples and pears.", "I hate figs."],
        ),
        ("Use a VPN, i.e. WireGuard. It's fast.", ["Use a VPN, i.e. WireGuard.", "It's fast."]),
        ("I pack socks, shirts etc. Then I leave.", ["I pack socks, shirts etc.", "Then I leave."]),
        # initials
        (
            "J. R. R. Tolkien is my favourite author. I reread him.",
            ["J. R. R. Tolkien is my favourite author.", "I reread him."],
        ),
        ("John F. Kennedy was born in 1917.", ["John F. Kennedy was born in 1917."]),
        ("I got an A. The teacher was happy.", ["I got an A.", "The teacher was happy."]),
        # numbers, versions, URLs, e-mails
        (
            "I run Python 3.12 and Django v4.2. Both are fine.",
            ["I run Python 3.12 and Django v4.2.", "Both are fine."],
        ),
        ("The rate is 3.5 percent.", ["The rate is 3.5 percent."]),
        ("Mail me at li.na@example.com. Thanks!", ["Mail me at li.na@example.com.", "Thanks!"]),
        (
            "See https://example.com/a?b=1&c=2. It explains it.",
            ["See https://example.com/a?b=1&c=2.", "It explains it."],
        ),
        ("My site is www.li-na.dev. Visit it!", ["My site is www.li-na.dev.", "Visit it!"]),
        ("1. buy milk\n2. call mom", ["1. buy milk", "2. call mom"]),
        ("I have 2. Then I bought a third.", ["I have 2.", "Then I bought a third."]),
        # ellipses and runs of terminators
        ("Wait... What? No!?", ["Wait...", "What?", "No!?"]),
        ("I was thinking... maybe later.", ["I was thinking... maybe later."]),
        # Chinese punctuation, full-width quotes
        ("我住在上海。明天去北京！你呢？", ["我住在上海。", "明天去北京！", "你呢？"]),
        ("好的；再见……真的吗？", ["好的；", "再见……", "真的吗？"]),
        ("他说：“我明天走。”然后就走了。", ["他说：“我明天走。”", "然后就走了。"]),
        ("「这本书真好看！」她说。", ["「这本书真好看！」", "她说。"]),
        ("我用的是v2.1版本.然后升级到3.0了", ["我用的是v2.1版本.", "然后升级到3.0了"]),
        ("我在 St. Louis 读书。我很喜欢那里。", ["我在 St. Louis 读书。", "我很喜欢那里。"]),
        ("Dr. 王是我的医生。他很好。", ["Dr. 王是我的医生。", "他很好。"]),
        ("", []),
        ("no terminator at all", ["no terminator at all"]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
    assert text_split(text) == expected  # text.split_sentences is the same method


def test_split_keeps_every_character_but_whitespace() -> None:
    text = "Dr. Li lives at 5 Main St. She works at Acme Inc. The U.S. office. 我住在上海。你呢？"
    assert "".join(split_sentences(text)).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我在U.S.工作了三年。后来回国了。", ["我在U.S.工作了三年。", "后来回国了。"]),
        ("我在Acme Inc.上班。", ["我在Acme Inc.上班。"]),
        ("我住在上海.明天去北京", ["我住在上海.", "明天去北京"]),
        ("I paid $3.50. Then I left.", ["I paid $3.50.", "Then I left."]),
        (
            "Mrs. Wang from Ltd. Corp. called. She left a message.",
            ["Mrs. Wang from Ltd. Corp. called.", "She left a message."],
        ),
    ],
)
def test_mixed_script_and_money(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_a_long_text_splits_completely() -> None:
    text = "I moved to St. Louis. " * 2000 + "我住在上海。" * 2000
    assert len(split_sentences(text)) == 4000
