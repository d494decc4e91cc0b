"""The embedded search index's tables (:mod:`.search_index`) and the upgrade of a file an older
version wrote.

- ``docs``: one row per indexed memory, without its vector: version, content hash, BM25 length,
  generation stamp, the attribute reading (:mod:`.index_readings`), the card
  (:mod:`.index_cards`) and the category the slot listings ask for (``docs_by_category``). A
  ``WITHOUT ROWID`` table keeps a row in its primary key's b-tree, whose cells hold about 1,000
  bytes before the rest spills to an overflow page; with the vector in the row (1 KB at 256-d,
  2 KB at 512-d) every row spilled, and reading a card or a reading cost two
  pages. Measured at 11k documents (256-d, 96 random ids, SQLite's default 2 MB page cache): the
  cards read in 1.40 ms with the vector in the row, 0.35 ms without it.
- ``doc_vectors``: the vector of each document that has one, with its model. An ordinary (rowid)
  table: its leaf cells hold up to ~4 KB, so a vector does not spill. Read only to load a scope's
  matrix and to take another writer's changes into it.
- ``doc_terms``: each document's BM25 terms and their counts (a JSON object), one row per
  document. It replaced ``postings`` (one row per term and document, keyed by term): a write put
  ~20 rows into places spread over the whole table, so at 10k documents a user a projector
  transaction wrote ~2.5× the pages it wrote at 100 (commit 260 µs against 104). The inverted
  index is built in memory from these rows (:mod:`.text_index`); nothing asks SQLite by term.
- ``tombstones``, ``generations`` and the readings' key rows, as before.

:func:`migrate` (run before the schema script, :class:`~.sqlite_base.SqliteDatabase`) upgrades
older files in place: columns added after the first version (generation stamps, readings, cards,
categories; NULL or 0 where unknown, a category taken from its row's card), for a file
whose ``docs`` rows still hold the vectors, the vectors moved to ``doc_vectors``, and for a file
with ``postings``, its rows gathered into ``doc_terms``, each move in one transaction. A no-op on
a current file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentmem.adapters.embedded import index_readings

_DOCS = """
CREATE TABLE IF NOT EXISTS docs (
    pk TEXT NOT NULL, memory_id TEXT NOT NULL, version INTEGER NOT NULL, content_hash TEXT NOT NULL,
    doc_len INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 0, reading TEXT, card TEXT, category TEXT,
    PRIMARY KEY (pk, memory_id)
) WITHOUT ROWID;
"""
_DOC_VECTORS = """
CREATE TABLE IF NOT EXISTS doc_vectors (
    pk TEXT NOT NULL, memory_id TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (pk, memory_id)
);
"""
_DOC_TERMS = """
CREATE TABLE IF NOT EXISTS doc_terms (
    pk TEXT NOT NULL, memory_id TEXT NOT NULL, terms TEXT NOT NULL,
    PRIMARY KEY (pk, memory_id)
) WITHOUT ROWID;
"""
SCHEMA = (
    _DOCS
    + _DOC_VECTORS
    + _DOC_TERMS
    + """
CREATE INDEX IF NOT EXISTS docs_by_gen ON docs (pk, gen);
CREATE INDEX IF NOT EXISTS docs_by_category ON docs (pk, category, memory_id);
CREATE INDEX IF NOT EXISTS docs_without_card ON docs (pk) WHERE card IS NULL OR category IS NULL;
CREATE TABLE IF NOT EXISTS tombstones (
    pk TEXT NOT NULL, memory_id TEXT NOT NULL, version INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pk, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tombstones_by_gen ON tombstones (pk, gen);
CREATE TABLE IF NOT EXISTS generations (
    pk TEXT PRIMARY KEY, gen INTEGER NOT NULL, reset_gen INTEGER NOT NULL DEFAULT 0
);
"""
    + index_readings.SCHEMA
)

_ADDED_COLUMNS = (
    ("docs", "gen INTEGER NOT NULL DEFAULT 0"),
    ("tombstones", "gen INTEGER NOT NULL DEFAULT 0"),
    ("generations", "reset_gen INTEGER NOT NULL DEFAULT 0"),
    ("docs", "reading TEXT"),  # a file written before readings: its documents' readings are unknown
    ("docs", "card TEXT"),  # a file written before cards: the caller reads such a memory from the store
    ("docs", "category TEXT"),  # a file written before listings: filled from the card (migrate)
)
_KEPT = "pk, memory_id, version, content_hash, doc_len, gen, reading, card, category"


def _columns(conn: Any, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def migrate(conn: Any) -> None:
    """Upgrade a file an older version wrote (see the module docstring); its rows without a
    generation stamp count as generation 0, older than any cache (a cache of such a file is
    reloaded once), and those without a reading or card are read from the store by the callers."""
    for table, column in _ADDED_COLUMNS:
        columns = _columns(conn, table)
        if columns and column.split()[0] not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            if column.startswith("category"):  # what the cards say; a row without one stays NULL
                conn.execute(
                    "UPDATE docs SET category = json_extract(card, '$.category')"
                    " WHERE category IS NULL AND card IS NOT NULL"
                )
    if "vector" in _columns(conn, "docs"):
        _in_one_transaction(conn, lambda: "vector" in _columns(conn, "docs"), _MOVE_VECTORS)
    if _columns(conn, "postings"):
        _in_one_transaction(conn, lambda: bool(_columns(conn, "postings")), _MOVE_POSTINGS)


# The vectors out of ``docs`` rows into ``doc_vectors``, ``docs`` rebuilt without them.
_MOVE_VECTORS = (
    _DOC_VECTORS,
    "INSERT OR REPLACE INTO doc_vectors (pk, memory_id, model, vector)"
    " SELECT pk, memory_id, model, vector FROM docs"
    " WHERE vector IS NOT NULL AND model IS NOT NULL AND length(vector) > 0",
    "DROP INDEX IF EXISTS docs_by_gen",  # made again, on the new table
    "ALTER TABLE docs RENAME TO docs_with_vectors",
    _DOCS,
    f"INSERT INTO docs ({_KEPT}) SELECT {_KEPT} FROM docs_with_vectors",
    "DROP TABLE docs_with_vectors",
)
# The ``postings`` rows gathered into one ``doc_terms`` row per document, the table dropped.
_MOVE_POSTINGS = (
    _DOC_TERMS,
    "INSERT OR REPLACE INTO doc_terms (pk, memory_id, terms)"
    " SELECT pk, memory_id, json_group_object(term, tf) FROM postings GROUP BY pk, memory_id",
    "DROP TABLE postings",
)


def _in_one_transaction(conn: Any, due: Callable[[], bool], statements: Sequence[str]) -> None:
    """Run ``statements`` in one transaction when ``due()`` still holds inside it (another
    process may be opening the file and have done it first)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if due():
            for statement in statements:
                conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
