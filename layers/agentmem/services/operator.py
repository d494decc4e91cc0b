"""Dead letters for operators and their users: list them per scope and redrive them, each redrive
audited (``redriven``, the message id and who asked) in the turn's own scope.

The dead letters are the backend's :class:`~agentmem.ports.DeadLetterQueue` (the embedded queue's
table; the SQS ingest DLQ). A deployment without one (an AWS stack without ``AGENTMEM_DLQ_URL``)
answers :class:`~agentmem.errors.ConfigurationError` naming the setting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.errors import ConfigurationError, NotFound
from agentmem.ports import AuditLog, DeadLetterEntry, DeadLetterPage, DeadLetterQueue

PAGE = 200


@dataclass
class DeadLetterService:
    audit: AuditLog
    queue: DeadLetterQueue | None = None

    def _dlq(self) -> DeadLetterQueue:
        if self.queue is None:
            raise ConfigurationError(
                "no dead-letter queue is configured (set AGENTMEM_DLQ_URL to the ingest DLQ)",
                details={"setting": "AGENTMEM_DLQ_URL"},
            )
        return self.queue

    def page(self, scope: Scope | None, *, limit: int = 50, cursor: str | None = None) -> DeadLetterPage:
        """One page, oldest failure first (``scope`` None: every scope, operator tooling only)."""
        return self._dlq().dead_letters_of(scope, limit, cursor)

    def every(self, scope: Scope | None) -> Iterator[DeadLetterEntry]:
        """Every dead letter of ``scope`` (or of every scope), page by page."""
        cursor: str | None = None
        while True:
            page = self._dlq().dead_letters_of(scope, PAGE, cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def redrive_one(self, scope: Scope, message_id: str, *, now: datetime, actor: str) -> int:
        """Redrive the scope's dead letter of ``message_id``; NotFound when there is none."""
        if self._dlq().dead_letter(scope, message_id) is None:
            raise NotFound("no dead letter with this message id", details={"message_id": message_id})
        return len(self._redrive(scope, [message_id], now=now, actor=actor))

    def redrive_all(
        self,
        scope: Scope | None,
        *,
        now: datetime,
        actor: str,
        message_ids: Sequence[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Redrive every dead letter of ``scope`` (None: of every scope), or only ``message_ids``;
        returns how many went back to the queue. Dead letters whose body names no scope stay.
        ``progress(done, total)`` is told after each scope's batch (a progress bar)."""
        wanted = None if message_ids is None else set(message_ids)
        by_scope: dict[Scope, list[str]] = {}
        for entry in self.every(scope):
            if entry.scope is not None and (wanted is None or entry.message_id in wanted):
                by_scope.setdefault(entry.scope, []).append(entry.message_id)
        total = sum(len(ids) for ids in by_scope.values())
        done = 0
        for owner, ids in by_scope.items():
            done += len(self._redrive(owner, ids, now=now, actor=actor))
            if progress is not None:
                progress(done, total)
        return done

    def _redrive(self, scope: Scope, message_ids: Sequence[str], *, now: datetime, actor: str) -> list[str]:
        redriven = self._dlq().redrive(scope, message_ids)
        for message_id in redriven:
            self.audit.append(
                AuditEvent(
                    scope=scope,
                    action=AuditAction.REDRIVEN,
                    at=now,
                    details={"message_id": message_id, "actor": actor},
                )
            )
        return redriven
