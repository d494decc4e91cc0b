"""Reindex on a change of embedding model (docs/providers/README.md, "Changing the embedder of
existing data"): every active memory re-embedded with the target model while the old vectors
keep serving, then switched.

Vectors of two models are never compared: each memory records its ``embedding_model``, and
recall, the write path, consolidation and the search index's k-NN and similarity queries use
only vectors of the model they run. So a model change re-embeds every active memory, in two
steps, each a walk over the scope ledger that a time budget may cut (its place is saved in the
:class:`~agentmem.ports.ReindexJournal` after every scope, and the next run resumes there):

* **stage** — each active memory of another model is embedded with the target model and kept
  in the journal with the version and content hash it was embedded at; a memory staged at its
  current version is not embedded again. Where the target model has an index of its own (AWS:
  a k-NN index per model, :attr:`Reindexer.index`) the re-embedded record is indexed there at
  its current version, so that index is complete when the service moves to it. Nothing the
  service reads changes. Records older than their scope's erase barrier are not staged.
* **switch** — (run once the service embeds with the target model) each active memory still
  of another model gets its staged vector and the model, ``version + 1``, written
  conditionally on the version staged, a scope's memories :attr:`Reindexer.chunk` to a
  transaction; a memory written after it was staged is embedded again first. A transaction
  cancelled by a concurrent write is retried on a fresh listing (:data:`SWITCH_ATTEMPTS`), then
  left to the next pass (``conflicts``). The store's change feed then brings the index along.

Each pass ends with a sweep of the scopes it staged whose erase barrier is at or after their
listing (erased meanwhile): their staged vectors are dropped, the target index's documents of
the scope erased, and what the scope holds now is staged again — an erase is final for the
reindex's copies too.

The embedded data directory's command (``agentmem reindex``) stages through this service and
switches in one store transaction instead (:mod:`agentmem_dev.reindex`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.ports import (
    Embedder,
    MemoryStore,
    ProjectionOutcome,
    Put,
    ReindexJournal,
    ReindexProgress,
    ScopeLedger,
    SearchIndex,
    StagedVector,
)
from agentmem.services.projector import TOMBSTONE_VERSION, erased_before

log = logging.getLogger(__name__)

PAGE = 500  # records per listing of one scope
PAGE_SCOPES = 100  # scopes per page of the walk
SWITCH_ATTEMPTS = 3  # listings of one scope before its switch is left to the next pass
CHUNK = 40  # memories per switch transaction (two actions each on DynamoDB: record and vector)


class ReindexStep(StrEnum):
    STAGE = "stage"
    SWITCH = "switch"
    STATUS = "status"  # report the saved progress, do nothing


@dataclass(frozen=True)
class ReindexRequest:
    step: ReindexStep = ReindexStep.STATUS

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> ReindexRequest:
        """From an operator's invocation: ``{"step": "stage" | "switch" | "status"}`` (none:
        status). Raises ValidationFailed for anything else."""
        step = event.get("step", ReindexStep.STATUS.value)
        try:
            return cls(ReindexStep(step))
        except ValueError:
            raise ValidationFailed(
                "step must be one of stage, switch, status", details={"step": str(step)[:40]}
            ) from None


@dataclass
class ReindexReport:
    """One run: what it did (``staged`` ... ``switched``: this run's counts), where the walk
    stands (``progress``: the pass's totals, saved), and what the operator does next."""

    model: str
    step: str
    scopes: int = 0
    staged: int = 0
    reused: int = 0
    caught_up: int = 0  # written after staging, embedded again at the switch
    switched: int = 0
    conflicts: int = 0
    swept: int = 0
    pass_completed: bool = False
    budget_exhausted: bool = False
    interrupted: str | None = None  # the store error that stopped the walk (retried next run)
    progress: ReindexProgress | None = None
    next: str = ""

    def to_dict(self) -> dict[str, object]:
        data = {k: v for k, v in self.__dict__.items() if k != "progress"}
        if self.progress is not None:
            p = self.progress
            data["progress"] = {
                "step": p.step,
                "scopes": p.scopes,
                "memories": p.memories,
                "staged": p.staged,
                "reused": p.reused,
                "switched": p.switched,
                "conflicts": p.conflicts,
                "swept": p.swept,
                "stage_done": p.stage_done,
                "switch_done": p.switch_done,
                "in_pass": p.pass_started_at is not None,
                "updated_at": p.updated_at.isoformat() if p.updated_at else None,
            }
        return data


def matches(staged: StagedVector | None, record: MemoryRecord) -> bool:
    """Whether ``staged`` was embedded from ``record`` as it is now."""
    return (
        staged is not None and staged.version == record.version and staged.content_hash == record.content_hash
    )


@dataclass
class _Scope:
    """The counts of one scope: the work done (embedded, switched) counts at once; what was
    seen (memories, reused) once the scope is done, so a scope cut and done again counts once."""

    memories: int = 0
    reused: int = 0
    staged: int = 0
    caught_up: int = 0
    switched: int = 0
    conflicts: int = 0


@dataclass
class Reindexer:
    """Stages and switches every active memory to :attr:`embedder`'s model (module docstring)."""

    store: MemoryStore
    ledger: ScopeLedger
    embedder: Embedder  # the target model
    journal: ReindexJournal
    clock: Callable[[], datetime]
    index: SearchIndex | None = None  # the target model's own index, filled while staging (None: none)
    batch: int = 64  # memories per embedding request
    chunk: int = CHUNK
    on_embedded: Callable[[int], None] = field(default=lambda n: None)  # a progress bar's update

    def __post_init__(self) -> None:
        if self.journal.model_id != self.embedder.model_id:
            raise ValueError(
                f"the journal is of {self.journal.model_id}, the embedder of {self.embedder.model_id}"
            )

    @property
    def model(self) -> str:
        return self.embedder.model_id

    # ------------------------------------------------------------------ runs

    def run(self, step: ReindexStep, *, budget: timedelta | None = None) -> ReindexReport:
        """One run of ``step`` until its pass ends or ``budget`` is spent. Raises
        ValidationFailed for a switch before a whole stage pass, VersionConflict when another
        run saved the progress meanwhile (two runs at once: this one stops)."""
        report = ReindexReport(self.model, step.value)
        progress = self.journal.progress() or ReindexProgress(self.model)
        if step is ReindexStep.STATUS:
            report.progress = progress
            report.next = _next(progress)
            return report
        if step is ReindexStep.SWITCH and not progress.stage_done:
            raise ValidationFailed(
                "stage every memory first: the switch needs a whole stage pass",
                details={"model": self.model, "step": progress.step},
            )
        if progress.step != step.value or progress.pass_started_at is None:
            progress = _new_pass(progress, step, self.clock())
        deadline = None if budget is None else self.clock() + budget

        def stop() -> bool:
            if deadline is not None and self.clock() >= deadline:
                report.budget_exhausted = True
            return report.budget_exhausted

        per_scope = self.stage_scope if step is ReindexStep.STAGE else self.switch_scope
        try:
            done = self._walk(progress, per_scope, stop, report) and self._sweep(progress, stop, report)
        except StoreUnavailable as exc:
            report.interrupted = type(exc).__name__
            log.warning("reindex.interrupted", extra={"step": step.value, "error": type(exc).__name__})
            done = False
        if done:
            report.pass_completed = True
            if step is ReindexStep.STAGE:
                progress.stage_done = True
            else:
                progress.switch_done = progress.conflicts == 0
            progress.pass_started_at = None
        self._save(progress)
        report.progress = progress
        report.next = _next(progress)
        log.info(
            "reindex.run",
            extra={
                "step": step.value,
                "model": self.model,
                "scopes": report.scopes,
                "staged": report.staged,
                "switched": report.switched,
                "pass_completed": report.pass_completed,
                "budget_exhausted": report.budget_exhausted,
            },
        )
        return report

    def _save(self, progress: ReindexProgress) -> None:
        progress.updated_at = self.clock()
        progress.revision = self.journal.save_progress(progress).revision

    def _walk(
        self,
        progress: ReindexProgress,
        per_scope: Callable[[Scope, Callable[[], bool], _Scope], bool],
        stop: Callable[[], bool],
        report: ReindexReport,
    ) -> bool:
        """Every scope of the ledger from the saved place; True when the walk reached its end."""
        while not progress.sweeping:
            if stop():
                return False
            scopes, after = self.ledger.all_scopes(PAGE_SCOPES, progress.position)
            for scope in scopes[progress.skip :]:
                if stop():
                    return False
                counts = _Scope()
                done = per_scope(scope, stop, counts)
                _add(progress, report, counts, done)
                if not done:
                    return False
                progress.skip += 1
                progress.scopes += 1
                report.scopes += 1
                self._save(progress)
            progress.position, progress.skip = after, 0
            if after is None:
                progress.sweeping = True
        return True

    def _sweep(self, progress: ReindexProgress, stop: Callable[[], bool], report: ReindexReport) -> bool:
        """The staged scopes erased since their listing: their staged vectors dropped, the
        target index's documents of memories no longer there deleted, what the scope holds now
        staged again. True when the sweep reached its end."""
        while True:
            if stop():
                return False
            marked, after = self.journal.staged_scopes(PAGE_SCOPES, progress.sweep_position)
            for scope, listed_at in marked:
                barrier = self.ledger.erase_barrier(scope)
                if barrier is None or barrier < listed_at:
                    continue
                self.journal.discard_scope(scope)
                self._drop_erased_documents(scope, barrier)
                counts = _Scope()
                self.stage_scope(scope, lambda: False, counts)
                _add(progress, report, counts, True)
                progress.swept += 1
                report.swept += 1
            progress.sweep_position = after
            if after is None:
                progress.sweeping, progress.sweep_position = False, None
                return True
            self._save(progress)

    def _drop_erased_documents(self, scope: Scope, barrier: datetime) -> None:
        """Delete the target index's documents of ``scope`` that are not an active memory
        created after ``barrier`` (the erase reached the serving index, not this one)."""
        if self.index is None:
            return
        alive: dict[str, int] = {}
        cursor: str | None = None
        while True:
            page = self.store.list(
                scope, statuses=(Status.ACTIVE,), limit=PAGE, cursor=cursor, embeddings=False
            )
            alive.update(
                {r.memory_id: r.version for r in page.items if not erased_before(barrier, r.created_at)}
            )
            cursor = page.next_cursor
            if cursor is None:
                break
        for state in self.index.all_states(scope):
            if state.memory_id not in alive:
                self.index.delete(scope, state.memory_id, TOMBSTONE_VERSION)

    # ------------------------------------------------------------------ one scope

    def _of_another_model(self, scope: Scope) -> Iterator[list[MemoryRecord]]:
        """The scope's active memories of another model (vectors left out), a page at a time."""
        cursor: str | None = None
        while True:
            page = self.store.list(
                scope, statuses=(Status.ACTIVE,), limit=PAGE, cursor=cursor, embeddings=False
            )
            yield [r for r in page.items if r.embedding_model != self.model]
            cursor = page.next_cursor
            if cursor is None:
                return

    def _embed(self, records: Sequence[MemoryRecord]) -> list[StagedVector]:
        vectors = self.embedder.embed_documents([r.content for r in records])
        self.on_embedded(len(records))
        return [
            StagedVector(r.memory_id, r.version, r.content_hash, tuple(float(x) for x in v))
            for r, v in zip(records, vectors, strict=True)
        ]

    def stage_scope(self, scope: Scope, stop: Callable[[], bool], counts: _Scope) -> bool:
        """Stage the scope's memories not staged at their current version; False when ``stop``
        cut it (what was staged is kept: the scope's next run reuses it)."""
        listed_at = self.clock()
        barrier = self.ledger.erase_barrier(scope)
        marked = False
        for page in self._of_another_model(scope):
            page = [r for r in page if not erased_before(barrier, r.created_at)]
            staged = self.journal.staged(scope, [r.memory_id for r in page])
            fresh = [r for r in page if not matches(staged.get(r.memory_id), r)]
            counts.memories += len(page)
            counts.reused += len(page) - len(fresh)
            for start in range(0, len(fresh), self.batch):
                if stop():
                    return False
                records = fresh[start : start + self.batch]
                rows = self._embed(records)
                self._index(records, rows)
                self.journal.keep(scope, rows)
                counts.staged += len(rows)
                if not marked:
                    self.journal.mark_scope(scope, listed_at)
                    marked = True
            if staged and not marked:
                self.journal.mark_scope(scope, listed_at)
                marked = True
        return True

    def _index(self, records: Sequence[MemoryRecord], rows: Sequence[StagedVector]) -> None:
        """Index the re-embedded records in the target model's index, at their current version
        (the switch's ``version + 1`` replaces them through the change feed). A document that
        could not be written fails the scope (StoreUnavailable): its vectors are not kept, so
        the next run stages it again."""
        if self.index is None:
            return
        moved = [
            replace(r, embedding=row.vector, embedding_model=self.model)
            for r, row in zip(records, rows, strict=True)
        ]
        outcomes = self.index.upsert_many(moved)
        if any(o is None for o in outcomes):
            raise StoreUnavailable(
                "search index: staged documents were not written", details={"store": "search-index"}
            )
        if any(o is ProjectionOutcome.CONFLICT for o in outcomes):
            log.warning("reindex.index_conflict", extra={"model": self.model})  # left to the reconciler

    def switch_scope(self, scope: Scope, stop: Callable[[], bool], counts: _Scope) -> bool:
        """Move the scope's memories still of another model to their staged vectors (embedding
        again those written since), ``version + 1``, conditional on the version staged. A
        scope that keeps meeting concurrent writes is counted in ``conflicts`` and passed."""
        for _ in range(SWITCH_ATTEMPTS):
            counts.memories = counts.reused = 0
            try:
                self._switch_once(scope, counts)
                return True
            except VersionConflict:
                continue
        counts.conflicts += 1
        return True

    def _switch_once(self, scope: Scope, counts: _Scope) -> None:
        for page in self._of_another_model(scope):
            staged = self.journal.staged(scope, [r.memory_id for r in page])
            late = [r for r in page if not matches(staged.get(r.memory_id), r)]
            for start in range(0, len(late), self.batch):
                rows = self._embed(late[start : start + self.batch])
                self.journal.keep(scope, rows)
                staged.update({row.memory_id: row for row in rows})
                counts.caught_up += len(rows)
            counts.memories += len(page)
            counts.reused += len(page) - len(late)
            puts = [
                Put(
                    replace(
                        r,
                        embedding=staged[r.memory_id].vector,
                        embedding_model=self.model,
                        version=r.version + 1,
                    ),
                    r.version,
                )
                for r in page
            ]
            for start in range(0, len(puts), self.chunk):
                chunk = puts[start : start + self.chunk]
                self.store.transact(chunk)
                counts.switched += len(chunk)


def _add(progress: ReindexProgress, report: ReindexReport, counts: _Scope, done: bool) -> None:
    """Add one scope's counts to the run's report and the pass's totals (module: ``_Scope``)."""
    for name in ("staged", "caught_up", "switched", "conflicts"):
        setattr(report, name, getattr(report, name) + getattr(counts, name))
    progress.staged += counts.staged + counts.caught_up
    progress.switched += counts.switched
    progress.conflicts += counts.conflicts
    if done:
        report.reused += counts.reused
        progress.memories += counts.memories
        progress.reused += counts.reused


def _new_pass(progress: ReindexProgress, step: ReindexStep, now: datetime) -> ReindexProgress:
    return ReindexProgress(
        model=progress.model,
        step=step.value,
        pass_started_at=now,
        stage_done=progress.stage_done,
        switch_done=False,
        revision=progress.revision,
        updated_at=progress.updated_at,
    )


def _next(progress: ReindexProgress) -> str:
    """What the operator does next (docs/aws.md, "Changing the embedding model")."""
    if progress.pass_started_at is not None:
        return f"invoke again with step {progress.step}: the pass goes on where it stopped"
    if progress.switch_done:
        return "done: every active memory is of the new model; the old index can be deleted"
    if progress.step == ReindexStep.SWITCH.value:
        return "invoke switch again: some scopes met concurrent writes"
    if progress.stage_done:
        return (
            "staged: deploy with the new model as the stack's embedder (and its index), "
            "then invoke with step switch (step stage again first catches up on recent writes)"
        )
    return "invoke with step stage"
