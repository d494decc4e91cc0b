"""The projector's batch: one ``_bulk`` request for the index writes of a stream batch, and a
bulk that fails (or fails for one item) leaves only those records to be written alone."""

from __future__ import annotations

from datetime import UTC, datetime

from agentmem.adapters.aws.opensearch_index import OpenSearchIndex
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import Change, ProjectionOutcome
from agentmem.services.projector import Projector
from support.fakes.fake_opensearch import FakeOpenSearch, fake_client
from support.fakes.memory import InMemoryAuditLog, InMemoryGraphStore

S = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _change(memory_id: str) -> Change:
    record = MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=f"memory {memory_id}",
        category=Category.FACT,
        embedding=(1.0, 0.0, 0.0, 0.0),
        embedding_model="m",
        created_at=T0,
    )
    return Change("INSERT", S, memory_id, record, None, sequence=memory_id)


def _projector(engine: FakeOpenSearch) -> Projector:
    index = OpenSearchIndex(lambda: fake_client(engine), index="bulk-test", dimension=4, refresh=True)
    return Projector(index=index, graph=InMemoryGraphStore(), audit=InMemoryAuditLog())


def test_a_batch_is_indexed_in_one_bulk_request() -> None:
    engine = FakeOpenSearch()
    projector = _projector(engine)
    changes = [_change(f"m{i}") for i in range(5)]
    decisions = projector.prepare(changes)
    assert [d.indexed if d else None for d in decisions] == [ProjectionOutcome.APPLIED] * 5
    before = len(engine.requests)
    for change, decision in zip(changes, decisions, strict=True):
        report = projector.apply(change, now=T0, decision=decision)
        assert report.applied == 1
    later = [r for r in engine.requests[before:] if r.method in ("PUT", "POST") and "/_doc/" in r.path]
    assert later == []  # nothing indexed again one by one
    assert sum(r.path.endswith("_bulk") for r in engine.requests) == 1
    assert set(projector.index.states(S, [c.memory_id for c in changes])) == {c.memory_id for c in changes}


def test_a_failed_bulk_leaves_each_record_to_its_own_write() -> None:
    engine = FakeOpenSearch()
    projector = _projector(engine)
    projector.index.ensure_index()  # type: ignore[attr-defined]
    engine.fail_next(429)
    changes = [_change("a"), _change("b")]
    decisions = projector.prepare(changes)
    assert [d.indexed if d else "x" for d in decisions] == [None, None]
    for change, decision in zip(changes, decisions, strict=True):
        assert projector.apply(change, now=T0, decision=decision).applied == 1
    assert set(projector.index.states(S, ["a", "b"])) == {"a", "b"}
