"""The reindex service (``services/reindex.py``) on the fakes: staging leaves every memory and the
serving index as they were while it fills the new model's own index; a cut budget resumes where
it stopped without embedding anything twice; a memory written after it was staged is embedded
again at the switch; the switch is conditional on the version staged; a scope erased after it was
staged loses its staged vectors and its documents in the new index; two runs cannot both advance
one walk."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import ValidationFailed, VersionConflict
from agentmem.port_types import Put
from agentmem.services.reindex import Reindexer, ReindexRequest, ReindexStep
from support.fake_world import T0, World
from support.fakes.memory import InMemorySearchIndex
from support.fakes.reindex_journal import InMemoryReindexJournal

SCOPES = [Scope("t1", f"user-{i}") for i in range(4)]
FACTS = ["I live in Glasgow.", "I prefer window seats.", "我喜欢喝乌龙茶。"]
OLD = HashEmbedder.model_id


class Target:
    """The new model: another dimension and id; counts what it embeds; each call takes ten
    seconds of the world's clock, so a time budget cuts a run between two calls."""

    model_id = "target/model-64"
    dimension = 64

    def __init__(self, world: World) -> None:
        self.world = world
        self.inner = HashEmbedder(64)
        self.calibration = self.inner.calibration
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.world.clock.advance(timedelta(seconds=10))
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


@pytest.fixture
def seeded(world: World) -> World:
    for scope in SCOPES:
        for i, fact in enumerate(FACTS):
            record, _ = world.c.explicit.write(scope, fact, now=T0, request_id=f"{scope.user_id}-{i}")
            assert record is not None
    world.drain()
    return world


def reindexer(world: World, target: Target, *, batch: int = 2) -> tuple[Reindexer, InMemorySearchIndex]:
    index = InMemorySearchIndex()
    journal = InMemoryReindexJournal(target.model_id)
    return (
        Reindexer(
            store=world.store,
            ledger=world.store.ledger,
            embedder=target,  # type: ignore[arg-type]
            journal=journal,
            clock=world.clock.now,
            index=index,
            batch=batch,
        ),
        index,
    )


def active(world: World) -> list[MemoryRecord]:
    return [
        r for scope in SCOPES for r in world.store.list(scope, statuses=(Status.ACTIVE,), limit=100).items
    ]


def test_staging_changes_nothing_the_service_reads_and_fills_the_new_index(seeded: World) -> None:
    target = Target(seeded)
    before = {(r.memory_id, r.version, r.embedding_model, r.embedding) for r in active(seeded)}
    serving = {s: seeded.index.all_states(s) for s in SCOPES}
    service, new_index = reindexer(seeded, target)
    report = service.run(ReindexStep.STAGE)
    assert report.pass_completed and report.staged == 12 and report.progress is not None
    assert report.progress.stage_done and "deploy" in report.next
    assert {(r.memory_id, r.version, r.embedding_model, r.embedding) for r in active(seeded)} == before
    assert {s: seeded.index.all_states(s) for s in SCOPES} == serving  # the old index is untouched
    query = target.embed_query("Where do I live?")
    for scope in SCOPES:
        # the new index answers a k-NN of the new model, at the store's versions
        hits = new_index.knn(scope, query, 3, target.model_id)
        assert len(hits) == 3
        assert new_index.knn(scope, query, 3, OLD) == []  # never a vector of the old model there
        held = {s.memory_id: s.version for s in new_index.all_states(scope)}
        assert held == {r.memory_id: r.version for r in active(seeded) if r.scope == scope}


def test_a_cut_budget_resumes_where_it_stopped_and_embeds_nothing_twice(seeded: World) -> None:
    target = Target(seeded)
    service, _ = reindexer(seeded, target)
    first = service.run(ReindexStep.STAGE, budget=timedelta(seconds=25))
    # three memories a scope, two an embedding call of ten seconds: the first scope at 0 and
    # 10 s, two of the second's at 20 s; at 30 s the budget is spent, mid-scope
    assert first.budget_exhausted and not first.pass_completed and first.staged == 5
    assert first.progress is not None and first.progress.scopes == 1 and "again" in first.next
    second = service.run(ReindexStep.STAGE)  # the second scope again: two of its three are staged
    assert second.pass_completed and second.staged == 7 and second.scopes == 3 and second.reused == 2
    assert sorted(target.embedded) == sorted(FACTS * 4)  # each memory embedded once
    again = service.run(ReindexStep.STAGE)  # a catch-up pass: nothing new to embed
    assert again.pass_completed and again.staged == 0 and again.reused == 12


def test_the_switch_is_refused_before_a_whole_stage_pass(seeded: World) -> None:
    service, _ = reindexer(seeded, Target(seeded))
    with pytest.raises(ValidationFailed):
        service.run(ReindexStep.SWITCH)
    service.run(ReindexStep.STAGE, budget=timedelta(seconds=5))
    with pytest.raises(ValidationFailed):
        service.run(ReindexStep.SWITCH)


def test_the_switch_moves_every_memory_and_embeds_again_what_was_written_after_staging(seeded: World) -> None:
    target = Target(seeded)
    service, _ = reindexer(seeded, target)
    service.run(ReindexStep.STAGE)
    # written after staging: a new memory, and an edit of a staged one
    alice = SCOPES[0]
    late, _ = seeded.c.explicit.write(alice, "I moved to Leeds.", now=T0, request_id="late")
    assert late is not None
    edited = next(r for r in active(seeded) if r.scope == alice and r.content == FACTS[1])
    seeded.store.update(edited.evolve(now=T0, content="I prefer aisle seats."), edited.version)
    versions = {r.memory_id: r.version for r in active(seeded)}
    target.embedded.clear()
    report = service.run(ReindexStep.SWITCH)
    assert report.pass_completed and report.switched == 13 and report.caught_up == 2
    assert sorted(target.embedded) == sorted(["I moved to Leeds.", "I prefer aisle seats."])
    assert report.progress is not None and report.progress.switch_done and report.next.startswith("done")
    moved = [seeded.store.get(r.scope, r.memory_id) for r in active(seeded)]
    for record in moved:
        assert record is not None and record.embedding_model == target.model_id
        assert record.version == versions[record.memory_id] + 1
        np.testing.assert_allclose(
            np.asarray(record.embedding), target.inner.embed_documents([record.content])[0], atol=1e-6
        )
    assert service.run(ReindexStep.SWITCH).switched == 0  # nothing left of the old model


class RacingStore:
    """Writes one memory of the scope the first time the switch transacts (a turn landing
    between the switch's listing and its write), then behaves as the store."""

    def __init__(self, world: World, times: int) -> None:
        self.world, self.times = world, times

    def __getattr__(self, name: str) -> object:
        return getattr(self.world.store, name)

    def transact(self, puts: Sequence[Put]) -> None:
        if self.times:
            self.times -= 1
            record = puts[0].record
            current = self.world.store.get(record.scope, record.memory_id)
            assert current is not None
            self.world.store.update(current.evolve(now=T0, importance=0.9), current.version)
        self.world.store.transact(puts)


def test_the_switch_is_conditional_on_the_version_it_staged(seeded: World) -> None:
    target = Target(seeded)
    service, _ = reindexer(seeded, target)
    service.run(ReindexStep.STAGE)
    service.store = RacingStore(seeded, times=1)  # type: ignore[assignment]
    report = service.run(ReindexStep.SWITCH)
    # the racing write cancelled the first transaction; the scope was listed again and switched
    assert report.pass_completed and report.conflicts == 0 and report.switched == 12
    raced = [r for r in active(seeded) if r.importance == 0.9]
    assert len(raced) == 1 and raced[0].embedding_model == target.model_id  # the write was kept


def test_a_scope_that_keeps_racing_is_left_to_the_next_pass(seeded: World) -> None:
    target = Target(seeded)
    service, _ = reindexer(seeded, target)
    service.run(ReindexStep.STAGE)
    service.store = RacingStore(seeded, times=3)  # type: ignore[assignment]
    report = service.run(ReindexStep.SWITCH)
    assert report.pass_completed and report.conflicts == 1 and report.switched == 9
    assert report.progress is not None and not report.progress.switch_done and "again" in report.next
    service.store = seeded.store
    last = service.run(ReindexStep.SWITCH)
    assert last.switched == 3 and last.progress is not None and last.progress.switch_done
    assert {r.embedding_model for r in active(seeded)} == {target.model_id}


def test_a_scope_erased_after_it_was_staged_is_swept_from_the_journal_and_the_new_index(
    seeded: World,
) -> None:
    target = Target(seeded)
    service, new_index = reindexer(seeded, target)
    service.run(ReindexStep.STAGE)
    bob = SCOPES[1]
    seeded.clock.advance(timedelta(minutes=1))
    seeded.c.admin.erase_user(bob, now=seeded.clock.now(), actor="operator")  # reaches the serving index only
    seeded.drain()
    assert new_index.all_states(bob)  # the erase did not reach the new model's index
    report = service.run(ReindexStep.STAGE)
    assert report.swept == 1
    assert new_index.all_states(bob) == []
    journal = service.journal
    assert isinstance(journal, InMemoryReindexJournal) and bob.key not in journal.vectors


def test_two_runs_cannot_both_advance_one_walk(seeded: World) -> None:
    target = Target(seeded)
    service, _ = reindexer(seeded, target)
    journal = service.journal
    assert isinstance(journal, InMemoryReindexJournal)
    stale = journal.progress()
    service.run(ReindexStep.STAGE, budget=timedelta(seconds=15))
    held = journal.progress()
    assert held is not None and stale is None
    held.revision -= 1  # what a second run read before the first saved
    with pytest.raises(VersionConflict):
        journal.save_progress(held)


def test_the_request_names_a_step_or_is_refused() -> None:
    assert ReindexRequest.from_event({}).step is ReindexStep.STATUS
    assert ReindexRequest.from_event({"step": "switch"}).step is ReindexStep.SWITCH
    with pytest.raises(ValidationFailed):
        ReindexRequest.from_event({"step": "drop"})
