"""``GET /v1/health``: whether the service can do its work now, not only whether it answers.

``ok``, or ``degraded`` with the reasons: a queue whose oldest waiting turn is older than
``health_max_backlog_age_s`` (the ingest queue), or a change feed whose oldest unprocessed change
is (the projector's), or a model provider that failed in the last minute (the LLM's turns fell back
to the rules; the embedder's requests answered without vectors). The local server adds the processes it supervises (an event source or an
api worker that exited and is being replaced, :mod:`agentmem_dev.emulator.server`). A backend that
cannot say what waits (SQS, DynamoDB Streams: CloudWatch alarms watch them) reports no backlog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.errors import StoreUnavailable
from agentmem.ports import BacklogState

OK = "ok"
DEGRADED = "degraded"


@dataclass(frozen=True, slots=True)
class BacklogReport:
    name: str
    waiting: int
    oldest_age_s: float | None


@dataclass(frozen=True, slots=True)
class HealthReport:
    status: str
    reasons: tuple[str, ...]
    backlogs: tuple[BacklogReport, ...]


@dataclass
class HealthService:
    """``backlogs``: name -> what waits there (the ingest queue, the projector's stream)."""

    max_backlog_age_s: float
    backlogs: Mapping[str, Callable[[], BacklogState]] = field(default_factory=dict)
    # name -> why that model is being bypassed now (a recent timeout, 429, unreachable), or None
    models: Mapping[str, Callable[[], str | None]] = field(default_factory=dict)

    def report(self, now: datetime) -> HealthReport:
        reasons: list[str] = []
        found: list[BacklogReport] = []
        for name, read in self.backlogs.items():
            try:
                state = read()
            except StoreUnavailable:
                reasons.append(f"{name}: its store is unavailable")
                continue
            age = None if state.oldest_at is None else max(0.0, (now - state.oldest_at).total_seconds())
            found.append(BacklogReport(name, state.waiting, None if age is None else round(age, 3)))
            if age is not None and age > self.max_backlog_age_s:
                reasons.append(
                    f"{name}: the oldest of {state.waiting} waiting has waited {age:.0f} s"
                    f" (bound {self.max_backlog_age_s:.0f} s)"
                )
        for name, failing in self.models.items():
            why = failing()
            if why is not None:
                reasons.append(f"{name}: {why}")
        return HealthReport(DEGRADED if reasons else OK, tuple(reasons), tuple(found))
