"""The embedded search index's readings (:mod:`agentmem.adapters.readings`): each document's
reading in ``docs.reading`` (JSON ``[fingerprint, keys, pinned]``), and one row per attribute key
in ``reading_keys`` (pk, rules, key, memory_id), which answers
:meth:`~agentmem.ports.SearchIndex.stating` through its primary key. Rows are written and
removed with their document, in the index's write transaction; a key row carries the fingerprint
of the rules that made it, and only rows made by the rules that run now are found.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from agentmem.adapters.embedded.sqlite_base import chunks, placeholders
from agentmem.adapters.readings import parse_reading, rules_fingerprint
from agentmem.port_types import Reading

SCHEMA = """
CREATE TABLE IF NOT EXISTS reading_keys (
    pk TEXT NOT NULL, rules TEXT NOT NULL, key TEXT NOT NULL, memory_id TEXT NOT NULL,
    PRIMARY KEY (pk, rules, key, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reading_keys_by_doc ON reading_keys (pk, memory_id);
"""


def write(conn: Any, pk: str, memory_id: str, reading: list[Any] | None) -> str | None:
    """Replace the document's key rows by ``reading``'s (:func:`~agentmem.adapters.readings.reading_doc`);
    returns the ``docs.reading`` value."""
    remove(conn, pk, memory_id)
    if reading is None:
        return None
    fingerprint, keys, _ = reading
    conn.executemany(
        "INSERT OR IGNORE INTO reading_keys (pk, rules, key, memory_id) VALUES (?, ?, ?, ?)",
        [(pk, fingerprint, key, memory_id) for key in keys],
    )
    return json.dumps(reading, ensure_ascii=False)


def remove(conn: Any, pk: str, memory_id: str) -> None:
    conn.execute("DELETE FROM reading_keys WHERE pk = ? AND memory_id = ?", (pk, memory_id))


def erase(conn: Any, pk: str) -> None:
    conn.execute("DELETE FROM reading_keys WHERE pk = ?", (pk,))


def readings(conn: Any, pk: str, memory_ids: Sequence[str]) -> dict[str, Reading]:
    found: dict[str, Reading] = {}
    for part in chunks(list(dict.fromkeys(memory_ids))):
        for memory_id, raw in conn.execute(
            "SELECT memory_id, reading FROM docs"
            f" WHERE pk = ? AND memory_id IN ({placeholders(len(part))}) AND reading IS NOT NULL",
            (pk, *part),
        ):
            reading = parse_reading(json.loads(raw))
            if reading is not None:
                found[memory_id] = reading
    return found


def stating(conn: Any, pk: str, keys: Iterable[str], k: int) -> list[str]:
    """The newest ``k`` documents whose reading by the current rules has one of ``keys``."""
    wanted = sorted(set(keys))
    fingerprint = rules_fingerprint()
    if not wanted or k <= 0 or not fingerprint:
        return []
    rows = conn.execute(
        "SELECT DISTINCT memory_id FROM reading_keys"
        f" WHERE pk = ? AND rules = ? AND key IN ({placeholders(len(wanted))})"
        " ORDER BY memory_id DESC LIMIT ?",
        (pk, fingerprint, *wanted, k),
    ).fetchall()
    return [str(r[0]) for r in rows]
