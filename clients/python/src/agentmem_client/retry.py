"""When the client sends a request again, and after how long: pure functions of the attempt, the
answer (or the transport failure) and the time already spent; no I/O, no httpx.

What is retried, by name:

* ``429`` (queue full, the caller's share of the server taken): always — the server refused the
  request before doing anything;
* ``500``, ``502``, ``503``, ``504``: only for idempotent calls (reads, PUT/DELETE, turns — whose
  ``message_id`` the client generates, so a second delivery is the same turn);
* a connection that could not be opened (refused, connect timeout): always — nothing was sent;
* a connection lost after sending (read/write errors, read timeouts): only for idempotent calls.

The wait is the server's ``Retry-After`` (seconds or an HTTP date) when it sent one, else an
exponential backoff with full jitter (``uniform(0, min(max_delay, base_delay * 2**(n-1)))``);
a call stops after ``max_attempts`` or once the next wait would end past ``max_total_s`` since
the first attempt, and raises what the last attempt got.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum

RETRIED_ALWAYS = frozenset({429})
RETRIED_WHEN_IDEMPOTENT = frozenset({500, 502, 503, 504})


class Failure(Enum):
    """A transport failure, by whether the request can have reached the server."""

    NOT_SENT = "not_sent"  # connect refused / connect timeout / no route: safe to send again
    MAYBE_SENT = "maybe_sent"  # the connection broke after (part of) the request went out


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retries of one call. ``RetryPolicy(max_attempts=1)`` never retries."""

    max_attempts: int = 4
    base_delay_s: float = 0.25
    max_delay_s: float = 8.0
    max_total_s: float = 30.0
    max_retry_after_s: float = 60.0  # a longer Retry-After is not waited for: the error is raised
    rng: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if min(self.base_delay_s, self.max_delay_s, self.max_total_s, self.max_retry_after_s) < 0:
            raise ValueError("retry delays must not be negative")

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt ``attempt`` (1-based) without a Retry-After."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return ceiling * float(self.rng())

    def retryable(self, *, status: int | None, failure: Failure | None, idempotent: bool) -> bool:
        """Whether this outcome may be sent again at all (regardless of the bounds)."""
        if failure is not None:
            return failure is Failure.NOT_SENT or idempotent
        if status in RETRIED_ALWAYS:
            return True
        return idempotent and status in RETRIED_WHEN_IDEMPOTENT

    def delay(
        self,
        attempt: int,
        elapsed_s: float,
        *,
        status: int | None = None,
        failure: Failure | None = None,
        idempotent: bool,
        retry_after_s: float | None = None,
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to give up and raise.
        ``elapsed_s`` is the time since the first attempt began."""
        if attempt >= self.max_attempts or not self.retryable(
            status=status, failure=failure, idempotent=idempotent
        ):
            return None
        if retry_after_s is not None:
            if retry_after_s > self.max_retry_after_s:
                return None
            wait = retry_after_s + self.backoff(1) * 0.1  # a little jitter: not every client at once
        else:
            wait = self.backoff(attempt)
        return wait if elapsed_s + wait <= self.max_total_s else None


NO_RETRIES = RetryPolicy(max_attempts=1)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for: delta-seconds (``"2"``, also ``"1.5"``) or an
    HTTP date (``"Wed, 21 Oct 2026 07:28:00 GMT"``, counted from ``now``); never negative. None
    when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds or seconds in (float("inf"), float("-inf")):  # NaN, inf
        return None
    return max(0.0, seconds)
