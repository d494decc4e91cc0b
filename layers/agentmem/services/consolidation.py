"""Consolidation execution: for each scope with pending writes, plan (pure) then apply with
version checks (decays, merges, expiries of short-term memories past their TTL, evictions). A merge is one transaction (survivor updated + absorbed superseded) so it
happens all or nothing; a version conflict skips that step and leaves it to the next run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from agentmem.domain.consolidation import ConsolidationConfig, Plan, plan
from agentmem.domain.models import AuditAction, AuditEvent, Confidence, MemoryRecord, Scope, Status
from agentmem.domain.scoring import Scorer
from agentmem.errors import AgentMemError, VersionConflict
from agentmem.ports import AuditLog, Embedder, GraphStore, MemoryStore, Put, ScopeLedger

log = logging.getLogger(__name__)

WORKING_SET = 2000
NEIGHBOURS = 5
HUBS_PROTECTED = 3
HUB_MIN_DEGREE = 5  # a hub links many memories; a pair of duplicates linking each other is not one


@dataclass
class ConsolidationReport:
    scopes: int = 0
    decayed: int = 0
    merged: int = 0
    deduplicated: int = 0
    evicted: int = 0
    expired: int = 0
    conflicts: int = 0
    degraded: list[str] = field(default_factory=list)
    budget_exhausted: bool = False  # stopped with ready scopes left: the next run takes them

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class ConsolidationService:
    store: MemoryStore
    ledger: ScopeLedger  # which scopes wait for consolidation
    audit: AuditLog
    embedder: Embedder
    scorer: Scorer
    config: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    graph: GraphStore | None = None
    trigger_every: int = 5
    clock: Callable[[], datetime] | None = None  # measures a run's budget; None: ``now`` throughout

    def run_pending(
        self, *, now: datetime, max_scopes: int = 100, force: bool = False, budget: timedelta | None = None
    ) -> ConsolidationReport:
        """Consolidate scopes with at least ``trigger_every`` pending writes (all when forced).

        Without ``budget``: one page of ``max_scopes``. With one: page after page, ready scopes
        first (the store's order), until none is ready or the budget (measured on :attr:`clock`)
        is spent, so a run keeps up with more users than one page per schedule tick; a scope is
        taken once per run, even if an index lagging behind its cleared counter lists it again."""
        report = ConsolidationReport()
        clock = self.clock or (lambda: now)
        deadline = None if budget is None else clock() + budget
        done: set[Scope] = set()
        while True:
            page = self.ledger.pending_scopes(max_scopes)
            ready = [s for s, count in page if (force or count >= self.trigger_every) and s not in done]
            for scope in ready:
                if deadline is not None and clock() >= deadline:
                    report.budget_exhausted = True
                    return report
                self.consolidate(scope, now=now, report=report)
                self.ledger.clear_pending(scope)
                done.add(scope)
            if deadline is None or not ready:
                return report

    def consolidate(
        self, scope: Scope, *, now: datetime, report: ConsolidationReport | None = None
    ) -> ConsolidationReport:
        report = report or ConsolidationReport()
        items = self.store.scan_active(scope, WORKING_SET)
        hubs: frozenset[str] = frozenset()
        if self.graph is not None and items:
            try:
                degrees = self.graph.degree(scope, [r.memory_id for r in items])
                central = [i for i in degrees if degrees[i] >= HUB_MIN_DEGREE]
                hubs = frozenset(sorted(central, key=lambda i: degrees[i], reverse=True)[:HUBS_PROTECTED])
            except AgentMemError:
                report.degraded.append("graph")
        the_plan = plan(items, now, self.config, pairs=self._pairs(items), hubs=hubs, scorer=self.scorer)
        self._execute(scope, the_plan, {r.memory_id: r for r in items}, now, report)
        report.scopes += 1
        return report

    def _pairs(self, items: list[MemoryRecord]) -> list[tuple[str, str, float]]:
        """Nearest-neighbour pairs within the working set (top NEIGHBOURS each), calibrated."""
        usable = [r for r in items if r.embedding is not None and r.embedding_model == self.embedder.model_id]
        if len(usable) < 2:
            return []
        matrix = np.asarray([r.embedding for r in usable], dtype=np.float32)
        sims = matrix @ matrix.T
        np.fill_diagonal(sims, -1.0)
        calibration = self.embedder.calibration
        pairs: dict[tuple[str, str], float] = {}
        top = min(NEIGHBOURS, len(usable) - 1)
        for i, row in enumerate(sims):
            for j in np.argpartition(-row, top - 1)[:top]:
                a, b = sorted((usable[i].memory_id, usable[int(j)].memory_id))
                pairs[(a, b)] = calibration.documents(float(row[j]))
        return [(a, b, s) for (a, b), s in pairs.items()]

    def _execute(
        self,
        scope: Scope,
        the_plan: Plan,
        by_id: dict[str, MemoryRecord],
        now: datetime,
        report: ConsolidationReport,
    ) -> None:
        for decay in the_plan.decays:
            record = by_id[decay.memory_id]
            try:
                self.store.update(record.evolve(now=now, importance=decay.importance), decay.expected_version)
                report.decayed += 1
            except VersionConflict:
                report.conflicts += 1
        for merge in the_plan.merges:
            survivor = self.store.get(scope, merge.survivor_id)
            absorbed = self.store.get(scope, merge.absorbed_id)
            if survivor is None or absorbed is None or not (survivor.is_active and absorbed.is_active):
                continue
            refs = survivor.source_refs
            for message_id in absorbed.source_refs.message_ids:
                refs = refs.with_message(message_id)
            kept = survivor.evolve(
                now=now,
                importance=merge.importance,
                access_count=survivor.access_count + absorbed.access_count,
                source_refs=refs,
                tags=tuple(dict.fromkeys((*survivor.tags, *absorbed.tags))),
            )
            folded = absorbed.evolve(
                now=now, status=Status.SUPERSEDED, superseded_by=survivor.memory_id, valid_to=now
            )
            try:
                self.store.transact([Put(kept, survivor.version), Put(folded, absorbed.version)])
            except VersionConflict:
                report.conflicts += 1
                continue
            if merge.kind == "dedup":
                report.deduplicated += 1
            else:
                report.merged += 1
            self._audit(scope, AuditAction(merge.kind), now, merge.absorbed_id, f"into:{merge.survivor_id}")
        for expiry in the_plan.expiries:
            record = by_id[expiry.memory_id]
            changed = record.evolve(now=now, confidence=Confidence.EXPIRED, importance=expiry.importance)
            try:
                self.store.update(changed, expiry.expected_version)
            except VersionConflict:
                report.conflicts += 1
                continue
            report.expired += 1
            self._audit(scope, AuditAction.EXPIRED, now, expiry.memory_id, "short_term_ttl")
        for eviction in the_plan.evictions:
            victim = self.store.get(scope, eviction.memory_id)
            if victim is None or not victim.is_active:
                continue
            try:
                self.store.update(victim.evolve(now=now, status=Status.DELETED, valid_to=now), victim.version)
                report.evicted += 1
                self._audit(scope, AuditAction.EVICTED, now, eviction.memory_id, eviction.reason)
            except VersionConflict:
                report.conflicts += 1

    def _audit(self, scope: Scope, action: AuditAction, now: datetime, memory_id: str, reason: str) -> None:
        self.audit.append(AuditEvent(scope=scope, action=action, at=now, memory_id=memory_id, reason=reason))
