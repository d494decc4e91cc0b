"""The reconciler's walk over many scopes, on the fakes and a manual clock that moves ten seconds
per scope checked: a persisted cursor, a time budget, wrap-around, segments, dirty scopes first."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.domain.scope_walk import in_segment
from agentmem.errors import StoreUnavailable, ValidationFailed
from agentmem.services.reconcile import Reconciler, ReconcileReport, ReconcileRequest, run_budget
from support.fake_world import T0, World

PER_SCOPE = timedelta(seconds=10)
SCOPES = [Scope("t1", f"user-{i:03d}") for i in range(12)]


@dataclass
class Timed(Reconciler):
    """Records the scopes it checks, and each check takes ten seconds of the world's clock."""

    world: World | None = None
    seen: list[str] = field(default_factory=list)

    def reconcile_scope(
        self, scope: Scope, *, now: object, report: ReconcileReport | None = None
    ) -> ReconcileReport:
        assert self.world is not None
        self.seen.append(scope.user_id)
        self.world.clock.advance(PER_SCOPE)
        return super().reconcile_scope(scope, now=self.world.clock.now(), report=report)


def record(scope: Scope, memory_id: str = "m1") -> MemoryRecord:
    return MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=f"{scope.user_id} likes tea",
        category=Category.PREFERENCE,
        created_at=T0,
        updated_at=T0,
    )


@pytest.fixture
def filled(world: World) -> World:
    for scope in SCOPES:
        world.store.create(record(scope))
    return world


def reconciler(world: World) -> Timed:
    return Timed(
        store=world.store,
        ledger=world.store.ledger,
        index=world.index,
        graph=world.graph,
        projector=world.c.projector,
        clock=world.clock.now,
        world=world,
    )


def walk_order(world: World) -> list[str]:
    """The fake walks scopes in key order."""
    return sorted(s.user_id for s in SCOPES)


def test_a_budget_stops_the_run_part_way_and_the_next_run_continues_from_the_saved_cursor(
    filled: World,
) -> None:
    first = reconciler(filled)
    report = first.run(now=T0, budget=timedelta(seconds=35))
    # checks start at 0, 10, 20 and 30 s; at 40 s the budget is spent
    assert first.seen == walk_order(filled)[:4]
    assert report.scopes_checked == 4 and report.budget_exhausted and not report.pass_completed
    assert report.missing == 8 and report.repaired == 8  # each scope's memory, in both projections
    saved = filled.store.ledger.reconcile_cursor()
    assert saved is not None and saved.pass_scopes == 4 and saved.pass_started_at == T0
    assert report.cursor == saved.position

    second = reconciler(filled)  # a new process: only the store remembers
    again = second.run(now=filled.clock.now(), budget=timedelta(seconds=35))
    assert second.seen == walk_order(filled)[4:8]
    assert again.budget_exhausted and filled.store.ledger.reconcile_cursor().pass_scopes == 8  # type: ignore[union-attr]


def test_the_pass_completes_wraps_around_and_is_reported(filled: World) -> None:
    runs = [reconciler(filled) for _ in range(4)]
    reports = [r.run(now=filled.clock.now(), budget=timedelta(seconds=45)) for r in runs]
    assert [len(r.seen) for r in runs] == [5, 5, 2, 5]  # the third run reaches the end and stops
    assert [r.pass_completed for r in reports] == [False, False, True, False]
    assert runs[2].seen == walk_order(filled)[10:] and runs[3].seen == walk_order(filled)[:5]
    finished = reports[2].last_pass
    assert finished == {
        "started_at": T0.isoformat(),
        "completed_at": (T0 + 12 * PER_SCOPE).isoformat(),
        "scopes_checked": 12,
    }
    assert reports[3].last_pass == finished  # kept with the cursor until the next pass ends
    saved = filled.store.ledger.reconcile_cursor()
    assert saved is not None and saved.pass_scopes == 5 and saved.pass_started_at == T0 + 12 * PER_SCOPE
    # the first pass repaired everything: the second finds nothing in what it walked
    assert reports[3].missing == 0 and reports[3].repaired == 0


def test_a_run_without_a_budget_walks_one_pass_and_no_more(filled: World) -> None:
    walker = reconciler(filled)
    report = walker.run(now=T0)
    assert sorted(walker.seen) == walk_order(filled) and len(walker.seen) == len(SCOPES)
    assert report.pass_completed and not report.budget_exhausted and report.cursor is None
    assert reconciler(filled).run(now=T0).missing == 0


@pytest.mark.parametrize("segments", [2, 3, 5])
def test_segments_are_disjoint_cover_every_scope_and_keep_their_own_cursors(
    filled: World, segments: int
) -> None:
    seen: dict[int, list[str]] = {}
    for segment in range(segments):
        walker = reconciler(filled)
        while True:  # small budgets: several runs per segment, each resuming its own cursor
            report = walker.run(
                now=filled.clock.now(), budget=timedelta(seconds=15), segment=segment, segments=segments
            )
            if report.pass_completed:
                break
        seen[segment] = walker.seen
        assert all(in_segment(Scope("t1", u), segment, segments) for u in walker.seen)
        assert filled.store.ledger.reconcile_cursor(segment, segments) is not None
    every = [u for users in seen.values() for u in users]
    assert sorted(every) == walk_order(filled)  # each scope once, in exactly one segment
    assert filled.store.ledger.reconcile_cursor(0, 1) is None  # another layout's cursor is untouched


def test_dirty_scopes_go_first_every_run_and_are_not_checked_twice(filled: World) -> None:
    dirty = [SCOPES[9], SCOPES[3]]
    for scope in dirty:
        filled.store.ledger.mark_pending(scope, 5)
    walker = reconciler(filled)
    report = walker.run(now=T0, budget=timedelta(seconds=45))
    assert walker.seen[:2] == ["user-009", "user-003"]  # ready, longest waiting first
    assert report.dirty_checked == 2 and report.scopes_checked == 5
    assert walker.seen[2:] == ["user-000", "user-001", "user-002"]
    rest = reconciler(filled)
    rest.run(now=filled.clock.now())
    assert rest.seen[:2] == ["user-009", "user-003"]  # still pending: first again
    # the walk resumed at user-003, passed over the two checked first in this run, and went on
    assert rest.seen[2:] == [u for u in walk_order(filled)[3:] if u not in ("user-003", "user-009")]
    saved = filled.store.ledger.reconcile_cursor()
    assert saved is not None and saved.last_pass is not None and saved.last_pass.scopes_checked == 12


def test_dirty_scopes_of_other_segments_are_left_to_them(filled: World) -> None:
    for scope in SCOPES:
        filled.store.ledger.mark_pending(scope, 1)
    walker = reconciler(filled)
    report = walker.run(now=T0, segment=1, segments=2, budget=timedelta(seconds=1))
    assert report.dirty_checked == len(walker.seen) > 0
    assert all(in_segment(Scope("t1", u), 1, 2) for u in walker.seen)


def test_a_store_outage_stops_the_walk_at_that_scope_and_the_next_run_resumes_there(filled: World) -> None:
    walker = reconciler(filled)
    walker.run(now=T0, budget=timedelta(seconds=25))  # three scopes
    filled.store.fail("list", times=1)
    broken = reconciler(filled)
    report = broken.run(now=filled.clock.now(), budget=timedelta(seconds=100))
    assert report.interrupted == StoreUnavailable.__name__ and report.failed == 1
    assert broken.seen == ["user-003"]
    resumed = reconciler(filled)
    resumed.run(now=filled.clock.now(), budget=timedelta(seconds=15))
    assert resumed.seen == ["user-003", "user-004"]


def test_a_segment_outside_the_shards_is_refused(filled: World) -> None:
    with pytest.raises(ValueError):
        reconciler(filled).run(now=T0, segment=2, segments=2)
    with pytest.raises(ValueError):
        reconciler(filled).run(now=T0, segments=65)


def test_the_request_comes_from_the_rule_input_or_the_detail_and_is_checked() -> None:
    assert ReconcileRequest.from_event({"segment": 2, "segments": 4}) == ReconcileRequest(2, 4)
    assert ReconcileRequest.from_event({"detail-type": "Scheduled Event", "detail": {"segments": 3}}) == (
        ReconcileRequest(0, 3)
    )
    assert ReconcileRequest.from_event({"detail": {}}) == ReconcileRequest(0, 1)
    for bad in (
        {"segment": 4, "segments": 4},
        {"segments": 0},
        {"segment": "1", "segments": 2},
        {"segments": 99},
    ):
        with pytest.raises(ValidationFailed):
            ReconcileRequest.from_event(bad)


def test_the_budget_leaves_the_margin_of_what_the_invocation_has_left() -> None:
    assert run_budget(600, 60, None) == timedelta(seconds=600)
    assert run_budget(600, 60, 900) == timedelta(seconds=600)
    assert run_budget(600, 60, 300) == timedelta(seconds=240)
    assert run_budget(600, 60, 30) == timedelta(0)
