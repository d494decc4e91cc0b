"""A consolidation run keeps up with more users than one page a tick: with a time budget it takes
page after page of ready users until none is left or the budget is spent (the deploy review put
the old ceiling at 100 users per 15-minute tick)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import Scope
from agentmem.domain.scoring import Scorer
from agentmem.services.consolidation import ConsolidationService
from support.fakes.memory import InMemoryAuditLog, InMemoryMemoryStore

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def service(store: InMemoryMemoryStore, clock: object = None) -> ConsolidationService:
    return ConsolidationService(
        store=store,
        ledger=store.ledger,
        audit=InMemoryAuditLog(),
        embedder=HashEmbedder(),
        scorer=Scorer(),
        trigger_every=5,
        clock=clock,  # type: ignore[arg-type]
    )


def dirty(store: InMemoryMemoryStore, users: int, writes: int = 5, prefix: str = "u") -> list[Scope]:
    scopes = [Scope("acme", f"{prefix}{i:04d}") for i in range(users)]
    for scope in scopes:
        store.ledger.mark_pending(scope, writes)
    return scopes


def test_without_a_budget_one_page_is_taken() -> None:
    store = InMemoryMemoryStore()
    dirty(store, 25)
    report = service(store).run_pending(now=NOW, max_scopes=10)
    assert report.scopes == 10 and len(store.ledger.pending_scopes(100)) == 15


def test_with_a_budget_every_ready_user_is_taken_and_the_waiting_ones_stay() -> None:
    store = InMemoryMemoryStore()
    dirty(store, 25)
    waiting = dirty(store, 3, writes=1, prefix="w")  # not ready: fewer writes than trigger_every
    report = service(store).run_pending(now=NOW, max_scopes=10, budget=timedelta(minutes=5))
    assert report.scopes == 25 and not report.budget_exhausted
    assert [s for s, _ in store.ledger.pending_scopes(100)] == waiting


def test_a_spent_budget_stops_the_run_and_says_so() -> None:
    store = InMemoryMemoryStore()
    dirty(store, 25)
    ticks = iter(NOW + timedelta(seconds=i) for i in range(1000))
    report = service(store, clock=lambda: next(ticks)).run_pending(
        now=NOW, max_scopes=10, budget=timedelta(seconds=12)
    )
    assert report.budget_exhausted and 0 < report.scopes < 25
    assert len(store.ledger.pending_scopes(100)) == 25 - report.scopes


def test_a_scope_listed_again_by_a_lagging_index_is_taken_once() -> None:
    store = InMemoryMemoryStore()
    dirty(store, 1)
    store.ledger.clear_pending = lambda s: None  # type: ignore[method-assign]  # the index still lists it
    report = service(store).run_pending(now=NOW, budget=timedelta(minutes=5))
    assert report.scopes == 1
