"""What only the embedded SQLite memory store does: outbox rows with checkpoints and lag (the
local stream), durability across reopening, concurrent connections, SQLite errors as agentmem
errors. The port's behaviour is in ``contracts/test_contract_memory_store.py``."""

from __future__ import annotations

import threading
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
    rows = store.read_outbox(0, 3)
    assert [r.seq for r in rows] == sorted(r.seq for r in rows) and len(rows) == 3
    assert rows[0].pk == S1.key and rows[0].sk == "MEM#m0" and rows[0].memory_id == "m0"
    stream = rows[0].to_stream_record()
    assert stream["eventName"] == "INSERT"
    assert image_to_record(stream["dynamodb"]["NewImage"]) == rec("m0")
    assert store.outbox_checkpoint("projector") == 0
    assert store.outbox_lag("projector") == 5
    store.set_outbox_checkpoint("projector", rows[-1].seq)
    assert store.outbox_lag("projector") == 2
    assert [r.memory_id for r in store.read_outbox(store.outbox_checkpoint("projector"), 10)] == ["m3", "m4"]
    assert store.prune_outbox(rows[-1].seq) == 3
    assert len(store.read_outbox(0, 10)) == 2


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
    assert store.outbox_lag("x") == 120


def test_sqlite_errors_surface_as_store_unavailable(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite3").mkdir()
    store = SqliteMemoryStore(tmp_path / "dir.sqlite3")
    with pytest.raises(StoreUnavailable):
        store.get(S1, "m1")


def test_in_memory_mode() -> None:
    store = SqliteMemoryStore(":memory:")
    store.create(rec("m1"))
    assert store.get(S1, "m1") == rec("m1")
