"""The projector indexes a record's vector even when the stream image carries none (the DynamoDB
store keeps it in an item of its own): it takes the stored record, read through at the image's
version, with its vector — and the version guard still holds: an older image never overwrites a
newer projection. On the local store (its outbox images stripped of the vector) and on the
DynamoDB store (moto: its stream images have none)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.codec import change_from_stream_record
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import Change, MemoryStore
from agentmem.services.projector import Projector
from agentmem_dev.dynamodb_stream import StreamReader
from support.aws import dynamodb_tables
from support.fakes.memory import InMemoryAuditLog, InMemoryGraphStore

S = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MODEL = "hash-test"
V1 = (1.0, 0.0, 0.0, 0.0)
V2 = (0.0, 1.0, 0.0, 0.0)


@dataclass
class Source:
    store: MemoryStore
    changes: Callable[[], list[Change]]  # the memory changes emitted so far, oldest first


def _no_vectors(change: Change) -> Change:
    """The change as a store that keeps the vector apart would emit it."""
    strip = lambda r: None if r is None else replace(r, embedding=None)  # noqa: E731
    return replace(change, new=strip(change.new), old=strip(change.old))


@pytest.fixture(params=["local", "aws"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Source]:
    if request.param == "local":
        local = SqliteMemoryStore(tmp_path / "memory.sqlite3")

        def outbox() -> list[Change]:
            return [
                _no_vectors(
                    Change(r.event_name, S, r.sk.removeprefix("MEM#"), r.new_record(), r.old_record())
                )
                for r in local.outbox.read_outbox(0, 10_000)
            ]

        yield Source(local, outbox)
        local.close()
        return
    with dynamodb_tables("aws") as tables:
        dynamo = DynamoMemoryStore(tables.memory_table, client=tables.lazy(), sleep=lambda _: None)
        reader = StreamReader(tables.streams, tables.stream_arn)
        seen: list[Change] = []

        def stream() -> list[Change]:
            for raw in reader.read():
                change = change_from_stream_record(raw)
                if change is not None:
                    seen.append(change)
            return list(seen)

        yield Source(dynamo, stream)


def _record(memory_id: str = "m1", vector: tuple[float, ...] = V1) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=f"content of {memory_id}",
        category=Category.FACT,
        embedding=vector,
        embedding_model=MODEL,
        created_at=T0,
    )


def _projector(store: object, where: Path) -> Projector:
    where.mkdir(parents=True, exist_ok=True)
    return Projector(
        index=LocalSearchIndex(where / "search.db"),
        graph=InMemoryGraphStore(),
        audit=InMemoryAuditLog(),
        store=cast(MemoryStore, store),
    )


def _nearest(projector: Projector, vector: tuple[float, ...]) -> list[str]:
    return [h.memory_id for h in projector.index.knn(S, np.asarray(vector, dtype=np.float32), 1, MODEL)]


def test_an_image_without_its_vector_still_projects_the_vector(source: Source, tmp_path: Path) -> None:
    projector = _projector(source.store, tmp_path)
    source.store.create(_record())
    source.store.create(_record("m2", V2))
    changes = source.changes()
    assert [c.memory_id for c in changes] == ["m1", "m2"]
    assert all(c.new is not None and c.new.embedding is None for c in changes)
    for change, decision in zip(changes, projector.prepare(changes), strict=True):
        assert projector.apply(change, now=T0, decision=decision).applied == 1
    assert _nearest(projector, V1) == ["m1"] and _nearest(projector, V2) == ["m2"]


def test_an_older_image_never_overwrites_a_newer_projection(source: Source, tmp_path: Path) -> None:
    projector = _projector(source.store, tmp_path)
    v1 = _record()
    source.store.create(v1)
    v2 = replace(v1.evolve(now=T0, content="moved on"), embedding=V2)
    source.store.update(v2, v1.version)
    insert, modify = source.changes()
    # the INSERT (v1) arrives after v2 was written: the stored record (v2, its vector) is projected
    assert projector.apply(insert, now=T0).applied == 1
    states = projector.index.states(S, ["m1"])
    assert (states["m1"].version, states["m1"].content_hash) == (v2.version, v2.content_hash)
    assert _nearest(projector, V2) == ["m1"]
    assert projector.apply(modify, now=T0).stale == 1  # the same version again: nothing to do
    # an index that holds v2 refuses the image of v1 whatever the store answers
    again = replace(projector, store=cast(MemoryStore, _Stale(source.store, {"m1": v1})))
    assert again.apply(insert, now=T0).stale == 1
    assert projector.index.states(S, ["m1"])["m1"].version == v2.version


def test_a_read_through_that_trails_the_image_is_asked_again(source: Source, tmp_path: Path) -> None:
    """``get_many`` is eventually consistent on DynamoDB: when it answers an older version (or
    nothing) the projector reads the record again with ``get`` instead of indexing the image,
    which has no vector."""
    v1 = _record()
    source.store.create(v1)
    v2 = replace(v1.evolve(now=T0, content="moved on"), embedding=V2)
    source.store.update(v2, v1.version)
    _, modify = source.changes()
    for trailing in ({"m1": v1}, {}):
        projector = _projector(_Stale(source.store, trailing), tmp_path / str(len(trailing)))
        assert projector.apply(modify, now=T0).applied == 1
        assert _nearest(projector, V2) == ["m1"]
        assert projector.index.states(S, ["m1"])["m1"].version == v2.version


class _Stale:
    """``inner`` whose ``get_many`` answers ``answers`` (what a lagging replica would)."""

    def __init__(self, inner: MemoryStore, answers: dict[str, MemoryRecord]) -> None:
        self._inner = inner
        self._answers = answers

    def get_many(self, scope: Scope, memory_ids: Sequence[str], *, embeddings: bool = True) -> dict[str, Any]:
        return {m: self._answers[m] for m in memory_ids if m in self._answers}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
