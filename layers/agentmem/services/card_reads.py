"""What recall reads of its candidates (:class:`CandidateReads`): the search index's cards
(:meth:`~agentmem.ports.SearchIndex.cards`, the projected copy of each memory) to score them,
and from the source of truth only what it answers.

A recall at 10k memories meets ~55 candidates (k-NN, BM25, the graph) to return 10. Reading each
from the store cost ~28 DynamoDB read units a context call (eventually consistent batch reads of
~0.6 KB items, 0.5 unit each); the cards come with the index, which recall asks anyway. Scoring
on a card is scoring on the version the projector last wrote; so before recall answers, every
memory of its answer that it knows only from a card is read from the store
(:meth:`CandidateReads.confirm`). A memory the store no longer holds, or holds in another version
(superseded, quarantined, reinforced a moment ago while the projection lags) or in the same
version with other content (a drifted card, told by the content hash: :func:`same_copy`), makes
recall score again with the store's copy (or without it), until everything it answers is the
store's own — the guarantee recall always gave: a memory superseded a moment ago is never
returned, whatever the projections say. A context call asks recall for its answer unconfirmed
(``confirm=False``) and confirms only the memories it shows, with the slots' in one batch
(:meth:`CandidateReads.unread`, :meth:`CandidateReads.check`; ``services/context.py``). An id the
index holds no card of (projected before cards were kept), and every candidate while the index
fails, is read from the store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import AgentMemError
from agentmem.ports import MemoryStore, SearchIndex

log = logging.getLogger(__name__)


def same_copy(stored: MemoryRecord, card: MemoryRecord) -> bool:
    """Whether ``card`` shows what the store's copy ``stored`` holds: the same version and the same
    content hash (content, key, value, category, status). The hash catches a card that drifted
    from the store at the same version (a rewrite that kept its version, a restore, a projection
    bug: what the reconciler repairs later), which a version alone would pass."""
    return stored.version == card.version and stored.content_hash == card.content_hash


@dataclass
class CandidateReads:
    """One recall's reads of its candidates, in ``scope``."""

    store: MemoryStore
    index: SearchIndex | None
    scope: Scope
    # the store's copy of each id read from it (None: it holds none)
    stored: dict[str, MemoryRecord | None] = field(default_factory=dict)
    rounds: int = 0  # confirmations that found a card out of date (for tests and logs)

    def read(self, records: Iterable[MemoryRecord]) -> None:
        """Take ``records`` as the store's copies (records recall read from the store itself)."""
        for record in records:
            self.stored[record.memory_id] = record

    def light(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """A copy without vectors of each id: the store's when it was read, else the index's card,
        else read from the store now; ids nothing holds are left out."""
        wanted = list(dict.fromkeys(memory_ids))
        todo = [m for m in wanted if m not in self.stored]
        cards: dict[str, MemoryRecord] = {}
        if todo and self.index is not None:
            try:
                cards = self.index.cards(self.scope, todo)
            except AgentMemError as exc:  # the store answers for it
                log.warning("recall.cards_unavailable", extra={"error": type(exc).__name__})
        rest = [m for m in todo if m not in cards]
        if rest:
            found = self.store.get_many(self.scope, rest, embeddings=False)
            for memory_id in rest:
                self.stored[memory_id] = found.get(memory_id)
        out: dict[str, MemoryRecord] = {}
        for memory_id in wanted:
            record = self.stored[memory_id] if memory_id in self.stored else cards.get(memory_id)
            if record is not None:
                out[memory_id] = record
        return out

    def confirm(self, answer: Sequence[MemoryRecord]) -> bool:
        """Read from the store the memories of ``answer`` known only from a card; True when each
        is the store's version (the answer stands), False when one is gone or changed (the caller
        scores again: :meth:`current` gives the store's copies)."""
        unread = self.unread(answer)
        if not unread:
            return True
        return self.check(
            unread, self.store.get_many(self.scope, [r.memory_id for r in unread], embeddings=False)
        )

    def unread(self, answer: Iterable[MemoryRecord]) -> list[MemoryRecord]:
        """The memories of ``answer`` known only from a card."""
        return [r for r in answer if r.memory_id not in self.stored]

    def check(self, cards: Iterable[MemoryRecord], found: Mapping[str, MemoryRecord]) -> bool:
        """Take ``found`` (the store's copies, read for ``cards``; an id it lacks: the store holds
        none) as the store's; True when each card is the store's copy (:func:`same_copy`)."""
        same = True
        for card in cards:
            stored = self.stored[card.memory_id] = found.get(card.memory_id)
            if stored is None or not same_copy(stored, card):
                same = False
        if not same:
            self.rounds += 1
            log.info("recall.card_out_of_date", extra={"round": self.rounds})
        return same

    def current(self, records: dict[str, MemoryRecord]) -> dict[str, MemoryRecord]:
        """``records`` with the store's copy of each id it was read for (those it holds none of
        left out)."""
        out: dict[str, MemoryRecord] = {}
        for memory_id, record in records.items():
            if memory_id in self.stored:
                stored = self.stored[memory_id]
                if stored is not None:
                    out[memory_id] = stored
            else:
                out[memory_id] = record
        return out
