"""Assertions the PII test files share."""

from __future__ import annotations

from agentmem.domain.guards import redact


def assert_gone(text: str, secrets: list[str]) -> None:
    """Every secret is redacted out of ``text`` and something was found."""
    result = redact(text)
    for secret in secrets:
        assert secret not in result.text, result.text
    assert result.findings, result.text


def assert_kept(text: str) -> None:
    """``text`` holds no PII: nothing is found."""
    result = redact(text)
    assert result.findings == (), result.text
