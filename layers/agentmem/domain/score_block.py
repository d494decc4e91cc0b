"""The one scorer over many memories at once, as arrays (recall's candidates, a slot's listing).

:func:`best` gives what scoring each memory with :meth:`~agentmem.domain.scoring.Scorer.components`
and :meth:`~agentmem.domain.scoring.Scorer.total` (plus the period and slot bonuses) and sorting by
score to 9 places, then the newer id, would give — the same figures, bit for bit, and the same
order — with the arithmetic on numpy arrays instead of a Python loop per memory:

- every weighted sum is the same IEEE operations in the same order (numpy's elementwise ``*`` and
  ``+`` on float64 are Python's float operations, one memory per lane, never fused);
- the whole hours of recency come from integer microseconds (exact), each decay
  ``0.5 ** (hours / half_life)`` from Python's own ``**``, once per distinct hour;
- only the memories that can reach the best ``top`` are rounded (Python's ``round``, which numpy's
  differs from) and ordered; a memory more than ``2e-9`` under the ``top``-th score cannot round
  up to it.

The query-free inputs of a listing (importance, the time it decays from, what never decays) are a
:class:`ScoreBlock`, built once per listing: a caller that ranks the same records for many queries
(the profile slot, every context call) keeps it (:class:`agentmem.services.caches.ScoreBlocks`).
The text match (:func:`~agentmem.domain.scoring.lexical_matcher`) stays one Python call per
memory, and is skipped for the memories whose score could not reach the ``top``-th even with a
full match.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from agentmem.domain.models import Layer, MemoryRecord
from agentmem.domain.scoring import Parts, Scorer, lexical_matcher, lexical_query, reference_time
from agentmem.domain.temporal import Period
from agentmem.domain.text import normalize, term_set

Floats = npt.NDArray[np.float64]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ROUNDING = 2e-9
"""How far under the ``top``-th score a memory may be and still round (to 9 places) to it."""


@lru_cache(maxsize=65536)
def _decay(hours: int, half_life: float) -> float:
    return float(0.5 ** (hours / half_life))


def _micros(moment: datetime) -> int:
    """Microseconds since the epoch, exact (an aware datetime; a naive one raises, as the
    one-at-a-time scorer's subtraction does)."""
    return (moment - _EPOCH) // _MICROSECOND


class ScoreBlock:
    """The query-free inputs of the scores of ``records``, in their order. With ``terms``, the
    block also indexes its texts (each term's rows, the normalised texts) on first use, so the
    text match of a query is a few array operations (:meth:`text_match`) instead of a call per
    memory: worth it for a listing ranked call after call, not for one call's candidates."""

    __slots__ = ("_normalized", "_postings", "decays", "importance", "records", "reference_us", "terms")

    def __init__(self, records: Sequence[MemoryRecord], *, terms: bool = False) -> None:
        permanent = Layer.PERMANENT
        references: list[int] = []
        decays: list[bool] = []
        for record in records:
            reference = None if record.pinned or record.layer is permanent else reference_time(record)
            decays.append(reference is not None)
            references.append(0 if reference is None else _micros(reference))
        self.records = tuple(records)
        self.importance: Floats = np.fromiter((r.importance for r in records), np.float64, len(records))
        self.reference_us: npt.NDArray[np.int64] = np.asarray(references, dtype=np.int64)  # 0: never decays
        self.decays: npt.NDArray[np.bool_] = np.asarray(decays, dtype=np.bool_)  # False: recency 1.0
        self.terms = terms
        self._postings: dict[str, npt.NDArray[np.intp]] | None = None
        self._normalized: list[str] = []

    def __len__(self) -> int:
        return len(self.records)

    def text_match(self, query: str) -> Floats:
        """``lexical_match(query, content)`` of every record, bit for bit: the share of the
        query's terms the text has (one count per term, from the postings), x 0.6, plus 0.4 where
        the text contains the query."""
        q, nq = lexical_query(query)
        n = len(self.records)
        if not q:
            return np.zeros(n)
        if self._postings is None:
            rows: dict[str, list[int]] = {}
            for i, record in enumerate(self.records):
                for term in term_set(record.content):
                    rows.setdefault(term, []).append(i)
            self._normalized = [normalize(r.content) for r in self.records]
            self._postings = {t: np.asarray(r, dtype=np.intp) for t, r in rows.items()}
        counts = np.zeros(n, dtype=np.int64)
        for term in q:
            found = self._postings.get(term)
            if found is not None:
                counts[found] += 1
        contained = np.fromiter((nq in text for text in self._normalized), np.float64, n) if nq else 0.0
        return 0.6 * (counts / len(q)) + 0.4 * contained


def _clamp(values: Floats) -> Floats:
    """``1.0 if x > 1.0 else (x if x > 0.0 else 0.0)`` elementwise (NaN -> 0)."""
    return np.where(values > 1.0, 1.0, np.where(values > 0.0, values, 0.0))


@dataclass(frozen=True, slots=True)
class Ranked:
    """One memory of :func:`best`'s answer: its components, whether the query's period holds it,
    whether it states what the query asks (the slot bonus)."""

    record: MemoryRecord
    parts: Parts
    in_period: bool
    fills: bool


_ORDER = itemgetter(0, 1)


def _worth_matching(
    scorer: Scorer,
    sem: Floats,
    lower_lex: Floats,
    rec: Floats,
    imp: Floats,
    when: Floats,
    keep: int | None,
    slot: float,
) -> Sequence[int]:
    """The memories whose text match is worth a Python call: all of them, or (keeping the best
    ``keep``) those that a full match and the slot bonus could lift to the ``keep``-th score of
    the lower bounds (the match at its floor)."""
    if keep is None:
        return range(len(sem))
    w = scorer.weights
    lower = w.semantic * sem + w.lexical * lower_lex + w.recency * rec + w.importance * imp
    lower = lower + scorer.period_weight * when
    bar = np.partition(lower, len(lower) - keep)[len(lower) - keep]
    upper = lower + w.lexical * (1.0 - lower_lex) + slot
    return np.flatnonzero(upper >= bar - _ROUNDING).tolist()


def best(
    scorer: Scorer,
    block: ScoreBlock,
    *,
    now: datetime,
    query: str,
    similarity: Floats,
    lexical_floor: Floats,
    period: Period | None = None,
    top: int | None = None,
    states: Callable[[str], bool] | None = None,
) -> list[Ranked]:
    """The best ``top`` of ``block`` (all when None), best first by score to 9 places, then the
    newer id. ``similarity``: each memory's calibrated similarity (NaN: none, counted 0);
    ``lexical_floor``: a floor under the text match (a normalised BM25); ``states``: whether a
    memory's text states what the query asks (given when it asks), worth ``slot_weight``."""
    n = len(block)
    if n == 0 or (top is not None and top <= 0):
        return []
    w = scorer.weights
    sem = _clamp(similarity)
    floor = np.asarray(lexical_floor, dtype=np.float64)
    # (now - reference).total_seconds() / 3600, whole hours, from exact integer microseconds
    hours = np.maximum(np.floor((_micros(now) - block.reference_us) / 1e6 / 3600), 0.0)
    half_life = scorer.half_life_hours
    rec = np.ones(n)
    decaying = np.flatnonzero(block.decays)
    if decaying.size:
        rec[decaying] = [_decay(h, half_life) for h in hours[decaying].astype(np.int64).tolist()]
    imp = block.importance
    records = block.records
    when = (
        np.zeros(n)
        if period is None
        else np.fromiter((scorer.period_match(r, period) for r in records), np.float64, n)
    )
    slot = scorer.slot_weight if states is not None else 0.0
    keep = top if top is not None and top < n else None

    lower_lex = _clamp(floor)
    if block.terms:  # the text match of every memory at once: nothing to skip
        text = block.text_match(query)
        lex = _clamp(np.where(floor > text, floor, text))
        todo: Sequence[int] = range(n)
    else:  # a Python call per memory, skipped where it cannot matter
        lex = lower_lex.copy()
        todo = _worth_matching(scorer, sem, lower_lex, rec, imp, when, keep, slot)
        match = lexical_matcher(query)
        for i in todo:
            value = match(records[i].content)
            other = float(floor[i])
            if other > value:
                value = other
            lex[i] = 1.0 if value > 1.0 else (value if value > 0.0 else 0.0)
    total = w.semantic * sem + w.lexical * lex + w.recency * rec + w.importance * imp
    total = total + scorer.period_weight * when
    considered = np.asarray(todo, dtype=np.int64)

    fills = np.zeros(n, dtype=np.bool_)
    if states is not None:
        # The bonus only raises scores, so the top-th score without it bounds from below what the
        # kept ones end with: a memory under it by more than the bonus cannot be kept.
        if keep is not None:
            cut = np.partition(total[considered], considered.size - keep)[considered.size - keep]
            hopeful = considered[total[considered] >= cut - slot - 1e-9]
        else:
            hopeful = considered
        for i in hopeful.tolist():
            fills[i] = states(records[i].content)
    final = total + np.where(fills, slot, 0.0)

    if keep is not None:
        cut = np.partition(final[considered], considered.size - keep)[considered.size - keep]
        considered = considered[final[considered] >= cut - _ROUNDING]
    finals = final.tolist()
    keyed = [(round(finals[i], 9), records[i].memory_id, i) for i in considered.tolist()]
    chosen = (
        heapq.nlargest(keep, keyed, key=_ORDER)
        if keep is not None
        else sorted(keyed, key=_ORDER, reverse=True)
    )
    sems, lexes, recs, imps, whens = sem.tolist(), lex.tolist(), rec.tolist(), imp.tolist(), when.tolist()
    return [
        Ranked(records[i], (sems[i], lexes[i], recs[i], imps[i]), whens[i] > 0.0, bool(fills[i]))
        for _, _, i in chosen
    ]
