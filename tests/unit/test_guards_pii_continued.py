"""PII split over two messages of the same user: the current message's part that completes PII
the previous message began is redacted (``redact_continued``), and nothing else is."""

from __future__ import annotations

import pytest

from agentmem.domain.guards import redact
from agentmem.domain.guards.pii import redact_continued


def continued(previous: str, current: str) -> str:
    return redact_continued(previous, redact(current)).text


@pytest.mark.parametrize(
    ("previous", "current", "secret"),
    [
        ("my phone starts with 138", "and the rest is 0013 8000", "0013 8000"),
        ("my number is 138", "then 0013 8000", "0013 8000"),
        ("手机号前三位是138，", "后面是 0013 8000", "0013 8000"),
        ("我的电话是138", "0013 8000", "0013 8000"),
        ("身份证前六位 110105", "后面是 19491231002X", "19491231002X"),
        ("my card number begins with 4111 1111", "then 1111 1111", "1111 1111"),
        ("我的 password", "它是 Zebra!Quartz55", "Zebra!Quartz55"),
        ("我要告诉你我的 password", "它是 Zebra!Quartz55", "Zebra!Quartz55"),
        ("my PIN", "is 4821", "4821"),
        ("Mein Passwort", "ist Sonnenblume!7", "Sonnenblume!7"),
        ("le mot de passe", "c'est azerty123", "azerty123"),
        ("パスワード", "それは sakura1234", "sakura1234"),
        ("我的微信", "是 zhang_san88", "zhang_san88"),
        ("my QQ", "is 12345", "12345"),
    ],
)
def test_the_rest_of_pii_begun_in_the_previous_message_is_redacted(
    previous: str, current: str, secret: str
) -> None:
    assert secret in redact(current).text  # alone, the current message holds no PII
    assert secret not in continued(previous, current)


@pytest.mark.parametrize(
    ("previous", "current"),
    [
        ("I need to reset my password", "2FA is on"),
        ("I was born in 1985", "and moved in 2001"),
        ("room 138", "the rest is fine"),
        ("the price was 138", "and 0013 8000 units"),
        ("what do you think of my password policy", "it is: long and random"),
        ("the weather", "is nice today"),
        ("订单号前三位是138", "后面是 0013 8000"),
    ],
)
def test_messages_that_complete_nothing_are_kept(previous: str, current: str) -> None:
    assert continued(previous, current) == redact(current).text


def test_the_findings_of_the_current_message_stay_and_offsets_refer_to_its_source() -> None:
    current = redact("call 13900139000, and the rest is 0013 8000")
    result = redact_continued("my other phone starts with 138", current)
    assert result.kinds == ("phone",) and len(result.findings) == 2
    last = result.findings[-1]
    assert result.source_text[last.start : last.end] == "0013 8000"


def test_nothing_to_add_returns_the_redaction_unchanged() -> None:
    current = redact("hello there")
    assert redact_continued("hi", current) is current
