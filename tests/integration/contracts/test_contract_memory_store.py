"""MemoryStore contract, parametrised over implementations: ``embedded`` (SQLite + outbox),
``aws`` (DynamoDB on moto in-process, the change feed read from the table's moto stream),
``engine`` (DynamoDB on the engine over HTTP, :mod:`support.engines`; the change feed read
through the DynamoDB Streams API — ``DescribeStream``, ``GetShardIterator``, ``GetRecords`` — by
the dev stream reader) and ``fake`` (the in-memory fake the service unit tests use,
:mod:`support.fakes.memory`). The store's :class:`~agentmem.ports.ScopeLedger` (pending writes,
the scope walk, reconcile cursors, erase barriers) is checked here too, through :func:`ledger_of`.

Change-feed checks go through the ``changes`` fixture: locally the outbox, in AWS the stream
(memory items only — the PENDING counter, SCOPE registry and VEC vector items also stream, and
the projector ignores them the same way), for the fake its ``changes`` list. The DynamoDB
stream's images carry no vector (it is in an item of its own; the projector reads it through the
store): :func:`streamed` is a record as its store's change feed shows it. What only the SQLite store does
(outbox rows and checkpoints, reopening, concurrent connections) is in
``tests/integration/test_local_memory_store.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.codec import change_from_stream_record
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.domain.scope_walk import PENDING_READY_WRITES, ReconcileCursor, ReconcilePass, in_segment
from agentmem.errors import NotFound, ValidationFailed, VersionConflict
from agentmem.ports import MemoryStore, Put, ScopeLedger
from agentmem_dev.dynamodb_stream import StreamReader
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.memory import InMemoryMemoryStore

S1 = Scope("t1", "u1")
S2 = Scope("t1", "u2")
S3 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

Change = tuple[str, MemoryRecord | None, MemoryRecord | None]


_STREAMS: dict[int, StreamReader] = {}


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "fake":
        yield InMemoryMemoryStore()
        return
    if request.param == "embedded":
        adapter = SqliteMemoryStore(tmp_path / "memory.sqlite3")
        yield adapter
        adapter.close()
        return
    with dynamodb_tables(request.param) as tables:
        dynamo = DynamoMemoryStore(tables.memory_table, client=tables.lazy(), sleep=lambda _: None)
        _STREAMS[id(dynamo)] = StreamReader(tables.streams, tables.stream_arn)
        yield dynamo
        _STREAMS.pop(id(dynamo), None)


@pytest.fixture
def changes(store: MemoryStore) -> Callable[[], list[Change]]:
    """Every change emitted so far, oldest first, as (event, new record, old record)."""
    if isinstance(store, InMemoryMemoryStore):
        fake = store
        return lambda: [(c.event_name, c.new, c.old) for c in fake.changes]
    if isinstance(store, SqliteMemoryStore):
        local = store

        def read() -> list[Change]:
            return [
                (r.event_name, r.new_record(), r.old_record()) for r in local.outbox.read_outbox(0, 10_000)
            ]

        return read
    reader = _STREAMS[id(store)]
    seen: list[Change] = []

    def read_stream() -> list[Change]:
        for raw in reader.read():
            change = change_from_stream_record(raw)
            if change is not None:
                seen.append((change.event_name, change.new, change.old))
        return list(seen)

    return read_stream


def ledger_of(store: MemoryStore) -> ScopeLedger:
    """The store's scope ledger, over the same table or file (the fake's over the fake's state:
    :class:`~support.fakes.scope_ledger.InMemoryScopeLedger`); its contract is part of this one,
    since a create checks the erase barrier the ledger sets."""
    ledger: ScopeLedger = store.ledger  # type: ignore[attr-defined]
    return ledger


def streamed(store: MemoryStore, record: MemoryRecord) -> MemoryRecord:
    """``record`` as ``store``'s change feed carries it."""
    return replace(record, embedding=None) if isinstance(store, DynamoMemoryStore) else record


def rec(memory_id: str, scope: Scope = S1, content: str | None = None, **changes: Any) -> MemoryRecord:
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=content or f"content of {memory_id}",
        category=Category.FACT,
        embedding=(0.5, 0.5, 0.5, 0.5),
        embedding_model="hash-test",
        created_at=T0,
    )
    return replace(record, **changes, content_hash="") if changes else record


def bump(record: MemoryRecord, **changes: Any) -> MemoryRecord:
    return record.evolve(now=T0 + timedelta(hours=record.version), **changes)


# ------------------------------------------------------------------ create / get / update


def test_create_then_get_round_trips(store: MemoryStore) -> None:
    record = rec("m1", tags=("a", "b"), key="k")
    store.create(record)
    assert store.get(S1, "m1") == record
    assert store.get(S1, "missing") is None
    assert store.get_many(S1, ["m1", "missing", "m1"]) == {"m1": record}


def test_create_existing_id_is_a_version_conflict(store: MemoryStore) -> None:
    store.create(rec("m1"))
    with pytest.raises(VersionConflict) as caught:
        store.create(rec("m1", content="other"))
    assert caught.value.details["memory_id"] == "m1"
    assert store.get(S1, "m1") == rec("m1")


def test_same_memory_id_in_two_scopes_is_two_records(store: MemoryStore) -> None:
    mine, theirs = rec("m1", S1, "mine"), rec("m1", S3, "theirs")
    store.create(mine)
    store.create(theirs)
    store.update(bump(mine, content="mine v2"), expected_version=1)
    assert store.get(S3, "m1") == theirs
    assert store.get(S1, "m1").content == "mine v2"  # type: ignore[union-attr]
    assert store.get(S2, "m1") is None
    assert store.get_many(S2, ["m1"]) == {}


def test_update_checks_the_expected_version(store: MemoryStore) -> None:
    v1 = rec("m1")
    store.create(v1)
    v2 = bump(v1, content="v2")
    store.update(v2, expected_version=1)
    assert store.get(S1, "m1") == v2
    with pytest.raises(VersionConflict) as caught:
        store.update(bump(v1, content="lost update"), expected_version=1)
    assert caught.value.details["memory_id"] == "m1"
    assert store.get(S1, "m1") == v2
    with pytest.raises(NotFound):
        store.update(bump(rec("absent")), expected_version=1)
    with pytest.raises(NotFound):  # another scope's id is absent too
        store.update(bump(rec("m1", S2)), expected_version=2)


# ------------------------------------------------------------------ transactions


def test_transact_applies_all_puts(store: MemoryStore, changes: Callable[[], list[Change]]) -> None:
    old = rec("m1")
    store.create(old)
    new = rec("m2", content="new fact", supersedes=("m1",))
    marked = bump(old, status=Status.SUPERSEDED, superseded_by="m2")
    store.transact([Put(new, None), Put(marked, 1)])
    assert store.get(S1, "m2") == new
    assert store.get(S1, "m1") == marked
    assert [(e, n.memory_id if n else None) for e, n, _ in changes()[1:]] == [
        ("INSERT", "m2"),
        ("MODIFY", "m1"),
    ]


def test_transact_is_all_or_nothing(store: MemoryStore, changes: Callable[[], list[Change]]) -> None:
    a, b = rec("a"), rec("b")
    store.create(a)
    store.create(b)
    before = changes()
    stale_b = bump(b)
    store.update(stale_b, expected_version=1)  # b moves to v2 behind the caller's back
    puts = [Put(rec("c"), None), Put(bump(a, content="a2"), 1), Put(bump(b, content="b2"), 1)]
    with pytest.raises(VersionConflict) as caught:
        store.transact(puts)
    assert caught.value.details["memory_id"] == "b"
    assert store.get(S1, "c") is None
    assert store.get(S1, "a") == a
    assert store.get(S1, "b") == stale_b
    assert len(changes()) == len(before) + 1  # only the update; the failed transaction emitted nothing
    with pytest.raises(VersionConflict) as caught:
        store.transact([Put(rec("d"), None), Put(rec("a"), None)])  # "must not exist yet"
    assert caught.value.details["memory_id"] == "a"
    assert store.get(S1, "d") is None


def test_transact_rejects_touching_one_memory_twice(store: MemoryStore) -> None:
    with pytest.raises(ValidationFailed):
        store.transact([Put(rec("a"), None), Put(rec("a", content="again"), None)])
    assert store.get(S1, "a") is None


# ------------------------------------------------------------------ listing


def test_list_is_newest_first_and_paginated(store: MemoryStore) -> None:
    for i in range(7):
        store.create(rec(f"m{i:02d}", category=Category.PREFERENCE if i % 2 else Category.FACT))
    store.create(rec("m99", S2))
    first = store.list(S1, limit=3)
    assert [r.memory_id for r in first.items] == ["m06", "m05", "m04"]
    assert first.next_cursor is not None
    second = store.list(S1, limit=3, cursor=first.next_cursor)
    third = store.list(S1, limit=3, cursor=second.next_cursor)
    assert [r.memory_id for r in second.items] == ["m03", "m02", "m01"]
    assert [r.memory_id for r in third.items] == ["m00"] and third.next_cursor is None
    prefs = store.list(S1, category="preference", limit=10)
    assert [r.memory_id for r in prefs.items] == ["m05", "m03", "m01"]
    with pytest.raises(ValidationFailed):
        store.list(S1, cursor="%%% not a cursor")


def test_list_filters_by_status(store: MemoryStore) -> None:
    store.create(rec("a"))
    store.create(rec("b", status=Status.SUPERSEDED))
    store.create(rec("c", status=Status.QUARANTINED))
    assert [r.memory_id for r in store.list(S1).items] == ["a"]
    both = store.list(S1, statuses=(Status.ACTIVE, Status.QUARANTINED))
    assert [r.memory_id for r in both.items] == ["c", "a"]
    assert store.list(S1, statuses=()).items == []
    assert [r.memory_id for r in store.scan_active(S1, 10)] == ["a"]


def test_find_by_key_returns_active_records_only(store: MemoryStore) -> None:
    store.create(rec("a", key="city", value="Paris"))
    store.create(rec("b", key="city", value="Lyon", status=Status.SUPERSEDED))
    store.create(rec("c", key="city", value="Rome"))
    store.create(rec("d", S2, key="city", value="Oslo"))
    assert [r.memory_id for r in store.find_by_key(S1, "city")] == ["c", "a"]
    assert store.find_by_key(S1, "other") == []


def test_scan_active_is_bounded_newest_first(store: MemoryStore) -> None:
    for i in range(5):
        store.create(rec(f"m{i}"))
    assert [r.memory_id for r in store.scan_active(S1, 2)] == ["m4", "m3"]
    assert store.scan_active(S2, 5) == []


def test_all_scopes_walks_every_scope_once(store: MemoryStore) -> None:
    for scope in (S1, S2, S3):
        store.create(rec("m1", scope))
        store.create(rec("m2", scope))
    seen: list[Scope] = []
    cursor: str | None = None
    while True:
        page, cursor = ledger_of(store).all_scopes(2, cursor)
        seen.extend(page)
        if cursor is None:
            break
    assert sorted(seen, key=lambda s: s.key) == sorted([S1, S2, S3], key=lambda s: s.key)


# ------------------------------------------------------------------ deletes


def test_hard_delete_removes_one_record(store: MemoryStore, changes: Callable[[], list[Change]]) -> None:
    store.create(rec("m1"))
    store.create(rec("m1", S2))
    assert store.hard_delete(S1, "m1") is True
    assert store.hard_delete(S1, "m1") is False
    assert store.get(S1, "m1") is None
    assert store.get(S2, "m1") is not None
    event, new, old = changes()[-1]
    assert (event, new, old) == ("REMOVE", None, streamed(store, rec("m1")))


def test_erase_scope_counts_and_spares_other_scopes(
    store: MemoryStore, changes: Callable[[], list[Change]]
) -> None:
    for i in range(3):
        store.create(rec(f"m{i}"))
    store.create(rec("m0", S3))
    ledger_of(store).mark_pending(S1, 3)
    assert store.erase_scope(S1) == 3
    assert store.erase_scope(S1) == 0
    assert store.list(S1, statuses=tuple(Status)).items == []
    assert store.get(S3, "m0") is not None
    removes = [c for c in changes() if c[0] == "REMOVE"]
    assert len(removes) == 3  # one per record, so the projections follow
    # DynamoDB Streams carry the old image; the local outbox keeps none of an erased scope
    assert all(old is None or old.scope == S1 for _, _, old in removes)
    assert sorted(old.memory_id for _, _, old in removes if old) in ([], ["m0", "m1", "m2"])
    assert ledger_of(store).pending_scopes(10) == []


# ------------------------------------------------------------------ erase barrier


def test_the_erase_barrier_refuses_records_from_before_it_and_survives_the_erase(store: MemoryStore) -> None:
    store.create(rec("m0"))
    assert ledger_of(store).erase_barrier(S1) is None
    assert ledger_of(store).set_erase_barrier(S1, T0 + timedelta(hours=1)) == T0 + timedelta(hours=1)
    assert ledger_of(store).set_erase_barrier(S1, T0) == T0 + timedelta(hours=1)  # never moves back
    assert store.erase_scope(S1) == 1
    assert ledger_of(store).erase_barrier(S1) == T0 + timedelta(hours=1)  # the erase leaves it
    for created in (T0, T0 + timedelta(hours=1)):  # before or at the barrier: refused, atomically
        with pytest.raises(VersionConflict) as caught:
            store.create(rec("late", created_at=created))
        assert caught.value.details["reason"] == "erased"
        with pytest.raises(VersionConflict) as caught:
            store.transact([Put(rec("late2", created_at=created), None)])
        assert caught.value.details["reason"] == "erased"
    assert store.list(S1, statuses=tuple(Status)).items == []
    after = rec("new", created_at=T0 + timedelta(hours=1, microseconds=1))
    store.create(after)  # anything after the erase is a new life
    store.transact([Put(rec("new2", created_at=T0 + timedelta(hours=2)), None)])
    assert {r.memory_id for r in store.list(S1).items} == {"new", "new2"}
    store.create(rec("m0", S3, created_at=T0))  # other scopes never see the barrier
    assert ledger_of(store).erase_barrier(S3) is None and ledger_of(store).erase_barrier(S2) is None


def test_an_existing_id_is_still_a_plain_conflict_behind_a_barrier(store: MemoryStore) -> None:
    ledger_of(store).set_erase_barrier(S1, T0 - timedelta(days=1))
    store.create(rec("m1"))
    with pytest.raises(VersionConflict) as caught:
        store.create(rec("m1"))
    assert caught.value.details["memory_id"] == "m1" and caught.value.details.get("reason") != "erased"


# ------------------------------------------------------------------ consolidation counters


def test_pending_counters(store: MemoryStore) -> None:
    assert ledger_of(store).mark_pending(S1, 1) == 1
    assert ledger_of(store).mark_pending(S1, 4) == 5
    assert ledger_of(store).mark_pending(S2, 2) == 2
    assert ledger_of(store).pending_scopes(10) == [(S1, 5), (S2, 2)]
    assert ledger_of(store).pending_scopes(1) == [(S1, 5)]
    ledger_of(store).clear_pending(S1)
    assert ledger_of(store).pending_scopes(10) == [(S2, 2)]
    assert ledger_of(store).mark_pending(S1, 1) == 1


# ------------------------------------------------------------------ change feed


def test_changes_are_emitted_in_order_with_images(
    store: MemoryStore, changes: Callable[[], list[Change]]
) -> None:
    v1 = rec("m1")
    store.create(v1)
    v2 = bump(v1, content="v2")
    store.update(v2, expected_version=1)
    store.hard_delete(S1, "m1")
    v1, v2 = streamed(store, v1), streamed(store, v2)
    assert changes() == [("INSERT", v1, None), ("MODIFY", v2, v1), ("REMOVE", None, v2)]


def test_failed_writes_emit_nothing(store: MemoryStore, changes: Callable[[], list[Change]]) -> None:
    store.create(rec("m1"))
    with pytest.raises(VersionConflict):
        store.create(rec("m1"))
    with pytest.raises(VersionConflict):
        store.update(bump(rec("m1")), expected_version=7)
    assert store.hard_delete(S1, "absent") is False
    assert len(changes()) == 1


# ------------------------------------------------------------------ reads without vectors


def _without_vector(record: MemoryRecord) -> MemoryRecord:
    return replace(record, embedding=None)


def test_reads_without_embeddings_return_the_same_records(store: MemoryStore) -> None:
    """``embeddings=False`` may leave the vector out and nothing else; the latest version shows."""
    first = rec("m1", key="k", tags=("a",))
    second = rec("m2", category=Category.PREFERENCE)
    store.create(first)
    store.create(second)
    got = store.get_many(S1, ["m1", "m2", "missing"], embeddings=False)
    assert set(got) == {"m1", "m2"}
    for memory_id, original in (("m1", first), ("m2", second)):
        assert got[memory_id] in (original, _without_vector(original))
        assert got[memory_id].embedding_model == original.embedding_model
    listed = store.list(S1, category=Category.PREFERENCE.value, embeddings=False).items
    assert [r.memory_id for r in listed] == ["m2"]
    updated = bump(first, content="changed")
    store.update(updated, first.version)
    again = store.get_many(S1, ["m1"], embeddings=False)["m1"]
    assert again in (updated, _without_vector(updated))
    assert [r.content for r in store.scan_active(S1, 10, embeddings=False)] == ["content of m2", "changed"]
    store.transact([Put(bump(updated, status=Status.SUPERSEDED), updated.version)])
    assert [r.memory_id for r in store.scan_active(S1, 10, embeddings=False)] == ["m2"]
    assert store.hard_delete(S1, "m2")
    assert store.get_many(S1, ["m2"], embeddings=False) == {}
    assert store.list(S1, category=Category.PREFERENCE.value, embeddings=False).items == []
    assert store.get_many(S2, ["m1"], embeddings=False) == {}


def test_pending_scopes_list_ready_ones_first_then_longest_waiting(store: MemoryStore) -> None:
    early, busy, late = Scope("t1", "early"), Scope("t1", "busy"), Scope("t1", "late")
    ledger_of(store).mark_pending(early, 1)
    ledger_of(store).mark_pending(busy, 1)
    ledger_of(store).mark_pending(late, 2)
    assert ledger_of(store).pending_scopes(10) == [
        (early, 1),
        (busy, 1),
        (late, 2),
    ]  # none ready: oldest first
    assert ledger_of(store).mark_pending(busy, PENDING_READY_WRITES) == PENDING_READY_WRITES + 1
    assert ledger_of(store).pending_scopes(10) == [(busy, PENDING_READY_WRITES + 1), (early, 1), (late, 2)]
    assert ledger_of(store).pending_scopes(2) == [(busy, PENDING_READY_WRITES + 1), (early, 1)]
    ledger_of(store).clear_pending(early)
    ledger_of(store).mark_pending(early, 1)  # dirty again: now the newest
    assert ledger_of(store).pending_scopes(10)[1:] == [(late, 2), (early, 1)]


# ------------------------------------------------------------------ reconcile walk


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_segments_walk_disjoint_parts_that_cover_every_scope(store: MemoryStore, segments: int) -> None:
    scopes = [Scope(f"t{i % 3}", f"walker-{i}") for i in range(20)]
    for scope in scopes:
        store.create(rec("m1", scope))
    walked: list[Scope] = []
    for segment in range(segments):
        cursor: str | None = None
        while True:
            page, cursor = ledger_of(store).all_scopes(3, cursor, segment=segment, segments=segments)
            assert len(page) <= 3 and all(in_segment(s, segment, segments) for s in page)
            walked.extend(page)
            if cursor is None:
                break
    assert sorted(walked, key=lambda s: s.key) == sorted(scopes, key=lambda s: s.key)
    with pytest.raises(ValueError):
        ledger_of(store).all_scopes(3, segment=segments, segments=segments)


def test_reconcile_cursors_are_kept_per_segment_layout(store: MemoryStore) -> None:
    assert ledger_of(store).reconcile_cursor() is None
    first = ReconcileCursor(segment=1, segments=4, position=None, pass_started_at=T0, pass_scopes=0)
    ledger_of(store).save_reconcile_cursor(first)
    assert ledger_of(store).reconcile_cursor(1, 4) == first
    assert ledger_of(store).reconcile_cursor(0, 4) is None and ledger_of(store).reconcile_cursor(1, 2) is None
    _, position = ledger_of(store).all_scopes(1, segment=1, segments=4)
    done = ReconcilePass(T0, T0 + timedelta(minutes=3), 41)
    later = replace(first, position=position or "opaque", skip=2, pass_scopes=7, last_pass=done)
    ledger_of(store).save_reconcile_cursor(later)
    assert ledger_of(store).reconcile_cursor(1, 4) == later  # replaced, every field kept
