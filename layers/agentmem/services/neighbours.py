"""The neighbour pool of a turn: the stored memories its new facts are judged against (dedup,
conflict, supersede — :mod:`agentmem.domain.conflict`).

Taken from the search index, so its cost follows the turn's facts, not the user's size: each
fact's nearest by k-NN on its vector and by BM25 on its text, the newest memories stating one of
the facts' attributes (:meth:`~agentmem.ports.SearchIndex.stating`: a changed residence, car or
manager meets the memory it replaces however differently, in whichever language, and however
long ago it was said), plus every active memory sharing a fact's key (a same-key conflict may be
worded quite differently), plus the few newest memories from the store, which the projector may
not have indexed yet (read-your-writes). Without an index, or while it is down, the bounded
fallback: the newest memories of the store.

Cost per turn: one k-NN, one BM25 and one similarity query per fact, one ``find_by_key`` per
distinct key, one ``stating``, one ``readings`` and one ``cards`` query, and from the store the
newest few and the one record a decision acts on: independent of how many memories the user holds.

Not every hit is read (:meth:`NeighbourPool._needed`). The rules look at three kinds of stored
memory: any that states an attribute of the fact (``replaces_by_attribute``), the same-key ones,
and the three most similar (:func:`~agentmem.domain.conflict.decide`). The search index keeps
each memory's attribute keys and pinned flag (:meth:`~agentmem.ports.SearchIndex.readings`,
made by the projector with the rules' fingerprint), and the cosine of every hit comes from the
index already; so a hit is read only when its keys meet a fact's, when it is among a fact's three
most similar in ``rank``'s order, when it is pinned, or when the index cannot say (a document
projected before readings, or by other rules). The decisions are those of reading every hit
(replayed over the bilingual memory and update sets, ``tests/unit/services/test_neighbour_pool_reads.py``);
DynamoDB read units per turn went from 16.9 to 13.1 (``agentmem bench cost``; 13.9 with the
memories ``stating`` adds). Like the cosines, a reading is the one of the version the index last
projected.

The pool is read without vectors (``embeddings=False``: the store's cheap copies; the embedded
store serves them from its per-process cache, DynamoDB leaves the vector items unread). How
similar each is to a new fact comes from the search index, which holds the vectors already
(:meth:`NeighbourPool.similarities`: one call per fact); only a record the index does not hold
yet (projection lag) is read with its vector. Reading every neighbour's vector was most of the
pool's cost: ~14 DynamoDB read units per turn, and at 10k memories a user the decoding of ~37
vectors per turn on the embedded store. The record a fact reinforces or supersedes is read whole
just before it is written back (:meth:`NeighbourPool.full`), so nothing is ever written without
its vector, nor from a stale copy.

Cards. The hits the rules need are taken from the index's cards
(:meth:`~agentmem.ports.SearchIndex.cards`: the projected copy of each, without its vector), as
recall takes its candidates (:mod:`agentmem.services.reads`); an id without a card, and every
hit while the cards cannot be read, comes from the store. A card is the version the projector last
wrote, so the memory a decision acts on (the one a fact reinforces or supersedes) is confirmed
against the store before anything is written (:meth:`NeighbourPool.confirm`): where the store's
copy differs in what the rules read (content, category, key, layer, status, pinned, validity; a
reinforcement's count and importance do not count), or holds it no more, the fact is judged again
with the store's copy (or without it). So a memory superseded a moment ago is never reinforced or
superseded again through a lagging card, and one reinforced a moment ago is reinforced once more
rather than duplicated. What the cards still decide on the projection's word is what they did
before through the index's cosines and readings: which memories are not acted on.

The unprojected neighbours come through a :class:`~agentmem.services.caches.NeighbourRecords` of the full records the store
decoded for earlier turns (a user's newest memories wait for the projector over several turns): a
cached record is used only while it equals the store's current vector-less copy field for field,
so it is the one a full read would give. A record erased by another process is never served again
(the store no longer returns it) and leaves the bounded cache as newer records come in; a turn
that meets its user's erase empties the user's entries.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from agentmem.domain.conflict import NEAREST, attribute_keys
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import MemoryRecord, Scope
from agentmem.domain.similarity import Calibration
from agentmem.errors import StoreUnavailable, VersionConflict
from agentmem.ports import MemoryStore, SearchIndex
from agentmem.services.caches import NeighbourRecords
from agentmem.services.reads import ReadSession

log = logging.getLogger(__name__)

RECENT = 20  # newest memories read from the store: read-your-writes ahead of the projector
FROM_KNN = 10  # per fact, nearest by vector (the rules judge the 3 most similar: margin for ANN)
FROM_KEYWORD = 5  # per fact, best by BM25 (exact rewordings, records of another embedding model)
FROM_STATING = 10  # per turn, the newest stating a fact's attribute (an update meets its old value)
FALLBACK = 200  # newest memories compared when there is no search index, or it is down


def swapped(pool: list[MemoryRecord], memory_id: str, current: MemoryRecord | None) -> list[MemoryRecord]:
    """``pool`` with ``memory_id`` replaced by ``current`` in its place (left out when None)."""
    if current is None:
        return [r for r in pool if r.memory_id != memory_id]
    return [current if r.memory_id == memory_id else r for r in pool]


def same_judgement(stored: MemoryRecord, card: MemoryRecord) -> bool:
    """The write path's "the same copy" (``same=`` of :meth:`~agentmem.services.reads.ReadSession.confirm`):
    the store's copy reads the same to the rules as the card (:func:`_judged`)."""
    return _judged(stored) == _judged(card)


def _judged(record: MemoryRecord) -> tuple[object, ...]:
    """What of ``record`` the rules read (:func:`~agentmem.domain.conflict.decide`, ``rank``, the
    write-back's choices): its content hash (content, key, value, category and status, the one
    the projections are guarded by) and the layer, pin, validity and embedding model; not its
    version, count, importance or sources, which a reinforcement changes."""
    r = record
    return (r.content_hash, r.layer, r.pinned, r.valid_from, r.valid_to, r.expires_at, r.embedding_model)


@dataclass(frozen=True)
class NeighbourPool:
    store: MemoryStore
    index: SearchIndex | None
    cache: NeighbourRecords = field(default_factory=NeighbourRecords)  # the write pipeline's, across turns
    calibration: Calibration | None = None  # the embedder's: lets gather skip what cannot matter
    recent: int = RECENT
    from_knn: int = FROM_KNN
    from_keyword: int = FROM_KEYWORD
    from_stating: int = FROM_STATING
    fallback: int = FALLBACK
    # (vector bytes, memory id) -> the index's cosine; None: asked, no indexed vector
    _cosines: dict[tuple[bytes, str], float | None] = field(default_factory=dict, compare=False, repr=False)
    # scope key -> the turn's reads (the cards the pool holds memories by, the store's copies)
    _sessions: dict[str, ReadSession] = field(default_factory=dict, compare=False, repr=False)
    # ids whose whole copy confirm() read, for full() to take once
    _confirmed: set[str] = field(default_factory=set, compare=False, repr=False)

    def session(self, scope: Scope) -> ReadSession:
        """The pool's read session in ``scope`` (one per turn: the pool is)."""
        found = self._sessions.get(scope.key)
        if found is None:
            found = self._sessions[scope.key] = ReadSession(self.store, self.index, scope)
        return found

    def gather(
        self, scope: Scope, candidates: Sequence[Candidate], vectors: np.ndarray, model_id: str
    ) -> list[MemoryRecord]:
        """The active memories of ``scope`` near ``candidates`` (``vectors`` their embeddings by
        ``model_id``, one row each), newest first (the order :func:`~agentmem.domain.conflict.rank`
        keeps for ties): every memory a fact's judgement can turn on (:meth:`_needed`). Raises
        ``StoreUnavailable`` only when the memory store is down."""
        if self.index is None:
            return self.store.scan_active(scope, self.fallback)
        keys_of = [attribute_keys(c.content) for c in candidates]
        try:
            hit_ids: list[str] = []
            nearest = self.index.knn_many(scope, list(vectors), self.from_knn, model_id)
            for cand, hits in zip(candidates, nearest, strict=True):
                hits = hits + self.index.keyword(scope, cand.content, self.from_keyword)
                hit_ids.extend(h.memory_id for h in hits)
            if stated := sorted(set().union(*keys_of)):
                hit_ids += self.index.stating(scope, stated, self.from_stating)
        except StoreUnavailable:
            log.warning("ingest.neighbours_from_store", extra={"reason": "search_index_unavailable"})
            return self.store.scan_active(scope, self.fallback)
        pool = {r.memory_id: r for r in self.store.scan_active(scope, self.recent, embeddings=False)}
        hits_out = [i for i in dict.fromkeys(hit_ids) if i not in pool]
        wanted = self._needed(scope, keys_of, vectors, model_id, hits_out)
        pool.update(self.session(scope).light(wanted))  # the index's card, else the store's copy
        for key in dict.fromkeys(c.key for c in candidates if c.key):
            pool.update((r.memory_id, r) for r in self.store.find_by_key(scope, key))
        # Memory ids sort by creation time.
        return [pool[i] for i in sorted(pool, reverse=True) if pool[i].is_active]

    def confirm(self, scope: Scope, record: MemoryRecord) -> MemoryRecord | None:
        """``record`` when the decision taken on it stands: it came from the store, or it came
        from a card and the store's copy reads the same to the rules (:func:`same_judgement`).
        Otherwise the store's copy, whole (for the caller to judge again with: its own vector,
        not the one the index last projected), or None when the store holds it no more, or not
        as an active memory. Reads the store only for a card, once (through the read session)."""
        session = self.session(scope)
        if not session.is_card(record.memory_id):
            return record
        stale = session.confirm([record.memory_id], same=same_judgement, embeddings=True)
        found = session.stored.get(record.memory_id)
        if found is not None:
            self._confirmed.add(record.memory_id)  # full(): no second read
        if not stale:
            return record
        return found if found is not None and found.is_active else None

    def _needed(
        self,
        scope: Scope,
        keys_of: Sequence[frozenset[str]],
        vectors: np.ndarray,
        model_id: str,
        hit_ids: list[str],
    ) -> list[str]:
        """The hits (not among the newest) that a fact's judgement can turn on, in ``hit_ids``'
        order (``keys_of``: each fact's attribute keys, ``vectors`` its embedding); the rest are
        never read. :func:`~agentmem.domain.conflict.decide` looks at three
        kinds of stored memory: any that states an attribute of the fact
        (:func:`~agentmem.domain.conflict.replaces_by_attribute`), the same-key ones (read by key),
        and the :data:`~agentmem.domain.conflict.NEAREST` most similar (pinned ones apart, which
        it also ranks among themselves). So a hit is read when the index keeps no reading of it by
        the current rules, when it is pinned, when its attribute keys meet a fact's
        (:func:`~agentmem.domain.conflict.attribute_keys`), when it has no indexed vector of
        ``model_id``, or when it is among a fact's :data:`NEAREST` most similar hits in the order
        ``rank`` gives them (similarity, then the newer first: the pool is newest first). Without
        a calibration, or when the index cannot say, every hit is read."""
        if not hit_ids or self.calibration is None or self.index is None:
            return hit_ids
        try:
            readings = self.index.readings(scope, hit_ids)
            similar = [self.similarity_of(scope, v, hit_ids, model_id) for v in vectors]
        except StoreUnavailable:
            return hit_ids
        needed = {i for i in hit_ids if (r := readings.get(i)) is None or r.pinned}
        known = [i for i in hit_ids if i not in needed]
        for keys, cosines in zip(keys_of, similar, strict=True):
            needed.update(i for i in known if i not in cosines or keys & readings[i].keys)
            # rank()'s order, restricted to the hits: most similar first, ties newest first.
            calibrated = {i: self.calibration.documents(c) for i, c in cosines.items()}
            needed.update(sorted(calibrated, key=lambda i: (calibrated[i], i), reverse=True)[:NEAREST])
        return [i for i in hit_ids if i in needed]

    def similarity_of(
        self, scope: Scope, vector: np.ndarray, memory_ids: Sequence[str], model_id: str
    ) -> dict[str, float]:
        """The index's cosine of ``vector`` with each listed memory that has an indexed vector of
        ``model_id``, each pair asked of the index once per pool (:meth:`gather` and
        :meth:`similarities` ask for the same pairs)."""
        tag = np.asarray(vector, dtype=np.float32).tobytes()
        known = self._cosines
        missing = [m for m in memory_ids if (tag, m) not in known]
        if missing and self.index is not None:
            found = self.index.similarities(scope, vector, missing, model_id)
            for m in missing:
                known[(tag, m)] = found.get(m)
        pairs = ((m, known.get((tag, m))) for m in memory_ids)
        return {m: c for m, c in pairs if c is not None}

    def similarities(
        self, scope: Scope, vector: np.ndarray, pool: Sequence[MemoryRecord], model_id: str
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each record of ``pool`` stored with ``model_id`` that
        carries no vector of its own (as :meth:`gather` returns them): from the search index,
        else (not projected yet, or the index is down) from the record read whole. A record with
        its vector is left to the caller (:func:`~agentmem.domain.conflict.rank` uses it). The
        index's vector is the one of the version it last projected: a memory whose content changed
        less than a projection ago is compared by its previous vector (as recall compares it)."""
        bare = [r.memory_id for r in pool if r.embedding is None and r.embedding_model == model_id]
        if not bare:
            return {}
        found: dict[str, float] = {}
        if self.index is not None:
            try:
                found = self.similarity_of(scope, vector, bare, model_id)
            except StoreUnavailable:
                log.warning("ingest.similarities_from_store", extra={"reason": "search_index_unavailable"})
        missing = set(bare) - found.keys()
        unindexed = {r.memory_id: r for r in pool if r.memory_id in missing}
        query = np.asarray(vector, dtype=np.float32)
        session = self.session(scope)
        full = self.cache.complete(
            self.store, scope, {m: r for m, r in unindexed.items() if not session.is_card(m)}
        )
        if carded := [m for m in unindexed if session.is_card(m)]:  # a card is not the store's copy
            full |= self.store.get_many(scope, carded)
        for memory_id, record in full.items():
            if record.embedding is not None and record.embedding_model == model_id:
                found[memory_id] = float(np.dot(query, np.asarray(record.embedding, dtype=np.float32)))
        return found

    def full(self, scope: Scope, record: MemoryRecord) -> MemoryRecord:
        """``record`` read whole (its vector too) to write it back: the store's current copy, not
        a cached one (``record`` may be stale by now). Raises ``VersionConflict`` when the store
        no longer holds that version of it (changed or deleted since the pool was read); a record
        that came from a card is taken in the version :meth:`confirm` read (confirmed just before)."""
        if record.memory_id in self._confirmed:
            self._confirmed.discard(record.memory_id)
            confirmed = self.session(scope).stored.get(record.memory_id)
            if confirmed is not None:
                return confirmed
        found = self.store.get_many(scope, [record.memory_id]).get(record.memory_id)
        if found is None or found.version != record.version:
            raise VersionConflict("memory changed concurrently", details={"memory_id": record.memory_id})
        return found
