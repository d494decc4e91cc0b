"""The embedded store's bookkeeping tables: a file written before ``pending_scopes.since`` opens
with its counters kept, and the cursors survive a reopen (another process, the next run)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.domain.models import Scope
from agentmem.domain.scope_walk import ReconcileCursor, ReconcilePass

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def test_an_older_pending_table_gets_its_since_column_and_keeps_its_counts(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE pending_scopes (pk TEXT PRIMARY KEY, writes INTEGER NOT NULL, updated_at TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO pending_scopes VALUES ('TENANT#t#USER#old', 2, '2026-01-01T00:00:00.000000Z')"
        )
    store = SqliteMemoryStore(path, clock=lambda: T0)
    old = Scope("t", "old")
    assert store.ledger.pending_scopes(10) == [(old, 2)]
    store.ledger.mark_pending(Scope("t", "new"), 1)
    assert store.ledger.pending_scopes(10) == [(old, 2), (Scope("t", "new"), 1)]  # the old one waited longer
    store.close()


def test_a_saved_cursor_survives_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    cursor = ReconcileCursor(2, 3, "b3BhcXVl", 4, T0, 9, ReconcilePass(T0, T0, 12))
    first = SqliteMemoryStore(path)
    first.ledger.save_reconcile_cursor(cursor)
    first.close()
    again = SqliteMemoryStore(path)
    assert again.ledger.reconcile_cursor(2, 3) == cursor
    again.close()
