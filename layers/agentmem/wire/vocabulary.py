"""The vocabulary the wire shares with the domain: memory categories and the rule for times.

Defined here, in the leaf, and imported by :mod:`agentmem.domain.models`, so the API's enum and
the domain's are one class (the OpenAPI document names it ``Category``)."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

EARLIEST, LATEST = 1970, 2200


def checked_time(value: datetime | None) -> datetime | None:
    """Timezone-aware UTC within [1970, 2200]; naive times are read as UTC. Raises ValueError."""
    if value is None:
        return None
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        utc = aware.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("time is out of range") from exc
    if not EARLIEST <= utc.year <= LATEST:
        raise ValueError(f"time must be between {EARLIEST} and {LATEST}")
    return utc


class Category(StrEnum):
    IDENTITY = "identity"
    PREFERENCE = "preference"
    FACT = "fact"
    EPISODIC = "episodic"
    POLICY = "policy"
    TOOL_FAILURE = "tool_failure"
    GENERAL = "general"
