"""A password named for what it opens ("password for the office wifi: …") and an obfuscated e-mail
that starts inside a rejected candidate ("reach me at j.doe (at) …"); with their look-alikes."""

from __future__ import annotations

import pytest

from agentmem.domain.guards import redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password for the office wifi: Kettle-99x", "Kettle-99x"),
        ("the password of my old laptop = Zebra#2019", "Zebra#2019"),
        ("mot de passe du compte Free : Croissant_77! ne le perds pas", "Croissant_77!"),
        ("contraseña de la cuenta de Netflix: Tigre_88#", "Tigre_88#"),
        ("Passwort vom Router: Blume_42!", "Blume_42!"),
        ("senha do banco: Caju!2024", "Caju!2024"),
        ("密码（工作邮箱）：Qwe_12345", "Qwe_12345"),
        ("公司VPN的密码：vpn@2024abc", "vpn@2024abc"),
        ('password for the shared drive: "blue horse 42"', "blue horse 42"),
    ],
)
def test_a_password_named_for_what_it_opens_is_redacted(text: str, secret: str) -> None:
    assert secret not in redact(text).text, redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "password requirements: 8-chars min",
        "the password field: required",
        "password hint: my-dog",
        "password manager: 1Password",
        "password for wifi: ask the front desk",
        "pwd for the repo: /home/alice",
        "密码规则：8位以上",
        "password reset link: https://example.com/reset",
    ],
)
def test_words_about_passwords_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "reach me at j.doe (at) fastmail [dot] com, I check it daily",
        "write to me at anna.b (at) gmx [dot] de",
        "mail me at j.doe+travel (at) fastmail [dot] com",
        "我的邮箱 li.ming 艾特 163 点 com",
    ],
)
def test_an_obfuscated_address_inside_a_rejected_candidate_is_found(text: str) -> None:
    assert "[EMAIL]" in redact(text).text and "fastmail [dot]" not in redact(text).text
