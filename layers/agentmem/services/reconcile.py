"""Reconciliation (seed 000 §8.3): compare the source of truth with both projections by version
and content hash, and repair. Missing -> re-project, Stale -> re-project, Orphan -> delete.
Each repair carries a dedupe key ``target:id:version:type`` so repeated runs don't pile up work;
the report is returned and emitted as metrics by the caller.

Records created at or before their scope's erase barrier (left by an erase that failed half-way)
are resurrections, not truth: they are hard-deleted from the store (``erased``) and their
projections are orphans, deleted with the tombstone version."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import AgentMemError, VersionConflict
from agentmem.ports import Change, GraphStore, MemoryStore, ProjectionOutcome, ProjectionState, SearchIndex
from agentmem.services.projector import TOMBSTONE_VERSION, Projector, erased_before

log = logging.getLogger(__name__)

PAGE = 500


@dataclass
class ReconcileReport:
    checked: int = 0
    missing: int = 0
    stale: int = 0
    orphan: int = 0
    repaired: int = 0
    requeued: int = 0  # re-written in the source of truth so the stream re-projects them
    erased: int = 0  # records older than their scope's erase barrier, removed from the store
    failed: int = 0
    repair_keys: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        data = dict(self.__dict__)
        data["repair_keys"] = self.repair_keys[:100]
        return data


@dataclass
class Reconciler:
    store: MemoryStore
    index: SearchIndex
    graph: GraphStore
    projector: Projector

    def run(self, *, now: datetime, max_scopes: int = 1000) -> ReconcileReport:
        report = ReconcileReport()
        cursor: str | None = None
        seen = 0
        while seen < max_scopes:
            scopes, cursor = self.store.all_scopes(min(PAGE, max_scopes - seen), cursor)
            for scope in scopes:
                self.reconcile_scope(scope, now=now, report=report)
            seen += len(scopes)
            if cursor is None or not scopes:
                break
        return report

    def reconcile_scope(
        self, scope: Scope, *, now: datetime, report: ReconcileReport | None = None
    ) -> ReconcileReport:
        report = report or ReconcileReport()
        truth: dict[str, MemoryRecord] = {}
        cursor: str | None = None
        while True:
            page = self.store.list(scope, statuses=tuple(Status), limit=PAGE, cursor=cursor)
            truth.update({r.memory_id: r for r in page.items})
            cursor = page.next_cursor
            if cursor is None:
                break
        barrier = self.store.erase_barrier(scope)
        for memory_id in [i for i, r in truth.items() if erased_before(barrier, r.created_at)]:
            del truth[memory_id]  # its projections become orphans: deleted below
            try:
                report.erased += int(self.store.hard_delete(scope, memory_id))
            except AgentMemError:
                report.failed += 1
        active = {i: r for i, r in truth.items() if r.is_active}
        for target, projection in (("index", self.index), ("graph", self.graph)):
            try:
                held = {s.memory_id: s for s in projection.all_states(scope)}
            except AgentMemError:
                report.failed += 1
                continue
            report.checked += len(active)
            self._compare(scope, target, active, truth, held, report, now)
        return report

    def _compare(
        self,
        scope: Scope,
        target: str,
        active: dict[str, MemoryRecord],
        truth: dict[str, MemoryRecord],
        held: dict[str, ProjectionState],
        report: ReconcileReport,
        now: datetime,
    ) -> None:
        repairs: dict[str, Change] = {}
        for memory_id, record in active.items():
            state = held.get(memory_id)
            if state is None:
                report.missing += 1
                kind = "missing"
            elif state.version != record.version or state.content_hash != record.content_hash:
                report.stale += 1
                kind = "stale"
            else:
                continue
            key = f"{target}:{memory_id}:{record.version}:{kind}"
            repairs[key] = Change("MODIFY", scope, memory_id, record, None)
        for memory_id, state in held.items():
            if memory_id in active:
                continue
            report.orphan += 1
            stored = truth.get(memory_id)
            key = f"{target}:{memory_id}:{state.version}:orphan"
            repairs[key] = Change("MODIFY" if stored else "REMOVE", scope, memory_id, stored, None)
        for key, change in repairs.items():
            try:
                self._repair(target, change, report, now)
                report.repair_keys.append(key)
            except AgentMemError as exc:
                log.warning("reconcile.repair_failed", extra={"key": key, "error": type(exc).__name__})
                report.failed += 1

    def _repair(self, target: str, change: Change, report: ReconcileReport, now: datetime) -> None:
        scope, record = change.scope, change.new
        if record is None or not record.is_active:
            version = TOMBSTONE_VERSION if record is None else record.version
            if target == "index":
                self.index.delete(scope, change.memory_id, version)
            else:
                self.graph.delete_memory(scope, change.memory_id, version)
            report.repaired += 1
            return
        outcome = self.index.upsert(record) if target == "index" else self.graph.upsert_memory(record)
        if outcome is ProjectionOutcome.APPLIED:
            if target == "graph":
                self.projector.apply(Change("MODIFY", scope, record.memory_id, record, None), now=now)
            report.repaired += 1
            return
        # The projection refuses this version (a tombstone at or above it, or the same version
        # with another hash): the source of truth wins by writing the record again as a new
        # version, which the change stream then projects everywhere.
        try:
            self.store.update(record.evolve(now=record.updated_at or now), record.version)
            report.requeued += 1
        except VersionConflict:
            pass  # changed meanwhile: the newer version is on its way through the stream
