"""One read session per call (:class:`ReadSession`): what a context call, a recall or a turn
read of the memories it looks at, and the one check that what it shows or acts on is the
store's own copy.

Reads are cheap from the search index's cards (:meth:`~agentmem.ports.CardStore.cards`: each
memory as the projector last wrote it, without its vector) and dear from the store (a DynamoDB
read unit per ~4 KB). A call therefore scores and lists from cards, and before it answers
confirms against the store, in one batch read, only the memories it shows or acts on that it
knows from a card (:meth:`ReadSession.confirm`). A memory the store no longer holds, or holds in
another copy (superseded, quarantined, edited while the projection lags, or a card that drifted
at the same version), is *stale*: the caller ranks again with :meth:`ReadSession.current`, so a
memory superseded a moment ago is never shown, whatever the projections say
(``docs/design.md``, "What is shown is the store's own").

"The same copy" is defined once, :func:`same_copy` (version and content hash); the write path,
which judges a memory by what its rules read rather than by its version, passes its own
``same=`` (``services/neighbours.py``). The session is the identity map of the call
(cosmicpython's repository ``seen``): each id is read from the store at most once, and whatever
was read wins over a card for the rest of the call.

``degraded`` (:class:`Degraded`) is the session's record of what failed on the way (the
embedder, the search index, the graph, a session store): the answer is smaller and says so,
never an error. Sources fetched on an executor's threads add to it safely.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence

from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import AgentMemError
from agentmem.ports import CardStore, MemoryStore

log = logging.getLogger(__name__)

SameCopy = Callable[[MemoryRecord, MemoryRecord], bool]
"""``same(stored, card)``: whether ``card`` may stand for the store's copy ``stored``."""


def same_copy(stored: MemoryRecord, card: MemoryRecord) -> bool:
    """Whether ``card`` shows what the store's copy ``stored`` holds: the same version and the
    same content hash (content, key, value, category, status). The hash catches a card that
    drifted from the store at the same version (a rewrite that kept its version, a restore, a
    projection bug: what the reconciler repairs later), which a version alone would pass."""
    return stored.version == card.version and stored.content_hash == card.content_hash


class Degraded:
    """What failed during one call, each component named once, first failure first. Safe to add
    to from several threads."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: list[str] = list(dict.fromkeys(names))
        self._lock = threading.Lock()

    def add(self, component: str) -> None:
        with self._lock:
            if component not in self._names:
                self._names.append(component)

    def __contains__(self, component: object) -> bool:
        return component in self._names

    def __bool__(self) -> bool:
        return bool(self._names)

    def names(self) -> list[str]:
        """The components, first failure first."""
        return list(self._names)


class ReadSession:
    """The reads of one call in ``scope``: the store's copies read so far (:attr:`stored`, None
    where the store holds none), the cards handed out in their place (:attr:`cards`) and what
    degraded. ``index`` is where cards come from (None: every read goes to the store)."""

    def __init__(self, store: MemoryStore, index: CardStore | None, scope: Scope) -> None:
        self.store = store
        self.index = index
        self.scope = scope
        self.stored: dict[str, MemoryRecord | None] = {}
        self.cards: dict[str, MemoryRecord] = {}
        self.degraded = Degraded()
        self.rounds = 0  # confirmations that found a card stale (for tests and logs)
        self._split: set[str] = set()  # ids noted with two different cards (:meth:`carded`)
        self._lock = threading.Lock()  # recall and the listings fill the maps from two threads

    def read(self, records: Iterable[MemoryRecord]) -> None:
        """Take ``records``, read from the store by the caller, as the store's copies."""
        with self._lock:
            for record in records:
                self.stored[record.memory_id] = record

    def carded(self, cards: Iterable[MemoryRecord]) -> None:
        """Note ``cards`` (listed from the index by the caller) as known only from a card. Two
        cards of one id that are not the same copy (the index answered two reads from two
        projections) make the id stale at its confirmation, whatever the store holds: each
        holder then takes the store's copy."""
        with self._lock:
            for card in cards:
                if card.memory_id in self.stored:
                    continue
                held = self.cards.setdefault(card.memory_id, card)
                if held is not card and not same_copy(held, card):
                    self._split.add(card.memory_id)

    def is_card(self, memory_id: str) -> bool:
        """Whether ``memory_id`` is known from a card only (not read from the store yet)."""
        return memory_id in self.cards and memory_id not in self.stored

    def light(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """A copy without vectors of each id: the store's when it was read, else the index's card,
        else read from the store now; ids nothing holds are left out. While the search index is
        degraded, no card is asked for."""
        wanted = list(dict.fromkeys(memory_ids))
        todo = [m for m in wanted if m not in self.stored and m not in self.cards]
        found: dict[str, MemoryRecord] = {}
        if todo and self.index is not None and "search_index" not in self.degraded:
            try:
                found = self.index.cards(self.scope, todo)
            except AgentMemError as exc:  # the store answers for them
                log.warning("reads.cards_unavailable", extra={"error": type(exc).__name__})
        self.carded(found.values())
        rest = [m for m in todo if m not in found]
        if rest:
            read = self.store.get_many(self.scope, rest, embeddings=False)
            with self._lock:
                for memory_id in rest:
                    self.stored[memory_id] = read.get(memory_id)
        out: dict[str, MemoryRecord] = {}
        for memory_id in wanted:
            record = self.stored[memory_id] if memory_id in self.stored else self.cards.get(memory_id)
            if record is not None:
                out[memory_id] = record
        return out

    def unread(self, memory_ids: Iterable[str]) -> list[str]:
        """The ids of ``memory_ids`` known only from a card, each once."""
        return [m for m in dict.fromkeys(memory_ids) if self.is_card(m)]

    def confirm(
        self, memory_ids: Iterable[str], *, same: SameCopy = same_copy, embeddings: bool = False
    ) -> set[str]:
        """Read from the store, in one batch, the ids of ``memory_ids`` known only from a card;
        the ids whose card is stale (the store holds none, or another copy by ``same``). Every id
        read is the store's from then on (:meth:`current`). ``embeddings``: read whole (vectors
        too), for a caller that writes the record back."""
        unread = self.unread(memory_ids)
        if not unread:
            return set()
        found = self.store.get_many(self.scope, unread, embeddings=embeddings)
        return self.check(unread, found, same=same)

    def check(
        self, memory_ids: Iterable[str], found: Mapping[str, MemoryRecord], *, same: SameCopy = same_copy
    ) -> set[str]:
        """Take ``found`` (the store's copies, read for ``memory_ids``; an id it lacks: the store
        holds none) as the store's; the ids whose card is stale."""
        stale: set[str] = set()
        with self._lock:
            for memory_id in memory_ids:
                stored = self.stored[memory_id] = found.get(memory_id)
                card = self.cards.get(memory_id)
                if stored is None or card is None or memory_id in self._split or not same(stored, card):
                    stale.add(memory_id)
        if stale:
            self.rounds += 1
            log.info("reads.card_out_of_date", extra={"round": self.rounds, "ids": len(stale)})
        return stale

    def current(self, records: Mapping[str, MemoryRecord]) -> dict[str, MemoryRecord]:
        """``records`` with the store's copy of each id read from it (those it holds none of
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
