"""TurnStatusService on the in-memory fakes: which record wins when several know the turn."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.port_types import DeadLetterEntry, DeadLetterPage
from agentmem.services.outcome import TurnOutcome, TurnStatus
from agentmem.services.turns import TurnState, TurnStatusService
from support.fakes.memory import InMemoryAuditLog, InMemoryTurnLog, InMemoryTurnQueue

S = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class RecordingQueue(InMemoryTurnQueue):
    """The send-side fake that also says when it accepted each turn (QueuedTurns)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[tuple[Scope, str], datetime] = {}

    def record(self, message_id: str, at: datetime) -> None:
        self.sent[(S, message_id)] = at

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        return self.sent.get((scope, message_id))


class OneDeadLetter:
    def __init__(self, entry: DeadLetterEntry | None) -> None:
        self.entry = entry

    def dead_letters_of(
        self, scope: Scope | None, limit: int = 50, cursor: str | None = None
    ) -> DeadLetterPage:
        return DeadLetterPage([self.entry] if self.entry else [])

    def dead_letter(self, scope: Scope, message_id: str) -> DeadLetterEntry | None:
        e = self.entry
        return e if e is not None and e.scope == scope and e.message_id == message_id else None

    def redrive(self, scope: Scope | None, message_ids: Sequence[str] | None = None) -> list[str]:
        return []


def service(
    dead: DeadLetterEntry | None = None,
) -> tuple[TurnStatusService, InMemoryTurnLog, RecordingQueue, InMemoryAuditLog]:
    log, queue, audit = InMemoryTurnLog(), RecordingQueue(), InMemoryAuditLog()
    return TurnStatusService(log, queue, audit, OneDeadLetter(dead)), log, queue, audit


def rejected(audit: InMemoryAuditLog, message_id: str, at: datetime, reason: str = "erased") -> None:
    audit.append(AuditEvent(S, AuditAction.REJECTED, at, reason=reason, details={"message_id": message_id}))


def test_the_processed_mark_wins_and_names_what_the_turn_wrote() -> None:
    svc, log, queue, _ = service(DeadLetterEntry("m1", S, "s1", "boom", 5, T0))
    queue.record("m1", T0)
    outcome = TurnOutcome("m1", written=["a", "b"], reinforced=["c"], superseded=["d"])
    log.mark_processed(S, "m1", T0, outcome.to_dict())
    report = svc.status(S, "m1")
    assert report is not None and report.status is TurnState.PROCESSED and report.memory_ids == ("a", "b")
    quarantined = TurnOutcome("m2", status=TurnStatus.QUARANTINED, quarantined=["q"], reasons=["injection:x"])
    log.mark_processed(S, "m2", T0, quarantined.to_dict())
    report = svc.status(S, "m2")
    assert report is not None and (report.status, report.reason, report.memory_ids) == (
        TurnState.QUARANTINED, "injection:x", ("q",)
    )  # fmt: skip


def test_a_dead_letter_beats_the_queue_record() -> None:
    svc, _, queue, _ = service(DeadLetterEntry("m1", S, "s1", "boom", 5, T0 + timedelta(minutes=1)))
    queue.record("m1", T0)
    report = svc.status(S, "m1")
    assert report is not None and (report.status, report.reason) == (TurnState.DEAD_LETTERED, "boom")
    assert svc.status(Scope("t1", "other"), "m1") is None


def test_the_newer_of_a_rejection_and_the_queue_record_wins() -> None:
    svc, _, queue, audit = service()
    queue.record("m1", T0)
    rejected(audit, "m1", T0 + timedelta(seconds=1))
    report = svc.status(S, "m1")
    assert report is not None and (report.status, report.reason) == (TurnState.REJECTED, "erased")
    queue.record("m1", T0 + timedelta(seconds=2))  # sent again since (a redrive)
    report = svc.status(S, "m1")
    assert (
        report is not None
        and report.status is TurnState.QUEUED
        and report.updated_at == T0 + timedelta(seconds=2)
    )
    rejected(audit, "m9", T0)  # another turn's rejection says nothing about m1
    assert svc.status(S, "nope") is None
