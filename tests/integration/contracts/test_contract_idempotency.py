"""IdempotencyStore contract, parametrised over implementations: ``embedded`` (SQLite, in
``memory.db`` as the embedded wiring does), ``aws`` (DynamoDB's session table on moto) and
``fake`` (the in-memory fake, :mod:`support.fakes.idempotency`).

Every adapter must: store a new key's record and hand it back; hand back the first record (not
the candidate) to a second claim of the key, with its answer once completed; keep keys apart per
scope; treat an expired record as absent (the key is claimed again); and erase a scope's records
without touching another scope's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_idempotency import DynamoIdempotencyStore
from agentmem.adapters.embedded.idempotency import SqliteIdempotencyStore
from agentmem.domain.models import Scope
from agentmem.ports import IdempotencyRecord, IdempotencyStore
from support.aws import dynamodb_tables
from support.fakes.idempotency import InMemoryIdempotencyStore

S1, S2 = Scope("t1", "u1"), Scope("t1", "u2")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["embedded", "aws", "fake"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IdempotencyStore]:
    if request.param == "fake":
        yield InMemoryIdempotencyStore()
        return
    if request.param == "embedded":
        sqlite = SqliteIdempotencyStore(tmp_path / "memory.db")
        yield sqlite
        sqlite.close()
        return
    with dynamodb_tables("aws") as tables:
        yield DynamoIdempotencyStore(tables.session_table, client=tables.lazy())


def record(key: str, fingerprint: str = "f1", request_id: str = "r1", at: datetime = T0) -> IdempotencyRecord:
    return IdempotencyRecord(key, fingerprint, request_id, at, at + timedelta(hours=24))


def test_the_first_claim_wins_and_its_answer_is_kept(store: IdempotencyStore) -> None:
    first = record("k1")
    assert store.claim(S1, first, T0) == first
    later = T0 + timedelta(minutes=1)
    again = store.claim(S1, record("k1", "f2", "r2", later), later)
    assert (again.fingerprint, again.request_id, again.first_at, again.status) == ("f1", "r1", T0, None)
    store.complete(S1, "k1", 201, '{"id":"m1"}')
    done = store.claim(S1, record("k1", "f1", "r3", later), later)
    assert (done.request_id, done.status, done.body) == ("r1", 201, '{"id":"m1"}')


def test_keys_are_per_scope_and_an_expired_record_frees_its_key(store: IdempotencyStore) -> None:
    store.claim(S1, record("k1"), T0)
    other = record("k1", "f9", "r9")
    assert store.claim(S2, other, T0) == other  # another user's key of the same name
    after = T0 + timedelta(hours=25)
    fresh = record("k1", "f5", "r5", after)
    assert store.claim(S1, fresh, after) == fresh


def test_an_erase_drops_the_scopes_records_only(store: IdempotencyStore) -> None:
    store.claim(S1, record("k1"), T0)
    store.claim(S2, record("k1", request_id="r2"), T0)
    assert store.erase_scope(S1) == 1
    assert store.claim(S1, record("k1", "f7", "r7"), T0).request_id == "r7"
    assert store.claim(S2, record("k1", "f8", "r8"), T0).request_id == "r2"
