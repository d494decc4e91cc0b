"""The embedded search index's cards (:meth:`~agentmem.ports.SearchIndex.cards`): each document's
record as :func:`agentmem.adapters.record_json.card` writes it, in ``docs.card``, written with the
document in the index's write transaction (NULL in a file indexed before cards: such an id is left
out and its caller reads the store).

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
