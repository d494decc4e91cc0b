"""The projector asks a batch's SIMILAR_TO k-NN in one request per scope (services/projector.py,
``Projector._ask_similar``) where every change of the scope is decided: active records the batch
wrote in one request, and removals, which the answer leaves out. The graph it builds is the same
edge for edge as projecting the changes one at a time, in both languages, with the removals
before or after the new memories."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.codec import change_from_stream_record
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs, Status
from agentmem.ports import Change
from agentmem.services.projector import Projector
from support.fakes.memory import InMemoryAuditLog, InMemoryGraphStore

ALICE, BOB = Scope("t1", "alice"), Scope("t1", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
TEXTS = [
    "I drink green tea every morning",
    "I drink green tea every single morning",
    "Every morning I drink green tea",
    "我每天早上喝绿茶",
    "我每天早上都喝绿茶",
    "My sister lives in Lisbon",
    "我妹妹住在里斯本",
]
EMBEDDER = HashEmbedder()


def _record(scope: Scope, n: int, text: str) -> MemoryRecord:
    return MemoryRecord(
        scope=scope,
        memory_id=f"m{n:03d}",
        content=text,
        category=Category.FACT,
        embedding=tuple(float(x) for x in EMBEDDER.embed_documents([text])[0]),
        embedding_model=EMBEDDER.model_id,
        source_refs=SourceRefs("s1", (f"msg{n}",)),
        created_at=T0 + timedelta(minutes=n),
    )


class CountingIndex(LocalSearchIndex):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls: list[str] = []

    def knn(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("knn")
        return super().knn(*args, **kwargs)

    def knn_many(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("knn_many")
        return super().knn_many(*args, **kwargs)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteMemoryStore]:
    source = SqliteMemoryStore(tmp_path / "memory.db")
    yield source
    source.close()


def _projector(where: Path, store: SqliteMemoryStore) -> tuple[Projector, CountingIndex, InMemoryGraphStore]:
    where.mkdir(parents=True, exist_ok=True)
    index, graph = CountingIndex(where / "search.db"), InMemoryGraphStore()
    projector = Projector(index=index, graph=graph, audit=InMemoryAuditLog(), embedder=EMBEDDER, store=store)
    return projector, index, graph


def _changes(store: SqliteMemoryStore, after: int = 0) -> list[Change]:
    found = [change_from_stream_record(r.to_stream_record()) for r in store.outbox.read_outbox(after, 10_000)]
    return [c for c in found if c is not None]


def _edges(graph: InMemoryGraphStore) -> dict[tuple[str, str, str, str], float]:
    return {k: round(w, 6) for k, w in graph._edges.items() if k[3] == "SIMILAR_TO"}


def _batch(projector: Projector, changes: list[Change]) -> list[Any]:
    decisions = projector.prepare(changes)
    for change, decision in zip(changes, decisions, strict=True):
        projector.apply(change, now=NOW, decision=decision)
    return decisions


def test_a_batch_links_as_one_at_a_time_does_with_one_knn_request_per_scope(
    store: SqliteMemoryStore, tmp_path: Path
) -> None:
    for n, text in enumerate(TEXTS):
        store.create(_record(ALICE, n, text))
        store.create(_record(BOB, n, text))
    changes = _changes(store)
    batched, batched_index, batched_graph = _projector(tmp_path / "batched", store)
    decisions = _batch(batched, changes)
    alone, alone_index, alone_graph = _projector(tmp_path / "alone", store)
    for change in changes:
        alone.apply(change, now=NOW)
    assert _edges(batched_graph) == _edges(alone_graph)
    assert len(_edges(alone_graph)) >= 4  # the paraphrases are linked, in both languages
    assert all(d is not None and d.similar is not None for d in decisions)
    assert batched_index.calls == ["knn_many", "knn_many"]  # one per scope, no knn at link time
    assert alone_index.calls.count("knn") == len(changes)


@pytest.mark.parametrize("removal_first", [True, False])
def test_a_batch_with_removals_asks_once_and_never_links_what_it_removes(
    store: SqliteMemoryStore, tmp_path: Path, removal_first: bool
) -> None:
    for n, text in enumerate(TEXTS):
        store.create(_record(ALICE, n, text))
        store.create(_record(BOB, n, text))
    batched, batched_index, batched_graph = _projector(tmp_path / "batched", store)
    alone, _alone_index, alone_graph = _projector(tmp_path / "alone", store)
    first = _changes(store)
    _batch(batched, first)
    for change in first:
        alone.apply(change, now=NOW)
    seen = store.outbox.read_outbox(0, 10_000)[-1].seq

    def supersede(memory_id: str) -> None:
        old = store.get(ALICE, memory_id)
        assert old is not None
        store.update(replace(old, status=Status.SUPERSEDED, version=old.version + 1), old.version)

    if removal_first:
        supersede("m001")
        supersede("m004")
    store.create(_record(ALICE, 10, "I drink green tea each morning"))
    store.create(_record(ALICE, 11, "我每天早上喝一杯绿茶"))
    store.create(_record(BOB, 10, "I drink green tea each morning"))
    if not removal_first:
        supersede("m001")
        supersede("m004")
    changes = _changes(store, seen)
    batched_index.calls.clear()
    decisions = _batch(batched, changes)
    for change in changes:
        alone.apply(change, now=NOW)
    by_id = {(c.scope.key, c.memory_id): d for c, d in zip(changes, decisions, strict=True)}
    for key in ((ALICE.key, "m010"), (ALICE.key, "m011"), (BOB.key, "m010")):
        decision = by_id[key]
        assert decision is not None and decision.similar is not None
        if key[0] == ALICE.key:  # bob's m001 and m004 stay
            assert not {h.memory_id for h in decision.similar} & {"m001", "m004"}
    assert batched_index.calls == ["knn_many", "knn_many"]  # one per scope, none at link time
    assert _edges(batched_graph) == _edges(alone_graph)  # removed ones' edges go with them
    linked = {dst for (pk, src, dst, _t) in _edges(batched_graph) if pk == ALICE.key}
    assert not linked & {"m001", "m004"} and linked & {"m000", "m002", "m003"}


def test_a_replayed_removal_of_an_older_version_does_not_hide_the_live_memory(
    store: SqliteMemoryStore, tmp_path: Path
) -> None:
    """A removal the index will not apply (it holds a newer version: a replay from before a
    restore) leaves the memory among the batch's neighbours, as linking at link time would."""
    for n, text in enumerate(TEXTS):
        store.create(_record(ALICE, n, text))
    batched, batched_index, batched_graph = _projector(tmp_path / "batched", store)
    alone, _, alone_graph = _projector(tmp_path / "alone", store)
    old = store.get(ALICE, "m001")
    assert old is not None
    store.update(replace(old, status=Status.SUPERSEDED, version=2), 1)
    store.update(replace(old, status=Status.ACTIVE, version=3), 2)  # restored
    history = _changes(store)
    for projector in (batched, alone):
        for change in history:
            projector.apply(change, now=NOW)
    replayed = next(c for c in history if c.new is not None and c.new.status is Status.SUPERSEDED)
    seen = store.outbox.read_outbox(0, 10_000)[-1].seq
    store.create(_record(ALICE, 10, "I drink green tea each morning"))
    store.create(_record(ALICE, 11, "我每天早上都喝一杯绿茶"))
    changes = [replayed, *_changes(store, seen)]
    batched_index.calls.clear()
    decisions = _batch(batched, changes)
    for change in changes:
        alone.apply(change, now=NOW)
    similar = decisions[1].similar if decisions[1] is not None else None
    assert similar is not None and "m001" in {h.memory_id for h in similar}
    assert batched_index.calls == ["knn_many"]
    assert _edges(batched_graph) == _edges(alone_graph)
    assert ("m010", "m001") in {(src, dst) for (_pk, src, dst, _t) in _edges(batched_graph)}


def test_a_scope_with_many_removals_in_the_batch_is_linked_at_link_time(
    store: SqliteMemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.services import projector as projector_module

    monkeypatch.setattr(projector_module, "BATCHED_REMOVALS", 1)
    for n, text in enumerate(TEXTS[:4]):
        store.create(_record(ALICE, n, text))
    projector, index, graph = _projector(tmp_path / "p", store)
    _batch(projector, _changes(store))
    seen = store.outbox.read_outbox(0, 10_000)[-1].seq
    for memory_id in ("m001", "m002"):
        old = store.get(ALICE, memory_id)
        assert old is not None
        store.update(replace(old, status=Status.SUPERSEDED, version=old.version + 1), old.version)
    store.create(_record(ALICE, 10, "I drink green tea each morning"))
    store.create(_record(ALICE, 11, "Every morning I drink a green tea"))
    index.calls.clear()
    decisions = _batch(projector, _changes(store, seen))
    assert all(d is None or d.similar is None for d in decisions)
    assert index.calls.count("knn") == 2 and "knn_many" not in index.calls
    linked = {dst for (_pk, src, dst, _t) in _edges(graph) if src in {"m010", "m011"}}
    assert not linked & {"m001", "m002"} and "m000" in linked


def test_a_failed_batch_request_leaves_the_knn_to_link_time(
    store: SqliteMemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.errors import StoreUnavailable

    for n, text in enumerate(TEXTS[:4]):
        store.create(_record(ALICE, n, text))
    projector, index, graph = _projector(tmp_path / "p", store)

    def down(*_: Any, **__: Any) -> Any:
        raise StoreUnavailable("index down for the batch request")

    monkeypatch.setattr(index, "knn_many", down)
    decisions = _batch(projector, _changes(store))
    assert all(d is not None and d.similar is None for d in decisions)
    assert index.calls.count("knn") == 4
    assert np.isfinite(list(_edges(graph).values())).all()
