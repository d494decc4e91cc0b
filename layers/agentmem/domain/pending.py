"""Pending conflicts (docs/design.md "Confirmation before overwriting what is permanent"): a turn that contradicts a permanent or pinned memory does
not overwrite it; the new statement waits as a *proposal* until the user confirms or rejects it.

A :class:`PendingConflict` holds the protected memory's id and content, the proposal (the very
record the write path would have written, never stored as a memory while pending, so it is
never recalled or injected as truth) and how it was resolved. Its id is derived from the
proposal's id, which the write path derives from the turn's message id: a redelivered turn
converges on the same conflict. Pure: no I/O, times are arguments.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from agentmem.domain.models import MemoryRecord, Scope


class ConflictStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"


class Decision(StrEnum):
    CONFIRM = "confirm"
    REJECT = "reject"


def conflict_id(memory_id: str, proposal_id: str) -> str:
    """The id of the conflict between ``memory_id`` and the proposal ``proposal_id``."""
    digest = hashlib.sha256(f"{memory_id}|{proposal_id}".encode()).hexdigest()[:24]
    return f"cf_{digest}"


@dataclass(frozen=True, slots=True)
class PendingConflict:
    """One conflict between a protected memory and a proposed replacement."""

    scope: Scope
    conflict_id: str
    memory_id: str  # the permanent or pinned memory
    existing: str  # its content when the conflict arose
    proposal: MemoryRecord  # what would replace it (redacted like every stored memory)
    created_at: datetime
    status: ConflictStatus = ConflictStatus.PENDING
    resolved_at: datetime | None = None
    message_id: str | None = None

    @property
    def proposed(self) -> str:
        return self.proposal.content

    @property
    def new_memory_id(self) -> str:
        return self.proposal.memory_id

    @property
    def is_pending(self) -> bool:
        return self.status is ConflictStatus.PENDING

    def resolve(self, decision: Decision, at: datetime) -> PendingConflict:
        """This conflict after ``decision`` (the caller checks it was pending)."""
        status = ConflictStatus.CONFIRMED if decision is Decision.CONFIRM else ConflictStatus.REJECTED
        return replace(self, status=status, resolved_at=at)


def propose(existing: MemoryRecord, proposal: MemoryRecord, at: datetime) -> PendingConflict:
    """The pending conflict between protected ``existing`` and ``proposal`` (raised at ``at``)."""
    message_ids = proposal.source_refs.message_ids
    return PendingConflict(
        scope=existing.scope,
        conflict_id=conflict_id(existing.memory_id, proposal.memory_id),
        memory_id=existing.memory_id,
        existing=existing.content,
        proposal=proposal,
        created_at=at,
        message_id=message_ids[0] if message_ids else None,
    )
