"""Clocks (:class:`agentmem.ports.Clock`): the system clock the service runs on, and a manual one
that eval, benchmarks, the demo and tests set and advance. Domain code never reads a clock: time
is an argument there (docs/design.md, "Principles")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class SystemClock:
    """Wall-clock time, always timezone-aware (UTC)."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that says what it was told: ``set`` it, ``advance`` it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def set(self, value: datetime) -> None:
        if value.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware datetime")
        self.current = value

    def advance(self, delta: timedelta) -> datetime:
        self.current += delta
        return self.current
