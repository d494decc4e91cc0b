"""Confirmation before overwriting what is permanent (docs/design.md, "Confirmation before
overwriting what is permanent").

A turn whose fact would supersede a permanent or pinned memory does not: the write path hands
the pair to :meth:`ConflictService.propose`, which keeps the new statement as a pending proposal
(:class:`~agentmem.domain.pending.PendingConflict`; never a memory, so never recalled or injected
as truth) and audits it. While it is pending the context carries a short question in the user's
language (:meth:`hints`). The user answers through ``POST /v1/conflicts/{id}``: *confirm* writes
the proposal in place of the protected memory now (one transaction, as any supersede; the new
memory keeps the old one's layer and pin), *reject* drops it; both are audited. A conflict is
resolved once: a second answer is a VersionConflict (409).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, replace
from datetime import datetime

from agentmem.domain.models import AuditAction, MemoryRecord, Scope, Status
from agentmem.domain.pending import ConflictStatus, Decision, PendingConflict, propose
from agentmem.errors import NotFound, VersionConflict
from agentmem.ports import AuditLog, ConflictStore, MemoryStore, Put
from agentmem.services.audit_trail import append_audit

HINTS_SHOWN = 3  # pending questions a context carries at most (newest first)


@dataclass
class ConflictService:
    store: MemoryStore
    conflicts: ConflictStore
    audit: AuditLog

    def propose(self, existing: MemoryRecord, proposal: MemoryRecord, at: datetime) -> PendingConflict:
        """Keep ``proposal`` pending against protected ``existing``; audited once (a redelivered
        turn finds its conflict stored and writes nothing)."""
        conflict = propose(existing, proposal, at)
        if self.conflicts.put(conflict):
            append_audit(
                self.audit,
                existing.scope,
                AuditAction.CONFLICT_PENDING,
                at,
                memory_id=existing.memory_id,
                reason=f"conflict:{conflict.conflict_id}",
                message_id=conflict.message_id,
            )
        return conflict

    def list(
        self, scope: Scope, *, status: ConflictStatus | None, limit: int, cursor: str | None
    ) -> tuple[builtins.list[PendingConflict], str | None]:
        return self.conflicts.list(scope, status=status, limit=limit, cursor=cursor)

    def hints(self, scope: Scope) -> builtins.list[tuple[str, str]]:
        """(what the user said before, what they say now) of the newest pending conflicts whose
        memory is still there (one deleted since asks nothing)."""
        pending, _ = self.conflicts.list(scope, status=ConflictStatus.PENDING, limit=HINTS_SHOWN)
        if not pending:
            return []
        alive = self.store.get_many(scope, [c.memory_id for c in pending], embeddings=False)
        return [
            (c.existing, c.proposed) for c in pending if c.memory_id in alive and alive[c.memory_id].is_active
        ]

    def resolve(
        self, scope: Scope, conflict_id: str, decision: Decision, *, now: datetime
    ) -> PendingConflict:
        """Confirm or reject; NotFound when unknown, VersionConflict when already resolved (or
        the protected memory changed meanwhile)."""
        conflict = self.conflicts.get(scope, conflict_id)
        if conflict is None:
            raise NotFound("conflict not found", details={"conflict_id": conflict_id})
        if not conflict.is_pending:
            raise VersionConflict(
                "conflict already resolved", details={"conflict_id": conflict_id, "status": conflict.status}
            )
        if decision is Decision.CONFIRM:
            self._supersede(conflict, now)
        resolved = conflict.resolve(decision, now)
        self.conflicts.resolve(resolved)
        action = (
            AuditAction.CONFLICT_CONFIRMED if decision is Decision.CONFIRM else AuditAction.CONFLICT_REJECTED
        )
        append_audit(
            self.audit,
            scope,
            action,
            now,
            memory_id=conflict.memory_id,
            reason=f"conflict:{conflict_id}",
            message_id=conflict.message_id,
        )
        return resolved

    def _supersede(self, conflict: PendingConflict, now: datetime) -> None:
        """Write the proposal in place of the protected memory (if it is still there)."""
        scope, proposal = conflict.scope, conflict.proposal
        if self.store.get(scope, proposal.memory_id) is not None:
            return  # written by an earlier confirmation that failed before it was recorded
        old = self.store.get(scope, conflict.memory_id)
        if old is None or not old.is_active:
            self.store.create(replace(proposal, updated_at=now))
            return
        since = proposal.valid_from or now
        new = replace(
            proposal, supersedes=(old.memory_id,), layer=old.layer, pinned=old.pinned, updated_at=now
        )
        marked = old.evolve(now=now, status=Status.SUPERSEDED, superseded_by=new.memory_id, valid_to=since)
        self.store.transact([Put(new, None), Put(marked, old.version)])
        append_audit(
            self.audit,
            scope,
            AuditAction.SUPERSEDED,
            now,
            memory_id=old.memory_id,
            reason=f"by:{new.memory_id}",
            message_id=conflict.message_id,
        )
