"""The embedded search index's cards (:meth:`~agentmem.ports.SearchIndex.cards`): each document's
record as :func:`agentmem.adapters.record_json.card` writes it, in ``docs.card``, written with the
document in the index's write transaction (NULL in a file indexed before cards: such an id is left
out and its caller reads the store).

:func:`listing` answers :meth:`~agentmem.ports.SearchIndex.listing` from ``docs.category``: the ids
of a listing are kept in the scope's cache until a document of the scope changes.

Decoded cards are kept per scope (:data:`CACHED_CARDS`, most recently used) in the scope's cache
of the index, which every write of this instance and every change another writer made (the
generation catch-up) clears of the documents they touch: a kept card is the stored one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from agentmem.adapters import record_json
from agentmem.adapters.embedded.sqlite_base import chunks, placeholders
from agentmem.domain.models import MemoryRecord, Scope

CACHED_CARDS = 4096
"""Decoded cards kept per cached scope (a context call at 10k memories reads ~60)."""


def read(
    conn: Any, scope: Scope, memory_ids: Sequence[str], kept: OrderedDict[str, MemoryRecord]
) -> dict[str, MemoryRecord]:
    """The cards of ``memory_ids`` found in ``scope``: from ``kept`` where it holds them, the
    rest read (in the caller's snapshot), decoded and kept."""
    found: dict[str, MemoryRecord] = {}
    missing: list[str] = []
    for memory_id in dict.fromkeys(memory_ids):
        card = kept.get(memory_id)
        if card is None:
            missing.append(memory_id)
        else:
            kept.move_to_end(memory_id)
            found[memory_id] = card
    for part in chunks(missing):
        for memory_id, doc in conn.execute(
            "SELECT memory_id, card FROM docs"
            f" WHERE pk = ? AND memory_id IN ({placeholders(len(part))}) AND card IS NOT NULL",
            (scope.key, *part),
        ):
            found[memory_id] = kept[memory_id] = record_json.decode(scope, doc)
    while len(kept) > CACHED_CARDS:
        kept.popitem(last=False)
    return found


def listing(
    conn: Any,
    scope: Scope,
    category: str,
    limit: int,
    kept_ids: dict[tuple[str, int], list[str] | None],
    kept: OrderedDict[str, MemoryRecord],
) -> list[MemoryRecord] | None:
    """The cards of the ``limit`` newest documents of ``category`` in ``scope``; None when a
    document of the scope has no card or category (indexed before they were kept)."""
    key = (category, limit)
    if key not in kept_ids:
        kept_ids[key] = _listed(conn, scope.key, category, limit)
    ids = kept_ids[key]
    if ids is None:
        return None
    found = read(conn, scope, ids, kept)
    return [found[m] for m in ids if m in found]


def _listed(conn: Any, pk: str, category: str, limit: int) -> list[str] | None:
    if conn.execute(
        "SELECT 1 FROM docs INDEXED BY docs_without_card WHERE pk = ? AND (card IS NULL OR category IS NULL)"
        " LIMIT 1",
        (pk,),
    ).fetchone():
        return None
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT memory_id FROM docs INDEXED BY docs_by_category"
            " WHERE pk = ? AND category = ? ORDER BY memory_id DESC LIMIT ?",
            (pk, category, limit),
        )
    ]
