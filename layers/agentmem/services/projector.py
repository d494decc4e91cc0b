"""Projector (docs/design.md, "The write path" step 8): follow the store's change stream into the
search index and graph.

INSERT / MODIFY of an active record -> upsert (version-guarded), then edges: FOLLOWS (previous
memory of the session), SIMILAR_TO (k-NN above the calibrated threshold, not a scan),
BELONGS_TO (entities). A batch asks the k-NN of its records' SIMILAR_TO edges in one request
per scope (:meth:`SearchIndex.knn_many`), after its one index request wrote them all, where every
change of the scope is decided: the active records written, the others removals, whose ids the
answer leaves out (asked with one more neighbour per removal). Each answer is then the index as
the batch leaves it; asked at link time, a memory the batch removes later would take an edge
that its removal then drops. MODIFY to superseded / deleted / quarantined and REMOVE -> delete from
both projections. Replays and out-of-order records are harmless: each projection keeps the
highest version. Same version with another hash is a conflict: counted, audited, left to the
reconciler. What is projected is the stored record read through at the image's version or a newer
one, with its vector (a store may keep the vector out of the item its stream reports, as the
DynamoDB store does); a read-through that trails the image (eventually consistent) is asked again
with ``get``. A change of a record created at or before its scope's erase barrier (a replay of
the stream from before an erase) is never projected: it removes whatever projection is left,
with the tombstone version.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from agentmem.domain.models import AuditAction, AuditEvent, MemoryRecord, Scope
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.errors import AgentMemError
from agentmem.ports import (
    AuditLog,
    Change,
    Edge,
    Embedder,
    GraphStore,
    Hit,
    MemoryStore,
    ProjectionOutcome,
    ScopeLedger,
    SearchIndex,
)

log = logging.getLogger(__name__)

SIMILAR_NEIGHBOURS = 5
BATCHED_REMOVALS = 64  # removals of a scope in one batch up to which its k-NN is still asked at once
TOMBSTONE_VERSION = 2**53  # deletes of erased records win over any replayed version


def erased_before(barrier: datetime | None, *times: datetime | None) -> bool:
    """Whether anything timed at one of ``times`` predates (or equals) the erase ``barrier``."""
    return barrier is not None and any(t is not None and t <= barrier for t in times)


@dataclass
class ProjectionReport:
    applied: int = 0
    stale: int = 0
    conflicts: int = 0
    deleted: int = 0
    edges: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    """What one change projects: ``record`` (None: remove it), whether it was erased, the
    index outcome when a batch already wrote it, and its SIMILAR_TO k-NN when the batch asked it."""

    record: MemoryRecord | None
    erased: bool
    indexed: ProjectionOutcome | None = None
    similar: tuple[Hit, ...] | None = None


@dataclass
class Projector:
    index: SearchIndex
    graph: GraphStore
    audit: AuditLog
    embedder: Embedder | None = None
    store: MemoryStore | None = None
    ledger: ScopeLedger | None = None  # the erase barriers (none read when None)
    thresholds: SimilarityThresholds = field(default_factory=SimilarityThresholds)

    def decide(self, change: Change) -> Decision:
        """What ``change`` projects, read through to the source of truth."""
        return self._decide(change, *self._read_through([change]))

    def _read_through(
        self, changes: Sequence[Change]
    ) -> tuple[dict[Scope, datetime | None], dict[tuple[Scope, str], MemoryRecord]]:
        """What deciding ``changes`` needs from the source of truth, in one read of each kind per
        scope: the erase barrier of every scope with a new image, and the stored record of every
        change whose new image is active and not erased."""
        barriers: dict[Scope, datetime | None] = {}
        if self.store is None:
            return barriers, {}
        wanted: dict[Scope, list[str]] = {}
        for change in changes:
            record = change.new if change.event_name != "REMOVE" else None
            if record is None:
                continue
            if change.scope not in barriers:
                barriers[change.scope] = (
                    self.ledger.erase_barrier(change.scope) if self.ledger is not None else None
                )
            if record.is_active and not erased_before(barriers[change.scope], record.created_at):
                wanted.setdefault(change.scope, []).append(change.memory_id)
        current: dict[tuple[Scope, str], MemoryRecord] = {}
        for scope, memory_ids in wanted.items():
            for memory_id, stored in self.store.get_many(scope, memory_ids).items():
                current[(scope, memory_id)] = stored
        return barriers, current

    def _decide(
        self,
        change: Change,
        barriers: dict[Scope, datetime | None],
        current: dict[tuple[Scope, str], MemoryRecord],
    ) -> Decision:
        record = change.new if change.event_name != "REMOVE" else None
        erased = False
        if record is not None and self.store is not None:
            erased = erased_before(barriers[change.scope], record.created_at)
            record = None if erased else record
        if record is not None and record.is_active:
            # Read through to the source of truth: a replayed INSERT of a record that was since
            # erased, superseded or deleted must not bring it back.
            stored = current.get((change.scope, change.memory_id)) if self.store is not None else record
            if self.store is not None and (stored is None or stored.version < record.version):
                stored = self.store.get(change.scope, change.memory_id)  # the batch read trailed
            if stored is None or not stored.is_active:
                record = None
            elif stored.version >= record.version:  # this write or a newer one, with its vector
                record = stored
        return Decision(record, erased)

    def prepare(self, changes: Sequence[Change]) -> list[Decision | None]:
        """A batch's decisions (the source of truth read once per scope for the whole batch),
        with the index writes of its active records done in one request
        (:meth:`SearchIndex.upsert_many`). None where deciding failed (a read of the batch
        failed: every change): :meth:`apply` then does that change alone (and raises for it, so
        only that record is retried)."""
        decisions: list[Decision | None] = []
        try:
            known = self._read_through(changes)
        except AgentMemError:
            return [None] * len(changes)
        for change in changes:
            try:
                decisions.append(self._decide(change, *known))
            except AgentMemError:
                decisions.append(None)
        writes = [(i, d.record) for i, d in enumerate(decisions) if d and d.record and d.record.is_active]
        if len(writes) > 1:
            outcomes = self.index.upsert_many([r for _, r in writes])
            for (i, _), outcome in zip(writes, outcomes, strict=True):
                decision = decisions[i]
                if outcome is not None and decision is not None:
                    decisions[i] = replace(decision, indexed=outcome)
            self._ask_similar(changes, decisions)
        return decisions

    def _ask_similar(self, changes: Sequence[Change], decisions: list[Decision | None]) -> None:
        """The SIMILAR_TO k-NN of the batch's records, one request per (scope, model), for the
        scopes whose every change the batch decided: each active record written by the batch's
        one index request, the rest removals (at most :data:`BATCHED_REMOVALS`). The answer is
        asked with one more neighbour per removal and leaves out the memories the removals will
        take from the index (not one the index holds in a newer version: a replay), so it is what
        the index holds once the batch is applied; a failure leaves the k-NN to link time."""
        if self.embedder is None:
            return
        batched, removals = _removals(changes, decisions)
        groups: dict[tuple[str, str], list[tuple[int, Decision, MemoryRecord]]] = {}
        for i, decision in enumerate(decisions):
            record = decision.record if decision is not None else None
            if decision is None or record is None or not record.is_active or not batched[record.scope.key]:
                continue
            if record.embedding is not None and record.embedding_model:
                groups.setdefault((record.scope.key, record.embedding_model), []).append(
                    (i, decision, record)
                )
        for (key, model), rows in groups.items():
            scope = rows[0][2].scope
            versions = removals.get(key, {})
            vectors = [np.asarray(r.embedding, dtype=np.float32) for _, _, r in rows]
            try:
                held = self.index.states(scope, list(versions)) if versions else {}
                gone = {m for m, state in held.items() if state.version <= versions[m]}
                found = self.index.knn_many(scope, vectors, SIMILAR_NEIGHBOURS + 1 + len(gone), model)
            except AgentMemError:
                continue
            for (i, decision, _), hits in zip(rows, found, strict=True):
                left = [h for h in hits if h.memory_id not in gone][: SIMILAR_NEIGHBOURS + 1]
                decisions[i] = replace(decision, similar=tuple(left))

    def apply(
        self,
        change: Change,
        report: ProjectionReport | None = None,
        *,
        now: datetime,
        decision: Decision | None = None,
    ) -> ProjectionReport:
        """Project one change (``decision``: from :meth:`prepare`) onto both projections. Each is
        tried even when the other is down, so an outage of one never holds the other back; then
        StoreUnavailable (or the first error) is raised for the stream to retry the record, whose
        second application to the store that took it is stale, hence harmless."""
        report = report or ProjectionReport()
        decided = decision or self.decide(change)
        record, erased = decided.record, decided.erased
        if record is not None and record.is_active:
            active = record
            outcomes = _both(
                lambda: decided.indexed or self.index.upsert(active), lambda: self.graph.upsert_memory(active)
            )
            if ProjectionOutcome.APPLIED in outcomes:
                report.edges += self.link(record, decided.similar)
        else:
            version = removal_version(change, erased)
            if self.store is not None and self.store.get(change.scope, change.memory_id) is None:
                version = TOMBSTONE_VERSION  # erased for good: outranks every version
            outcomes = _both(
                lambda: self.index.delete(change.scope, change.memory_id, version),
                lambda: self.graph.delete_memory(change.scope, change.memory_id, version),
            )
            if ProjectionOutcome.APPLIED in outcomes:
                report.deleted += 1
        if isinstance(outcomes, _Partial):  # counted when the stream's retry succeeds
            raise outcomes.error
        self._count(change, outcomes, report, now)
        return report

    def _count(
        self,
        change: Change,
        outcomes: tuple[ProjectionOutcome, ProjectionOutcome],
        report: ProjectionReport,
        now: datetime,
    ) -> None:
        if ProjectionOutcome.CONFLICT in outcomes:
            report.conflicts += 1
            report.outcomes[change.memory_id] = "conflict"
            self.audit.append(
                AuditEvent(
                    scope=change.scope,
                    action=AuditAction.PROJECTION_CONFLICT,
                    at=now,
                    memory_id=change.memory_id,
                    reason="same_version_different_hash",
                    details={
                        "targets": [
                            t
                            for t, o in zip(("index", "graph"), outcomes, strict=True)
                            if o is ProjectionOutcome.CONFLICT
                        ]
                    },
                )
            )
        elif ProjectionOutcome.APPLIED in outcomes:
            report.applied += 1
            report.outcomes[change.memory_id] = "applied"
        else:
            report.stale += 1
            report.outcomes[change.memory_id] = "stale"

    def link(self, record: MemoryRecord, similar: Sequence[Hit] | None = None) -> int:
        """Add the record's edges (FOLLOWS, SIMILAR_TO, BELONGS_TO); returns how many were new.
        ``similar``: the k-NN its batch asked for it (else asked now)."""
        scope = record.scope
        edges: list[Edge] = []
        session = record.source_refs.session_id
        if session:
            previous = self.graph.previous_in_session(scope, session, record.memory_id)
            if previous:
                edges.append(Edge(previous, record.memory_id, "FOLLOWS"))
        if record.embedding is not None and record.embedding_model and self.embedder is not None:
            vector = np.asarray(record.embedding, dtype=np.float32)
            calibration = self.embedder.calibration
            nearest = similar
            if nearest is None:
                nearest = self.index.knn(scope, vector, SIMILAR_NEIGHBOURS + 1, record.embedding_model)
            for hit in nearest:
                if hit.memory_id == record.memory_id:
                    continue
                similarity = calibration.documents(hit.score)
                if similarity >= self.thresholds.similar_edge:
                    edges.append(Edge(record.memory_id, hit.memory_id, "SIMILAR_TO", round(similarity, 4)))
        created = self.graph.link(scope, edges) if edges else 0
        if record.entities:
            created += self.graph.link_entities(scope, record.memory_id, record.entities)
        return created


def removal_version(change: Change, erased: bool) -> int:
    """The version a removal deletes the projections' copy at: the change's, or
    :data:`TOMBSTONE_VERSION` (outranking every version) for an erased or removed item."""
    known = [r.version for r in (change.new, change.old) if r is not None]
    return TOMBSTONE_VERSION if erased or change.event_name == "REMOVE" or not known else max(known)


def _removals(
    changes: Sequence[Change], decisions: Sequence[Decision | None]
) -> tuple[dict[str, bool], dict[str, dict[str, int]]]:
    """Per scope key: whether the batch's k-NN can be asked at once (every change decided,
    each active record written by the batch's index request, at most :data:`BATCHED_REMOVALS`
    removals), and the version each removal deletes at (:func:`removal_version`; a memory removed
    and written again in the batch is not removed)."""
    batched: dict[str, bool] = {}
    removals: dict[str, dict[str, int]] = {}
    kept: set[tuple[str, str]] = set()
    for change, decision in zip(changes, decisions, strict=True):
        key = change.scope.key
        record = decision.record if decision is not None else None
        if decision is not None and record is not None and record.is_active:
            batched[key] = batched.get(key, True) and decision.indexed is not None
            kept.add((key, change.memory_id))
            continue
        batched[key] = batched.get(key, True) and decision is not None
        version = removal_version(change, decision is not None and decision.erased)
        ids = removals.setdefault(key, {})
        ids[change.memory_id] = max(version, ids.get(change.memory_id, 0))
    for key, ids in removals.items():
        for memory_id in [m for m in ids if (key, m) in kept]:
            del ids[memory_id]
        if len(ids) > BATCHED_REMOVALS:
            batched[key] = False
    return batched, removals


@dataclass(frozen=True)
class _Partial:
    """One projection took the change and the other raised ``error``."""

    done: tuple[ProjectionOutcome, ProjectionOutcome]
    error: AgentMemError

    def __contains__(self, outcome: object) -> bool:
        return outcome in self.done


def _both(
    index: Callable[[], ProjectionOutcome], graph: Callable[[], ProjectionOutcome]
) -> tuple[ProjectionOutcome, ProjectionOutcome] | _Partial:
    """Run both projection writes; an error of the first does not skip the second."""
    results: list[ProjectionOutcome] = []
    errors: list[AgentMemError] = []
    for write in (index, graph):
        try:
            results.append(write())
        except AgentMemError as exc:
            errors.append(exc)
            results.append(ProjectionOutcome.STALE)
    done = (results[0], results[1])
    return _Partial(done, errors[0]) if errors else done
