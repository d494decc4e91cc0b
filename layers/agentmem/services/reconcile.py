"""Reconciliation (docs/design.md, "Projections and their repair"): compare the source of truth
with both projections by version and content hash, and repair. Missing -> re-project, Stale -> re-project, Orphan -> delete.
Edges lost under live vertices are linked again. Each repair carries a dedupe key
``target:id:version:type``; the report is returned and emitted as metrics by the caller.

Records created at or before their scope's erase barrier (left by an erase that failed half-way)
are resurrections, not truth: they are hard-deleted from the store (``erased``) and their
projections are orphans, deleted with the tombstone version.

A run (:meth:`Reconciler.run`) first checks the scopes with pending writes (the ones most likely
to have drifted; at most ``dirty_first``), then walks the scope registry from the cursor its
segment saved last time (:meth:`~agentmem.ports.ScopeLedger.reconcile_cursor`), scope by scope,
until its time budget is spent, and saves where it stopped; the next run continues there. At
the end of the registry the pass is complete (its start, end and number of scopes are kept with
the cursor and reported) and the next run starts a new one: a run never walks more than one
pass. Segment ``i`` of ``n`` owns a disjoint part of the scope space
(:mod:`agentmem.domain.scope_walk`) with its own cursor, so ``n`` runs can go in parallel.
The cursor is the page a run was in plus how many of its scopes were done, so a run stops
between any two scopes. A store that fails stops the walk where it is (retried by the next
run); a scope that fails otherwise is counted as failed and passed over."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.domain.scope_walk import ReconcileCursor, ReconcilePass, check_segment, in_segment
from agentmem.errors import AgentMemError, StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import (
    Change,
    GraphStore,
    MemoryStore,
    ProjectionOutcome,
    ProjectionState,
    ScopeLedger,
    SearchIndex,
)
from agentmem.services.projector import TOMBSTONE_VERSION, Projector, erased_before

log = logging.getLogger(__name__)

PAGE = 500  # records per listing of one scope
PAGE_SCOPES = 100  # scopes per page of the walk
DIRTY_FIRST = 100  # pending scopes checked before the walk, at most


@dataclass(frozen=True)
class ReconcileRequest:
    """What one reconcile invocation is asked to walk: segment ``segment`` of ``segments``."""

    segment: int = 0
    segments: int = 1

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> ReconcileRequest:
        """From a scheduled event: ``segment`` / ``segments`` at the top level (a rule target's
        ``Input``) or in ``detail``; neither: the one segment of everything. Raises
        ValidationFailed for anything else."""
        source = event if "segment" in event or "segments" in event else (event.get("detail") or {})
        segment, segments = source.get("segment", 0), source.get("segments", 1)
        if not isinstance(segment, int) or not isinstance(segments, int) or isinstance(segment, bool):
            raise ValidationFailed("segment and segments must be integers")
        try:
            check_segment(segment, segments)
        except ValueError as exc:
            raise ValidationFailed(str(exc), details={"segment": segment, "segments": segments}) from exc
        return cls(segment, segments)


def run_budget(budget_s: float, margin_s: float, remaining_s: float | None) -> timedelta:
    """``budget_s``, cut to what the invocation has left (``remaining_s``, None: unknown) minus
    ``margin_s``, never below zero."""
    seconds = budget_s if remaining_s is None else min(budget_s, remaining_s - margin_s)
    return timedelta(seconds=max(0.0, seconds))


@dataclass
class ReconcileReport:
    checked: int = 0
    missing: int = 0
    stale: int = 0
    orphan: int = 0
    repaired: int = 0
    requeued: int = 0  # re-written in the source of truth so the stream re-projects them
    relinked: int = 0  # memories whose graph edges were gone, linked again
    erased: int = 0  # records older than their scope's erase barrier, removed from the store
    failed: int = 0
    repair_keys: list[str] = field(default_factory=list)
    segment: int = 0
    segments: int = 1
    scopes_checked: int = 0  # scopes reconciled by this run (dirty ones included)
    dirty_checked: int = 0  # of those, scopes with pending writes, checked before the walk
    cursor: str | None = None  # where the next run of this segment resumes (None: a new pass)
    pass_completed: bool = False  # this run reached the end of the segment's scopes
    budget_exhausted: bool = False  # this run stopped because its time budget was spent
    interrupted: str | None = None  # the store error that stopped the walk (retried next run)
    last_pass: dict[str, object] | None = None  # started_at, completed_at, scopes_checked

    def to_dict(self) -> dict[str, object]:
        data = dict(self.__dict__)
        data["repair_keys"] = self.repair_keys[:100]
        return data


@dataclass
class _Walk:
    """The saved cursor of a segment, advanced scope by scope."""

    saved: ReconcileCursor
    position: str | None = None
    skip: int = 0
    pass_started_at: datetime | None = None
    pass_scopes: int = 0

    @classmethod
    def resume(cls, saved: ReconcileCursor) -> _Walk:
        return cls(saved, saved.position, saved.skip, saved.pass_started_at, saved.pass_scopes)

    def cursor(self, last_pass: ReconcilePass | None) -> ReconcileCursor:
        return replace(
            self.saved,
            position=self.position,
            skip=self.skip,
            pass_started_at=self.pass_started_at,
            pass_scopes=self.pass_scopes,
            last_pass=last_pass,
        )


@dataclass
class Reconciler:
    """Reconciles the pending (dirty) scopes of a segment, then walks the segment's scopes from
    its saved cursor until the time budget is spent or the pass ends (module docstring)."""

    store: MemoryStore
    ledger: ScopeLedger  # the scope walk, its cursors, the dirty scopes and the erase barrier
    index: SearchIndex
    graph: GraphStore
    projector: Projector
    clock: Callable[[], datetime] | None = None  # measures the budget; None: ``now`` throughout

    def run(
        self,
        *,
        now: datetime,
        budget: timedelta | None = None,
        segment: int = 0,
        segments: int = 1,
        max_scopes: int | None = None,
        dirty_first: int = DIRTY_FIRST,
    ) -> ReconcileReport:
        """One run: at most one pass, stopped early by ``budget`` (measured on :attr:`clock`) or
        ``max_scopes``. Raises ValueError for a segment outside ``0 <= segment < segments <=
        SCOPE_SHARDS``; a store that fails mid-walk ends the run with the cursor saved."""
        check_segment(segment, segments)
        clock = self.clock or (lambda: now)
        deadline = None if budget is None else clock() + budget
        report = ReconcileReport(segment=segment, segments=segments)

        def stop() -> bool:
            if deadline is not None and clock() >= deadline:
                report.budget_exhausted = True
            return report.budget_exhausted or (max_scopes is not None and report.scopes_checked >= max_scopes)

        done = self._dirty_first(now, segment, segments, dirty_first, stop, report)
        saved = self.ledger.reconcile_cursor(segment, segments) or ReconcileCursor(segment, segments)
        walk = _Walk.resume(saved)
        last_pass = saved.last_pass
        try:
            last_pass = self._walk(walk, now, clock, done, stop, report) or last_pass
        finally:
            self.ledger.save_reconcile_cursor(walk.cursor(last_pass))
            report.cursor = walk.position
            if last_pass is not None:
                report.last_pass = {
                    "started_at": last_pass.started_at.isoformat(),
                    "completed_at": last_pass.completed_at.isoformat(),
                    "scopes_checked": last_pass.scopes_checked,
                }
        log.info(
            "reconcile.run",
            extra={
                "segment": segment,
                "segments": segments,
                "scopes_checked": report.scopes_checked,
                "pass_completed": report.pass_completed,
                "budget_exhausted": report.budget_exhausted,
            },
        )
        return report

    def _dirty_first(
        self,
        now: datetime,
        segment: int,
        segments: int,
        limit: int,
        stop: Callable[[], bool],
        report: ReconcileReport,
    ) -> set[str]:
        """Scopes with writes since their last consolidation drift most: checked every run."""
        done: set[str] = set()
        if limit <= 0:
            return done
        try:
            pending = self.ledger.pending_scopes(limit)
        except StoreUnavailable as exc:
            report.failed += 1
            log.warning("reconcile.pending_unavailable", extra={"error": type(exc).__name__})
            return done
        for scope, _ in pending:
            if not in_segment(scope, segment, segments) or scope.key in done:
                continue
            if stop() or not self._check(scope, now, report):
                break
            done.add(scope.key)
            report.dirty_checked += 1
        return done

    def _walk(
        self,
        walk: _Walk,
        now: datetime,
        clock: Callable[[], datetime],
        done: set[str],
        stop: Callable[[], bool],
        report: ReconcileReport,
    ) -> ReconcilePass | None:
        """Advance ``walk`` scope by scope; the finished pass when it reaches the end."""
        while not stop():
            try:
                scopes, after = self.ledger.all_scopes(
                    PAGE_SCOPES, walk.position, segment=walk.saved.segment, segments=walk.saved.segments
                )
            except StoreUnavailable as exc:
                report.failed += 1
                report.interrupted = type(exc).__name__
                return None
            if walk.pass_started_at is None:
                walk.pass_started_at = clock()
            for scope in scopes[walk.skip :]:
                if stop():
                    return None
                if scope.key not in done and not self._check(scope, now, report):
                    return None
                walk.skip += 1
                walk.pass_scopes += 1
            walk.position, walk.skip = after, 0
            if after is None:
                finished = ReconcilePass(walk.pass_started_at, clock(), walk.pass_scopes)
                walk.pass_started_at, walk.pass_scopes = None, 0
                report.pass_completed = True
                return finished
        return None

    def _check(self, scope: Scope, now: datetime, report: ReconcileReport) -> bool:
        """Reconcile one scope; False when the store is unavailable (the walk stops there and
        resumes at this scope). Any other error counts as failed and the walk goes on."""
        try:
            self.reconcile_scope(scope, now=now, report=report)
        except StoreUnavailable as exc:
            report.failed += 1
            report.interrupted = type(exc).__name__
            log.warning("reconcile.store_unavailable", extra={"error": type(exc).__name__})
            return False
        except AgentMemError as exc:
            report.failed += 1
            log.warning("reconcile.scope_failed", extra={"error": type(exc).__name__})
        report.scopes_checked += 1
        return True

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
        barrier = self.ledger.erase_barrier(scope)
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
            if target == "graph":
                self._relink(scope, active, held, report)
        return report

    def _relink(
        self,
        scope: Scope,
        active: dict[str, MemoryRecord],
        held: dict[str, ProjectionState],
        report: ReconcileReport,
    ) -> None:
        """Edges lost under live vertices: an active memory that should have one (it names
        entities, or shares its session) and has none is linked again."""
        sessions = Counter(r.source_refs.session_id for r in active.values() if r.source_refs.session_id)
        expected = [
            memory_id
            for memory_id, record in active.items()
            if memory_id in held and (record.entities or sessions[record.source_refs.session_id or ""] > 1)
        ]
        if not expected:
            return
        try:
            degrees = self.graph.degree(scope, expected)
        except AgentMemError:
            report.failed += 1
            return
        for memory_id in expected:
            if degrees.get(memory_id, 0) > 0:
                continue
            try:
                if self.projector.link(active[memory_id]):
                    report.relinked += 1
                    report.repaired += 1
            except AgentMemError:
                report.failed += 1

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
