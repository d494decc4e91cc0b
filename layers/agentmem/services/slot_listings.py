"""The context slots' listings (:class:`SlotListings`): the profile (identity + preference) and
policy memories a context call ranks, listed from the search index's cards and confirmed from
the source of truth for what the context shows.

Each context call ranks the newest :data:`LISTING_LIMIT` active memories of each slot category
to show a few of them. Listed from the store, that was three listings of up to 100 records each:
on DynamoDB 13 of a context call's ~22 read units (``agentmem bench cost``). The search index
holds the same memories as cards (:meth:`~agentmem.ports.CardStore.cards`: the record as the
projector last wrote it, without its vector), and answers the listing in the same order
(:meth:`~agentmem.ports.CardStore.listing`); what a card cannot know is what changed since the
projector wrote it, so:

- the store's copies that recall read in the same call (its newest memories, which the projection
  may not hold yet, and what it answers) replace the cards of the same ids and join the listing
  (:meth:`SlotListings.merge`): read-your-writes, as when the store listed;
- the listed cards are noted in the call's read session (:class:`~agentmem.services.reads.ReadSession`);
  before the context is returned, every memory it shows that is known only from a card is read
  from the store, recall's and the slots' in one batch read (:meth:`~agentmem.services.reads.ReadSession.confirm`);
  one gone or in another copy (superseded, quarantined, edited while the projection lags) is
  replaced by the store's copy or left out (:meth:`SlotListings.merge`), and the slots are filled
  again — a memory superseded a moment ago is never shown, whatever the projection says. After
  :data:`CONFIRM_ROUNDS` such rounds the store lists the slots itself (and recall confirms its
  whole answer).

The store lists when there is no index, when the index fails or cannot answer (documents indexed
before cards were kept), and for a time-travel context (``as_of``: superseded memories, which the
index does not hold).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.errors import AgentMemError
from agentmem.ports import CardStore, MemoryStore
from agentmem.services.reads import ReadSession

log = logging.getLogger(__name__)

PROFILE_CATEGORIES = (Category.IDENTITY, Category.PREFERENCE)
POLICY_CATEGORIES = (Category.POLICY,)
LISTING_LIMIT = 100  # newest active memories ranked per category
CONFIRM_ROUNDS = 3


@dataclass
class SlotListings:
    """One context call's listings, newest first per category; ``from_index``: listed from the
    index's cards; ``unconfirmed``: the ids known only from those cards."""

    by_category: dict[Category, list[MemoryRecord]]
    from_index: bool = False
    unconfirmed: set[str] = field(default_factory=set)

    @property
    def profile(self) -> list[MemoryRecord]:
        return [r for c in PROFILE_CATEGORIES for r in self.by_category.get(c, [])]

    @property
    def policy(self) -> list[MemoryRecord]:
        return [r for c in POLICY_CATEGORIES for r in self.by_category.get(c, [])]

    def merge(self, stored: Mapping[str, MemoryRecord | None]) -> None:
        """Take the store's copies ``stored`` (None: the store holds none) over the cards of the
        same ids, and list the active ones of a slot category the listing lacks (the newest,
        which the projection may not hold yet). Listings the store answered are left as they are."""
        if not self.from_index:
            return
        replaced = {m for m in stored if m in self.unconfirmed}
        for category, listed in self.by_category.items():
            by_id = {r.memory_id: r for r in listed}
            changed = False
            for memory_id, record in stored.items():
                if memory_id in by_id and memory_id not in replaced:
                    continue  # the store's copy already
                if record is None or record.status is not Status.ACTIVE or record.category is not category:
                    changed |= by_id.pop(memory_id, None) is not None
                elif by_id.get(memory_id) is not record:
                    by_id[memory_id] = record
                    changed = True
            if changed:
                self.by_category[category] = [by_id[m] for m in sorted(by_id, reverse=True)[:LISTING_LIMIT]]
        self.unconfirmed -= replaced


def list_from_store(store: MemoryStore, scope: Scope, as_of: datetime | None = None) -> SlotListings:
    """The listings from the store (as of ``as_of``: the memories valid then, superseded included)."""
    statuses = (Status.ACTIVE,) if as_of is None else (Status.ACTIVE, Status.SUPERSEDED)
    by_category: dict[Category, list[MemoryRecord]] = {}
    for category in (*PROFILE_CATEGORIES, *POLICY_CATEGORIES):
        listed = store.list(
            scope, statuses=statuses, category=category.value, limit=LISTING_LIMIT, embeddings=False
        ).items
        by_category[category] = [r for r in listed if as_of is None or r.valid_at(as_of)]
    return SlotListings(by_category)


def list_slots(session: ReadSession, index: CardStore | None, as_of: datetime | None = None) -> SlotListings:
    """The listings from the index's cards where it can answer them (see the module), noted in
    ``session`` as cards to confirm, else from the store."""
    store, scope = session.store, session.scope
    if index is None or as_of is not None:
        return list_from_store(store, scope, as_of)
    by_category: dict[Category, list[MemoryRecord]] = {}
    try:
        for category in (*PROFILE_CATEGORIES, *POLICY_CATEGORIES):
            listed = index.listing(scope, category.value, LISTING_LIMIT)
            if listed is None:  # documents without cards: the store answers
                return list_from_store(store, scope)
            by_category[category] = listed
    except AgentMemError as exc:
        log.warning("context.listing_unavailable", extra={"error": type(exc).__name__})
        return list_from_store(store, scope)
    unconfirmed = {r.memory_id for listed in by_category.values() for r in listed}
    session.carded(r for listed in by_category.values() for r in listed)
    return SlotListings(by_category, from_index=True, unconfirmed=unconfirmed)
