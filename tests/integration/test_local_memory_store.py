"""What only the embedded SQLite memory store does: outbox rows with checkpoints and lag (the
local stream), durability across reopening, concurrent connections, SQLite errors as agentmem
errors. The port's behaviour is in ``contracts/test_contract_memory_store.py``."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentmem.adapters.codec import image_to_record
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.errors import StoreUnavailable

S1 = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def rec(memory_id: str) -> MemoryRecord:
    return MemoryRecord(
        scope=S1,
        memory_id=memory_id,
        content=f"content of {memory_id}",
        category=Category.FACT,
        embedding=(0.5, 0.5, 0.5, 0.5),
        embedding_model="hash-test",
        created_at=T0,
    )


def test_outbox_rows_checkpoints_and_lag(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "m.sqlite3")
    for i in range(5):
        store.create(rec(f"m{i}"))
    rows = store.outbox.read_outbox(0, 3)
    assert [r.seq for r in rows] == sorted(r.seq for r in rows) and len(rows) == 3
    assert rows[0].pk == S1.key and rows[0].sk == "MEM#m0" and rows[0].memory_id == "m0"
    stream = rows[0].to_stream_record()
    assert stream["eventName"] == "INSERT"
    assert image_to_record(stream["dynamodb"]["NewImage"]) == rec("m0")
    assert store.outbox.outbox_checkpoint("projector") == 0
    assert store.outbox.outbox_lag("projector") == 5
    store.outbox.set_outbox_checkpoint("projector", rows[-1].seq)
    assert store.outbox.outbox_lag("projector") == 2
    assert [
        r.memory_id for r in store.outbox.read_outbox(store.outbox.outbox_checkpoint("projector"), 10)
    ] == ["m3", "m4"]
    assert store.outbox.prune_outbox(rows[-1].seq) == 3
    assert len(store.outbox.read_outbox(0, 10)) == 2


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    first = SqliteMemoryStore(path)
    first.create(rec("m1"))
    first.close()
    assert SqliteMemoryStore(path).get(S1, "m1") == rec("m1")


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "m.sqlite3")
    other = SqliteMemoryStore(tmp_path / "m.sqlite3")  # a second connection, as another process would

    def work(worker: int) -> None:
        target = store if worker % 2 else other
        for i in range(20):
            target.create(rec(f"w{worker}-{i:02d}"))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.scan_active(S1, 1000)) == 120
    assert store.outbox.outbox_lag("x") == 120


def test_sqlite_errors_surface_as_store_unavailable(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite3").mkdir()
    store = SqliteMemoryStore(tmp_path / "dir.sqlite3")
    with pytest.raises(StoreUnavailable):
        store.get(S1, "m1")


def test_in_memory_mode() -> None:
    store = SqliteMemoryStore(":memory:")
    store.create(rec("m1"))
    assert store.get(S1, "m1") == rec("m1")


# ------------------------------------------------------------------ row format and read cache


def _full(memory_id: str) -> MemoryRecord:
    """A record with every optional field set (the row format must keep each one)."""
    from agentmem.domain.models import Confidence, ImportanceSource, Layer, Source, SourceRefs, Status

    return MemoryRecord(
        scope=S1,
        memory_id=memory_id,
        content="用户喜欢 green tea — 不要咖啡",
        category=Category.PREFERENCE,
        layer=Layer.PERMANENT,
        key="drink",
        value="green tea",
        tags=("drink", "茶"),
        slot_hint="profile",
        importance=0.1 + 0.2,  # a float with no short decimal form
        importance_source=ImportanceSource.EXPLICIT,
        confidence=Confidence.INFERRED,
        source=Source.EXPLICIT,
        source_refs=SourceRefs("s-1", ("m-1", "m-2"), "trace-1"),
        embedding=(0.25, -1.5, 3.0e-8, 1.0 / 3.0),
        embedding_model="hash-test",
        embedding_revision="r2",
        version=3,
        created_at=T0,
        updated_at=datetime(2026, 1, 6, 9, 0, 0, 123456, tzinfo=UTC),
        last_accessed_at=T0,
        access_count=4,
        valid_from=T0,
        valid_to=datetime(2027, 1, 1, tzinfo=UTC),
        status=Status.ACTIVE,
        supersedes=("old-1",),
        pinned=True,
        expires_at=datetime(2030, 1, 1, tzinfo=UTC),
        entities=("tea",),
        quarantine_reason=None,
    )


def test_row_format_round_trips_every_field(tmp_path: Path) -> None:
    import numpy as np

    from agentmem.adapters.embedded import rows

    record = _full("m1")
    doc, blob = rows.encode(record)
    assert '"embedding":' not in doc and S1.key not in doc  # the vector is the BLOB, the scope the key
    back = rows.decode(S1, doc, blob)
    assert back.embedding == tuple(float(np.float32(x)) for x in record.embedding)  # float32 precision
    assert replace(back, embedding=record.embedding) == record
    assert rows.decode(S1, doc) == replace(record, embedding=None)
    store = SqliteMemoryStore(tmp_path / "m.sqlite3")
    store.create(record)
    assert store.get(S1, "m1") == back
    assert store.get_many(S1, ["m1"], embeddings=False)["m1"] == replace(record, embedding=None)


def test_a_file_of_the_first_row_format_is_migrated(tmp_path: Path) -> None:
    """Files written before the row format kept each record as its DynamoDB JSON image."""
    import sqlite3

    from agentmem.adapters.codec import record_to_json_image

    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE memories (pk TEXT NOT NULL, memory_id TEXT NOT NULL, status TEXT NOT NULL,
            category TEXT NOT NULL, key TEXT, created_at TEXT NOT NULL, version INTEGER NOT NULL,
            content_hash TEXT NOT NULL, item TEXT NOT NULL, PRIMARY KEY (pk, memory_id)) WITHOUT ROWID;
        CREATE INDEX memories_by_status ON memories (pk, status, memory_id);
        CREATE INDEX memories_by_key ON memories (pk, key, status);
        CREATE INDEX memories_by_category ON memories (pk, category, status, memory_id);
        """
    )
    records = [_full("m1"), rec("m2")]
    for r in records:
        old.execute(
            "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                S1.key,
                r.memory_id,
                r.status.value,
                r.category.value,
                r.key,
                "2026-01-05T09:00:00Z",
                r.version,
                r.content_hash,
                record_to_json_image(r),
            ),
        )
    old.commit()
    old.close()
    store = SqliteMemoryStore(path)
    # What the old file held is what the migrated one gives back (the image rounds floats to 12 places).
    for r in records:
        assert store.get(S1, r.memory_id) == image_to_record(json.loads(record_to_json_image(r)))
    assert [r.memory_id for r in store.list(S1, category=Category.PREFERENCE.value).items] == ["m1"]
    store.update(records[1].evolve(now=T0, content="after the migration"), records[1].version)
    store.close()
    again = SqliteMemoryStore(path)  # the migration does not run twice
    assert again.get(S1, "m2").content == "after the migration"  # type: ignore[union-attr]


def test_a_write_by_another_instance_is_seen_by_cached_reads(tmp_path: Path) -> None:
    """Two stores on one file stand for two worker processes: each caches decoded records and
    listings, and each sees the other's writes on its next read."""
    from agentmem.domain.models import Status
    from agentmem.ports import Put

    path = tmp_path / "m.sqlite3"
    writer, reader = SqliteMemoryStore(path), SqliteMemoryStore(path)
    first = rec("m1")
    writer.create(first)
    assert [r.content for r in reader.scan_active(S1, 10, embeddings=False)] == ["content of m1"]
    assert reader.get_many(S1, ["m1"], embeddings=False)["m1"].content == "content of m1"
    changed = first.evolve(now=T0, content="changed elsewhere")
    writer.update(changed, first.version)
    assert reader.get_many(S1, ["m1"], embeddings=False)["m1"].content == "changed elsewhere"
    assert [r.content for r in reader.scan_active(S1, 10, embeddings=False)] == ["changed elsewhere"]
    writer.create(rec("m2"))
    assert [r.memory_id for r in reader.scan_active(S1, 10, embeddings=False)] == ["m2", "m1"]
    writer.transact([Put(changed.evolve(now=T0, status=Status.SUPERSEDED), changed.version)])
    assert [r.memory_id for r in reader.scan_active(S1, 10, embeddings=False)] == ["m2"]
    assert writer.hard_delete(S1, "m2")
    assert reader.get_many(S1, ["m2"], embeddings=False) == {}
    writer.create(rec("m3"))
    writer.erase_scope(S1)
    assert reader.scan_active(S1, 10, embeddings=False) == []
    assert reader.get_many(S1, ["m1", "m3"], embeddings=False) == {}


def test_past_its_bound_the_read_cache_drops_its_oldest_records_not_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.adapters.embedded import read_cache
    from agentmem.ports import Put

    monkeypatch.setattr(read_cache, "MAX_CACHED_RECORDS", 8)
    store = SqliteMemoryStore(tmp_path / "memory.db")
    store.transact([Put(rec(f"m{i:02d}"), None) for i in range(12)])
    scope = rec("m00").scope
    first = [f"m{i:02d}" for i in range(12)]
    assert list(store.get_many(scope, first, embeddings=False)) == first  # 12 > 8 cached
    cached = store._cache._scopes[scope.key].records
    assert list(cached) == [f"m{i:02d}" for i in range(6, 12)]  # the 6 oldest went, down to 3/4
    assert store.get_many(scope, ["m00", "m11"], embeddings=False)["m00"] == replace(
        rec("m00"), embedding=None
    )


def test_a_row_keeps_the_rules_reading_and_hands_it_back_without_running_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.domain import attributes

    record = replace(rec("m1"), content="I moved to Lisbon last spring.")
    expected = attributes.infer_all(record.content)
    assert expected  # a residence: the rules read something
    store = SqliteMemoryStore(tmp_path / "m.sqlite3")
    store.create(record)
    other = SqliteMemoryStore(tmp_path / "m.sqlite3")  # another process: its own cache

    def rules(text: str) -> tuple[attributes.Attribute, ...]:
        raise AssertionError(f"the rules ran on {text!r}")

    monkeypatch.setattr(attributes, "_KNOWN", {})
    monkeypatch.setattr(attributes, "_read", rules)
    assert other.get(S1, "m1") == record
    assert attributes.infer_all(record.content) == expected  # from the row


def test_a_reading_by_other_rules_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmem.adapters import readings
    from agentmem.adapters.embedded import rows
    from agentmem.domain import attributes

    record = replace(rec("m1"), content="我住在杭州。")
    doc = json.loads(rows.encode(record)[0])
    assert doc["attrs"][0] == readings.rules_fingerprint() and doc["attrs"][1]
    doc["attrs"] = ["an older rule set", [["self", "residence", "上海", True, 0]]]
    monkeypatch.setattr(attributes, "_KNOWN", {})
    assert rows.decode(S1, json.dumps(doc)) == replace(record, embedding=None)
    assert [a.value for a in attributes.infer_all(record.content)] == ["杭州"]  # read again


def test_the_domain_keeps_a_bounded_number_of_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmem.domain import attributes

    monkeypatch.setattr(attributes, "_KNOWN", {})
    monkeypatch.setattr(attributes, "KNOWN_READINGS", 3)
    for n in range(5):
        attributes.known_reading(f"text {n}", ())
    assert list(attributes._KNOWN) == ["text 2", "text 3", "text 4"]  # the oldest went first
