"""Vendor key formats from detect-secrets' maintained rule set, decided with context (issue 37):
keys go, look-alikes with no key's variety (versions, UUIDs in docs, hashes, barcodes) stay."""

from __future__ import annotations

import pytest

from agentmem.domain.guards import redact
from agentmem.domain.guards.pii.vendor_keys import entropy, find_vendor_key, looks_made_up
from agentmem.domain.guards.pii.vendor_rules import VENDOR_RULES


@pytest.mark.parametrize(
    "text",
    [
        "mailchimp: 0123456789abcdef0123456789abcdef-us6",
        "the twilio sid AC1f3a9b2c4d5e6f708192a3b4c5d6e7f8 is in prod",
        "telegram bot 1234567890:AAH7xk2Lr9QwErTy8UiOpAsDfGhJkLzXcVb",
        "Sendgrid: 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",
        "pypi-AgEIcHlwaS5vcmc" + "Ab1Cd2Ef3Gh4" * 7,
        "sq0csp-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V" + " is the square secret",
    ],
)
def test_vendor_keys_are_redacted(text: str) -> None:
    result = redact(text)
    assert "api_key" in result.kinds, result.text


@pytest.mark.parametrize(
    "text",
    [
        "we run version 2.4.10.1 and APE1234567 is our region code",
        "uuid in the doc: 123e4567-e89b-12d3-a456-426614174000",
        "the barcode is 4006381333931",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 in the README",
        "INT_MAX is 2147483647 on this platform",
    ],
)
def test_look_alikes_stay(text: str) -> None:
    assert list(find_vendor_key(text)) == []


def test_the_rule_set_is_detect_secrets_own() -> None:
    kinds = {kind for kind, _, _ in VENDOR_RULES}
    assert {
        "AWS Access Key",
        "Slack Token",
        "Stripe Access Key",
        "Twilio API Key",
        "SendGrid API Key",
    } <= kinds
    assert "Public IP (ipv4)" not in kinds  # left to the IP rule, which knows documentation ranges


def test_made_up_needs_letters_digits_and_variety() -> None:
    assert entropy("aaaa") == 0.0
    assert not looks_made_up("abcdefghijklmnopqrstuvwx")  # no digits
    assert not looks_made_up("1111111111111111111a")  # too regular
    assert looks_made_up("AKIAQ3EGRT5Y7XK2PL9M")
