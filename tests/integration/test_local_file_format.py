"""The embedded stores' file format (``PRAGMA user_version``, adapters/embedded/sqlite_base.py): a
new file is stamped; a process never opens a file of a newer format (its schema script would bring
the old tables back into it); and a process that meets a file a newer version upgraded under it
says so, naming the file, instead of SQLite's bare "no such table" (docs/operations.md, "Upgrades")."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.errors import StoreUnavailable

SCOPE = Scope("t1", "u1")
SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT);"


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def record(memory_id: str, content: str) -> MemoryRecord:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    return MemoryRecord(
        scope=SCOPE,
        memory_id=memory_id,
        content=content,
        category=Category.GENERAL,
        embedding=tuple(np.ones(8, dtype=np.float32).tolist()),
        embedding_model="m",
        created_at=at,
        updated_at=at,
    )


def test_a_new_file_is_stamped_with_the_stores_format(tmp_path: Path) -> None:
    index = LocalSearchIndex(tmp_path / "search.db")
    index.upsert(record("m1", "I live in Porto."))
    index.close()
    assert user_version(tmp_path / "search.db") == 1
    db = SqliteDatabase(tmp_path / "notes.db", SCHEMA, name="notes", file_format=3)
    with db.read() as conn:
        conn.execute("SELECT count(*) FROM notes").fetchone()
    db.close()
    assert user_version(tmp_path / "notes.db") == 3


def test_a_file_of_a_newer_format_is_not_opened_and_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes_v2 (id TEXT PRIMARY KEY, text TEXT)")
        conn.execute("PRAGMA user_version = 2")
    db = SqliteDatabase(path, SCHEMA, name="notes", file_format=1)
    with pytest.raises(StoreUnavailable) as caught, db.read():
        pass
    assert "format 2, newer than this process reads (1)" in caught.value.message
    assert str(path) in caught.value.message
    assert caught.value.details == {"store": "notes", "file_format": 2, "reads_up_to": 1}
    assert tables(path) == {"notes_v2"}  # the old schema was not created in it
    with sqlite3.connect(path) as conn:
        assert (int(conn.execute("PRAGMA user_version").fetchone()[0]), journal_mode(conn)) == (2, "delete")


def journal_mode(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_file_upgraded_while_this_process_opens_it_is_refused_before_its_schema(tmp_path: Path) -> None:
    """The check and the schema script run in one transaction: a newer version that stamps and
    upgrades the file after this process's first look (here: from inside its ``migrate``, the
    step between the two) leaves the file to the newer version, the old tables not made again."""
    path = tmp_path / "notes.db"
    first = SqliteDatabase(path, SCHEMA, name="notes")
    with first.read() as conn:  # the file made, in format 1
        conn.execute("SELECT count(*) FROM notes").fetchone()
    first.close()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE kept (id TEXT)")

    def newer_version_meanwhile(_: sqlite3.Connection) -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("PRAGMA user_version = 2")
        other.execute("ALTER TABLE notes RENAME TO notes_v2")
        other.close()

    db = SqliteDatabase(path, SCHEMA, name="notes", migrate=newer_version_meanwhile)
    with pytest.raises(StoreUnavailable, match="newer than this process reads"), db.read():
        pass
    assert tables(path) == {"notes_v2", "kept"}  # no "notes" made again beside the upgraded table


@pytest.mark.parametrize("content", ["I live in Porto.", "我住在波尔图。"])
def test_an_open_store_meeting_a_file_upgraded_under_it_says_so(tmp_path: Path, content: str) -> None:
    """A process has the index open; a newer version upgrades the file (here: drops a table this
    version writes, stamps format 2). The old process's next write fails with the reason."""
    path = tmp_path / "search.db"
    index = LocalSearchIndex(path)
    index.upsert(record("m1", content))
    with sqlite3.connect(path) as conn:  # the newer version's migration
        conn.execute("ALTER TABLE doc_terms RENAME TO doc_terms_v2")
        conn.execute("PRAGMA user_version = 2")
    with pytest.raises(StoreUnavailable) as caught:
        index.upsert(record("m2", content + " 2"))
    assert "newer than this process reads" in caught.value.message
    assert caught.value.details["file_format"] == 2
    index.close()


def test_a_missing_table_in_a_file_of_this_format_stays_the_plain_error(tmp_path: Path) -> None:
    """Not every "no such table" is an upgrade: in a file of this process's own format the error
    is reported as SQLite gave it."""
    db = SqliteDatabase(tmp_path / "notes.db", SCHEMA, name="notes")
    with pytest.raises(StoreUnavailable) as caught, db.read() as conn:
        conn.execute("SELECT * FROM nowhere")
    assert "no such table: nowhere" in caught.value.message
    assert "file_format" not in (caught.value.details or {})
    db.close()
