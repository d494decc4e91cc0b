"""The one scorer (docs/design.md "One scorer"): ranks recall and drives eviction and merge.

score = w_sem * semantic + w_lex * lexical + w_rec * recency + w_imp * importance, each
component in [0, 1], weights validated to sum to 1. ``semantic`` is the calibrated similarity
(see ``similarity.py``), ``lexical`` the bigram/term match (:func:`~agentmem.domain.text.lexical_match`), ``recency`` a half-life decay
over whole hours since the memory was last confirmed, ``importance`` the stored importance.
Pinned and permanent memories don't decay. Pure: the clock is an argument.

The graph channel (recall's expansion, docs/recall.md) is a bounded bonus on top: a memory one or
two hops from a seed (the best-scored memories) gets ``graph = seed score x graph_decay^hops``
(:meth:`Scorer.propagate`), and its score becomes ``weighted sum + graph_weight x graph``
(:meth:`Scorer.with_graph`; at most ``graph_weight``). It is additive, so a neighbour must still
be relevant on its own to pass a direct hit; ``components["graph"]`` explains it.

The period channel: when the query names a span of time (:func:`~agentmem.domain.temporal.query_period`),
a memory whose time (``valid_from``, else ``created_at``) lies in it gets ``period_weight`` more
(:meth:`Scorer.period_match`, ``components["period"] = 1``).

Many memories for one query: :mod:`agentmem.domain.score_block` gives the same figures, bit for
bit, as :meth:`Scorer.components` and :meth:`Scorer.total` give one memory at a time, on arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from agentmem.domain.models import MemoryRecord, ScoredMemory
from agentmem.domain.temporal import Period
from agentmem.domain.text import lexical_match, normalize, term_set

Parts = tuple[float, float, float, float]
"""(semantic, lexical, recency, importance) of one memory for one query, each in [0, 1]."""


def lexical_query(query: str) -> tuple[frozenset[str], str]:
    """The query's side of :func:`~agentmem.domain.text.lexical_match`: its terms and its
    normalised form without end punctuation (contained in a text: the second part of the match)."""
    return term_set(query), normalize(query).strip(" ?？。.!！")


def lexical_matcher(query: str) -> Callable[[str], float]:
    """``lexical_match(query, content)`` as a function of ``content``, with the query's terms and
    normalised form computed once: equal to :func:`~agentmem.domain.text.lexical_match` for
    every content (the same operations in the same order)."""
    q, nq = lexical_query(query)
    if not q:
        return lambda content: 0.0
    size = len(q)

    def match(content: str) -> float:
        overlap = len(q & term_set(content)) / size
        contained = 1.0 if nq and nq in normalize(content) else 0.0
        return 0.6 * overlap + 0.4 * contained

    return match


def reference_time(record: MemoryRecord) -> datetime | None:
    """The moment a memory was last confirmed: the latest of its created, updated, accessed and
    valid-from times."""
    reference = record.created_at
    for t in (record.updated_at, record.last_accessed_at, record.valid_from):
        if t is not None and (reference is None or t > reference):
            reference = t
    return reference


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    semantic: float = 0.6
    lexical: float = 0.2
    recency: float = 0.05
    importance: float = 0.15

    def __post_init__(self) -> None:
        values = (self.semantic, self.lexical, self.recency, self.importance)
        if any(v < 0 or v > 1 or math.isnan(v) for v in values):
            raise ValueError("every scoring weight must be within [0, 1]")
        if abs(sum(values) - 1.0) > 1e-6:
            raise ValueError(f"scoring weights must sum to 1, got {sum(values):.6f}")


@dataclass(frozen=True, slots=True)
class Scorer:
    weights: ScoringWeights = ScoringWeights()
    half_life_hours: float = 24.0 * 182.5
    graph_weight: float = 0.15
    graph_decay: float = 0.85
    period_weight: float = 0.1
    slot_weight: float = 0.1

    def __post_init__(self) -> None:
        if not self.half_life_hours > 0:
            raise ValueError("half_life_hours must be positive")
        for name in ("graph_weight", "graph_decay", "period_weight", "slot_weight"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be within [0, 1]")

    def period_match(self, record: MemoryRecord, period: Period | None) -> float:
        """1.0 when the memory's time (``valid_from``, else ``created_at``) lies in ``period``."""
        if period is None:
            return 0.0
        moment = record.valid_from or record.created_at
        return 1.0 if moment is not None and period.holds(moment) else 0.0

    def with_period(self, scored: ScoredMemory) -> ScoredMemory:
        """``scored`` in the query's period: ``period_weight`` more, ``components["period"] = 1``."""
        return replace(
            scored,
            score=scored.score + self.period_weight,
            components={**scored.components, "period": 1.0},
        )

    def with_slot(self, scored: ScoredMemory) -> ScoredMemory:
        """``scored`` stating the attribute the query asks for (:mod:`agentmem.domain.asked`):
        ``slot_weight`` more, ``components["slot"] = 1``."""
        return replace(
            scored,
            score=scored.score + self.slot_weight,
            components={**scored.components, "slot": 1.0},
        )

    def propagate(self, seed_score: float, hops: int) -> float:
        """The graph component a memory ``hops`` away receives from a seed scored
        ``seed_score``: ``seed_score x graph_decay^hops``, in [0, 1]."""
        return min(1.0, max(0.0, seed_score)) * self.graph_decay ** max(1, hops)

    def with_graph(self, scored: ScoredMemory, graph: float, channels: tuple[str, ...]) -> ScoredMemory:
        """``scored`` with the graph bonus (``graph_weight x graph``, ``graph`` from
        :meth:`propagate`) added to its score and ``components["graph"]``; ``channels`` replace
        its channels (the graph's among them)."""
        graph = min(1.0, max(0.0, graph))
        return replace(
            scored,
            score=scored.score + self.graph_weight * graph,
            components={**scored.components, "graph": graph},
            channels=channels,
        )

    def relevance(self, scored: ScoredMemory) -> float:
        """The part of ``scored``'s score that comes from the query: the weighted semantic and
        lexical components plus the graph and period bonuses (recency and importance are the
        query-free rest). 0 when nothing links the memory to the query."""
        c, w = scored.components, self.weights
        return (
            w.semantic * c.get("semantic", 0.0)
            + w.lexical * c.get("lexical", 0.0)
            + self.graph_weight * c.get("graph", 0.0)
            + self.period_weight * c.get("period", 0.0)
            + self.slot_weight * c.get("slot", 0.0)
        )

    def recency(self, record: MemoryRecord, now: datetime) -> float:
        if record.never_decays:
            return 1.0
        reference = reference_time(record)
        if reference is None:
            return 1.0
        hours = max(0, math.floor((now - reference).total_seconds() / 3600))
        return float(0.5 ** (hours / self.half_life_hours))

    def components(
        self,
        record: MemoryRecord,
        *,
        now: datetime,
        query: str = "",
        similarity: float = 0.0,
        lexical: float | None = None,
    ) -> tuple[float, float, float, float]:
        """(semantic, lexical, recency, importance) of one memory for a query, each in [0, 1]:
        what :meth:`score` weighs. ``similarity`` is calibrated, in [0, 1]; ``lexical`` may be
        given (e.g. a normalised BM25) and is otherwise the seed's match on the text."""
        sem = min(1.0, max(0.0, similarity))
        lex = lexical_match(query, record.content) if lexical is None else min(1.0, max(0.0, lexical))
        return sem, lex, self.recency(record, now), record.importance

    def total(self, parts: tuple[float, float, float, float]) -> float:
        """The weighted sum of :meth:`components`."""
        w = self.weights
        sem, lex, rec, imp = parts
        return w.semantic * sem + w.lexical * lex + w.recency * rec + w.importance * imp

    def explain(
        self,
        record: MemoryRecord,
        parts: tuple[float, float, float, float],
        channels: tuple[str, ...] = (),
    ) -> ScoredMemory:
        """The scored memory of given :meth:`components` (score and its explanation)."""
        sem, lex, rec, imp = parts
        components = {"semantic": sem, "lexical": lex, "recency": rec, "importance": imp}
        return ScoredMemory(record=record, score=self.total(parts), components=components, channels=channels)

    def score(
        self,
        record: MemoryRecord,
        *,
        now: datetime,
        query: str = "",
        similarity: float = 0.0,
        lexical: float | None = None,
        channels: tuple[str, ...] = (),
    ) -> ScoredMemory:
        """Score one memory for a query (:meth:`components` weighed by :meth:`total`)."""
        parts = self.components(record, now=now, query=query, similarity=similarity, lexical=lexical)
        return self.explain(record, parts, channels)

    def retention(self, record: MemoryRecord, now: datetime) -> float:
        """Query-free value of keeping a memory (eviction and merge survivor choice): the same
        weights over recency and importance only, renormalised."""
        w = self.weights
        denom = w.recency + w.importance
        if denom == 0:
            return record.importance
        return (w.recency * self.recency(record, now) + w.importance * record.importance) / denom


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """What recall leaves out so that nothing irrelevant fills ``k`` (docs/recall.md, "Relevance
    floor"): a memory is kept when its :meth:`Scorer.relevance` is above ``minimum`` and at least
    ``ratio`` x the best relevance of the answer. A memory nothing links to the query (no
    semantic or lexical match, no graph, period or slot bonus) is never returned, however
    important or recent; the defaults do no more than that (measured in docs/recall.md)."""

    minimum: float = 0.0
    ratio: float = 0.0

    def __post_init__(self) -> None:
        for name in ("minimum", "ratio"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"relevance floor {name} must be within [0, 1]")

    def apply(self, scorer: Scorer, scored: list[ScoredMemory]) -> list[ScoredMemory]:
        """``scored`` without the memories below the floor, in the same order."""
        if not scored:
            return scored
        relevance = [scorer.relevance(s) for s in scored]
        best = max(relevance)
        return [
            s for s, r in zip(scored, relevance, strict=True) if r > self.minimum and r >= self.ratio * best
        ]
