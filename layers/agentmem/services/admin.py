"""Memory administration: list, get, patch, pin, delete, erase a user. Every change goes through
the store (version-checked) so the projections follow from the change stream; every call is
scoped; deletes return the real number of affected records."""

from __future__ import annotations

import builtins
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain.authority import (
    POLICY_PERMISSION,
    conversational_category,
    grant_policy,
    touches_policy,
    written_category,
)
from agentmem.domain.guards.gate import has_placeholder, only_placeholders
from agentmem.domain.models import (
    AuditAction,
    AuditEvent,
    Category,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Status,
)
from agentmem.errors import Forbidden, NotFound, StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import (
    AuditedWrites,
    AuditLog,
    ConflictStore,
    Embedder,
    GraphStore,
    IdempotencyStore,
    MemoryStore,
    Page,
    Put,
    RuntimeStateStore,
    ScopeLedger,
    SearchIndex,
    SessionSummaryStore,
    TurnLog,
    TurnQueue,
)
from agentmem.services.audit_trail import audit_event, write_audited
from agentmem.services.events import EventEmitter
from agentmem.services.guard import WriteGuard

# Records one tag-filtered listing reads from the store before it answers a (possibly short)
# page with a cursor: a rare tag never turns one request into a walk of the whole partition.
TAG_SCAN_BUDGET = 2000


def tag_key(tag: str) -> str:
    """A tag as the listing filter compares it: NFKC-normalised, case-folded, trimmed (full-width
    and ASCII forms, upper and lower case are one tag; Chinese tags compare as written)."""
    return unicodedata.normalize("NFKC", tag).casefold().strip()


@dataclass(frozen=True, slots=True)
class MemoryPatch:
    content: str | None = None
    category: Category | None = None
    importance: float | None = None
    pinned: bool | None = None
    tags: tuple[str, ...] | None = None
    expected_version: int | None = None


@dataclass(frozen=True, slots=True)
class EraseReport:
    memories: int
    turns: int
    runtime_states: int
    index_documents: int
    graph_vertices: int
    degraded: tuple[str, ...] = ()
    queued_turns_dropped: int = 0  # 0 on SQS: its turns are dropped at ingest (audited)
    erased_at: datetime | None = None  # the barrier: nothing sent or timed at or before it returns
    summaries: int = 0  # scene logs, scene summaries and the latest-session marker removed


@dataclass
class AdminService:
    store: MemoryStore
    ledger: ScopeLedger  # the erase barrier
    audit: AuditLog
    embedder: Embedder
    turn_log: TurnLog | None = None
    runtime: RuntimeStateStore | None = None
    index: SearchIndex | None = None
    graph: GraphStore | None = None
    guard: WriteGuard = field(default_factory=WriteGuard)
    queue: TurnQueue | None = None
    conflicts: ConflictStore | None = None
    summaries: SessionSummaryStore | None = None
    idempotency: IdempotencyStore | None = None  # the answers kept by Idempotency-Key
    audited: AuditedWrites | None = None  # the store, when a patch or delete commits with its audit line
    events: EventEmitter | None = None  # user.erased (docs/events.md)

    def list(
        self,
        scope: Scope,
        *,
        statuses: tuple[Status, ...] = (Status.ACTIVE,),
        category: str | None = None,
        tags: Sequence[str] = (),
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        """The store's listing, newest first. With ``tags``, only the memories carrying every one
        of them (compared by :func:`tag_key`: NFKC, case-folded, trimmed, so ``Tea`` finds
        ``tea`` and ``ＴＥＡ``). The store pages by its own cursor, so the filter reads store pages
        no larger than what is still missing (a page never overshoots the cursor) and stops after
        :data:`TAG_SCAN_BUDGET` records: a page may then hold fewer than ``limit`` memories while
        ``next_cursor`` is set — follow it until it is null."""
        wanted = {tag_key(t) for t in tags} - {""}
        if not wanted:
            return self.store.list(scope, statuses=statuses, category=category, limit=limit, cursor=cursor)
        found: builtins.list[MemoryRecord] = []
        scanned = 0
        while len(found) < limit and scanned < TAG_SCAN_BUDGET:
            page = self.store.list(
                scope, statuses=statuses, category=category, limit=limit - len(found), cursor=cursor
            )
            scanned += len(page.items)
            found += [r for r in page.items if wanted <= {tag_key(t) for t in r.tags}]
            cursor = page.next_cursor
            if cursor is None or not page.items:
                break
        return Page(items=found, next_cursor=cursor)

    def audit_trail(
        self, scope: Scope, *, limit: int = 100, action: str | None = None
    ) -> builtins.list[AuditEvent]:
        """The caller's audit events, newest first (ids, actions, reasons: never content)."""
        return self.audit.list(scope, limit=limit, action=action)

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord:
        record = self.store.get(scope, memory_id)
        if record is None or record.status is Status.DELETED:
            raise NotFound(f"memory {memory_id} not found")
        return record

    def patch(
        self,
        scope: Scope,
        memory_id: str,
        patch: MemoryPatch,
        *,
        now: datetime,
        actor: str,
        may_write_policy: bool = False,
    ) -> MemoryRecord:
        """Change a memory; content and tags go through the one guard. Any change to a policy
        memory, or into the policy category, needs ``may_write_policy`` (else Forbidden)."""
        current = self.get(scope, memory_id)
        if touches_policy(current.category, patch.category) and not may_write_policy:
            raise Forbidden(f"changing a policy memory needs the {POLICY_PERMISSION!r} permission")
        if patch.expected_version is not None and patch.expected_version != current.version:
            raise VersionConflict(
                f"memory {memory_id} is at version {current.version}, not {patch.expected_version}",
                details={"memory_id": memory_id, "current_version": current.version},
            )
        if not current.is_active and patch.content is not None:
            raise ValidationFailed(
                f"memory {memory_id} is {current.status.value}; only active memories can be edited"
            )
        changes: dict[str, object] = {}
        if patch.content is not None:
            screened = self.guard.screen(patch.content)
            if screened.is_injection:
                raise ValidationFailed(
                    "content rejected by the injection gate", details={"reasons": list(screened.reasons)}
                )
            cleaned = screened.redaction
            if not cleaned.text.strip() or only_placeholders(cleaned.text):
                raise ValidationFailed("content is empty after redaction")
            vector = self.embedder.embed_documents([cleaned.text])[0]
            semantic = self.guard.semantic(vector.reshape(1, -1))[0]
            if semantic is not None:
                raise ValidationFailed(
                    "content rejected by the injection gate", details={"reasons": [semantic]}
                )
            changes.update(
                content=cleaned.text,
                key=None,
                value=None,
                embedding=tuple(float(x) for x in vector),
                embedding_model=self.embedder.model_id,
            )
        if patch.category is not None:  # into the policy category only under a grant, which marks it
            grant = grant_policy(may_write_policy, patch.category)
            written = written_category(patch.category, conversational_category(current.category), grant)
            changes.update(category=written.category, slot_hint=written.slot_hint)
        if patch.importance is not None:
            changes.update(importance=patch.importance, importance_source=ImportanceSource.EXPLICIT)
        if patch.pinned is not None:
            changes["pinned"] = patch.pinned
        if patch.tags is not None:
            tags = self.guard.clean_texts([(f"tags[{i}]", t) for i, t in enumerate(patch.tags)])
            changes["tags"] = tuple(t for t in tags if not has_placeholder(t))
        if not changes:
            return current
        updated = current.evolve(now=now, **changes)
        line = self._line(scope, AuditAction.PATCHED, now, memory_id, actor, {"fields": sorted(changes)})
        write_audited(self.store, self.audit, self.audited, [Put(updated, current.version)], [line])
        return updated

    def delete(self, scope: Scope, memory_id: str, *, now: datetime, actor: str, hard: bool = False) -> int:
        """Soft delete (status deleted, kept for audit) or hard erase. Returns records affected."""
        record = self.store.get(scope, memory_id)
        if record is None or (record.status is Status.DELETED and not hard):
            return 0
        if hard:
            affected = 1 if self.store.hard_delete(scope, memory_id) else 0
            self._audit(scope, AuditAction.ERASED, now, memory_id, actor, {})
            return affected
        deleted = record.evolve(now=now, status=Status.DELETED, valid_to=now)
        line = self._line(scope, AuditAction.DELETED, now, memory_id, actor, {})
        write_audited(self.store, self.audit, self.audited, [Put(deleted, record.version)], [line])
        return 1

    def erase_user(
        self, scope: Scope, *, now: datetime, actor: str, queue: TurnQueue | None = None
    ) -> EraseReport:
        """GDPR erase, final by construction. First the erase barrier (``now``) is recorded in
        the source of truth, where the erase itself cannot remove it: from then on the store
        refuses records created at or before it, ingest drops turns sent or timed at or before
        it, the projector and the reconciler drop what predates it. Then the queue (``queue``,
        else the service's) drops the scope's queued and dead-lettered turns, and records, L0
        log, runtime state, session summaries and both projections are erased. The projections are also cleaned by
        the REMOVE changes the store emits; erasing them here directly means the answer is
        complete when this returns."""
        barrier = self.ledger.set_erase_barrier(scope, now)
        queue = queue or self.queue
        dropped = queue.purge_scope(scope) if queue is not None else 0
        memories = self.store.erase_scope(scope)
        turns = self.turn_log.erase_scope(scope) if self.turn_log else 0
        states = self.runtime.erase_scope(scope) if self.runtime else 0
        if self.conflicts is not None:  # pending proposals hold the user's words too
            self.conflicts.erase_scope(scope)
        summaries = self.summaries.erase_scope(scope) if self.summaries else 0
        if self.idempotency is not None:  # kept answers may quote the user's memories
            self.idempotency.erase_scope(scope)
        degraded: list[str] = []
        docs = vertices = 0
        try:
            docs = self.index.erase_scope(scope) if self.index else 0
        except StoreUnavailable:
            degraded.append("search_index")
        try:
            vertices = self.graph.erase_scope(scope) if self.graph else 0
        except StoreUnavailable:
            degraded.append("graph")
        report = EraseReport(
            memories, turns, states, docs, vertices, tuple(degraded), dropped, barrier, summaries=summaries
        )
        self._audit(
            scope,
            AuditAction.USER_ERASED,
            now,
            None,
            actor,
            {"memories": memories, "turns": turns, "queued_turns_dropped": dropped},
        )
        if self.events is not None:
            self.events.erased(scope, now, {"memories": memories, "reason": "erase_requested"})
        return report

    def set_layer(
        self, scope: Scope, memory_id: str, layer: Layer, *, now: datetime, actor: str
    ) -> MemoryRecord:
        current = self.get(scope, memory_id)
        updated = current.evolve(now=now, layer=layer)
        line = self._line(scope, AuditAction.LAYER_CHANGED, now, memory_id, actor, {"layer": layer.value})
        write_audited(self.store, self.audit, self.audited, [Put(updated, current.version)], [line])
        return updated

    def _audit(
        self,
        scope: Scope,
        action: AuditAction,
        now: datetime,
        memory_id: str | None,
        actor: str,
        details: dict[str, object],
    ) -> None:
        self.audit.append(self._line(scope, action, now, memory_id, actor, details))

    @staticmethod
    def _line(
        scope: Scope,
        action: AuditAction,
        now: datetime,
        memory_id: str | None,
        actor: str,
        details: dict[str, object],
    ) -> AuditEvent:
        return audit_event(scope, action, now, memory_id=memory_id, details={"actor": actor, **details})
