"""Consolidation planning (docs/design.md "Consolidation"): a pure function from one user's memories
to a plan of decays, dedups, merges and evictions. Execution (services.consolidation) applies it
with version checks, a merge pair all or nothing.

Rules: decay importance x decay_rate per day (written only when it moved >= min_delta);
duplicates (>= dedup) keep the better one; same-category pairs >= merge fold the weaker into the
stronger; evict only when older than the TTL *and* below min importance; never touch pinned,
permanent, importance >= protect_importance, or protected hubs. Pairs are given (from nearest-
neighbour search), never all pairs. Never crosses users: every input must share one scope.

Confidence lifecycle (docs/memory-lifecycle.md "Confidence"): a short-term memory past its TTL (its ``expires_at``, else
``created_at`` + ``short_term_ttl_days``) becomes ``expired`` and stays, until eviction removes
it, out of the context unless a query is about it. The store's ``expires_at`` is left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agentmem.domain.models import Confidence, Layer, MemoryRecord
from agentmem.domain.scoring import Scorer
from agentmem.domain.similarity import SimilarityThresholds


@dataclass(frozen=True, slots=True)
class ConsolidationConfig:
    decay_rate: float = 0.995
    min_delta: float = 0.01
    ttl_days: float = 30.0
    min_importance: float = 0.3
    protect_importance: float = 0.9
    short_term_ttl_days: float = 7.0  # a short-term memory is expired this long after it was made
    thresholds: SimilarityThresholds = field(default_factory=SimilarityThresholds)

    def __post_init__(self) -> None:
        if not 0 < self.decay_rate <= 1:
            raise ValueError("decay_rate must be within (0, 1]")
        if self.ttl_days <= 0 or not 0 <= self.min_importance <= 1:
            raise ValueError("ttl_days must be positive and min_importance within [0, 1]")
        if self.short_term_ttl_days <= 0:
            raise ValueError("short_term_ttl_days must be positive")


@dataclass(frozen=True, slots=True)
class Decay:
    memory_id: str
    expected_version: int
    importance: float


@dataclass(frozen=True, slots=True)
class Merge:
    survivor_id: str
    absorbed_id: str
    kind: str  # "dedup" | "merge"
    similarity: float
    importance: float = 0.0  # the survivor's importance after the merge (both decayed first)


@dataclass(frozen=True, slots=True)
class Eviction:
    memory_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Expiry:
    """A short-term memory past its TTL: confidence becomes ``expired`` (importance: decayed)."""

    memory_id: str
    expected_version: int
    importance: float


@dataclass(frozen=True, slots=True)
class Plan:
    decays: tuple[Decay, ...] = ()
    merges: tuple[Merge, ...] = ()
    evictions: tuple[Eviction, ...] = ()
    expiries: tuple[Expiry, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.decays or self.merges or self.evictions or self.expiries)


def expired_by(record: MemoryRecord, now: datetime, config: ConsolidationConfig) -> bool:
    """Whether short-term ``record`` has passed its TTL at ``now`` (and is not marked yet)."""
    if record.layer is not Layer.SHORT_TERM or record.confidence is Confidence.EXPIRED:
        return False
    if record.expires_at is not None:
        return now >= record.expires_at
    if record.valid_to is not None:  # the end of the near time it was said for (domain/transience.py)
        return now >= record.valid_to
    if record.created_at is None:
        return False
    return now >= record.created_at + timedelta(days=config.short_term_ttl_days)


def _protected(record: MemoryRecord, config: ConsolidationConfig, hubs: frozenset[str]) -> bool:
    return (
        record.pinned
        or record.layer is Layer.PERMANENT
        or record.importance >= config.protect_importance
        or record.memory_id in hubs
    )


def plan(
    items: Sequence[MemoryRecord],
    now: datetime,
    config: ConsolidationConfig,
    *,
    pairs: Sequence[tuple[str, str, float]] = (),
    hubs: frozenset[str] = frozenset(),
    scorer: Scorer | None = None,
) -> Plan:
    """Plan consolidation of one scope's active memories. ``pairs`` are (id, id, calibrated
    similarity) from nearest-neighbour search; ``hubs`` the most central graph memories."""
    if not items:
        return Plan()
    scopes = {r.scope for r in items}
    if len(scopes) != 1:
        raise ValueError("consolidation plans one scope at a time")
    scorer = scorer or Scorer()
    by_id = {r.memory_id: r for r in items if r.is_active}
    importance = {i: r.importance for i, r in by_id.items()}
    decays: list[Decay] = []
    for record in by_id.values():
        if record.never_decays or record.created_at is None:
            continue
        reference = record.updated_at or record.created_at
        days = max(0.0, (now - reference).total_seconds() / 86400)
        decayed = record.importance * config.decay_rate**days
        if record.importance - decayed >= config.min_delta:
            importance[record.memory_id] = round(decayed, 4)
            decays.append(Decay(record.memory_id, record.version, round(decayed, 4)))

    merges: list[Merge] = []
    gone: set[str] = set()
    for a_id, b_id, sim in sorted(pairs, key=lambda p: p[2], reverse=True):
        a, b = by_id.get(a_id), by_id.get(b_id)
        if a is None or b is None or a_id == b_id or a_id in gone or b_id in gone:
            continue
        if sim >= config.thresholds.dedup:
            kind = "dedup"
        elif sim >= config.thresholds.merge and a.category is b.category and a.key == b.key:
            kind = "merge"
        else:
            continue
        ranked = sorted(
            (a, b),
            key=lambda r: (_protected(r, config, hubs), scorer.retention(r, now), r.memory_id),
            reverse=True,
        )
        survivor, absorbed = ranked
        if _protected(absorbed, config, hubs):
            continue  # both protected: leave them
        merged_importance = max(importance[survivor.memory_id], importance[absorbed.memory_id])
        merges.append(Merge(survivor.memory_id, absorbed.memory_id, kind, round(sim, 4), merged_importance))
        gone.add(absorbed.memory_id)

    evictions: list[Eviction] = []
    for record in by_id.values():
        if record.memory_id in gone or _protected(record, config, hubs) or record.created_at is None:
            continue
        age_days = (now - record.created_at).total_seconds() / 86400
        if age_days > config.ttl_days and importance[record.memory_id] < config.min_importance:
            evictions.append(Eviction(record.memory_id, "expired_and_unimportant"))
    evicted = {e.memory_id for e in evictions}
    expiries = [
        Expiry(r.memory_id, r.version, importance[r.memory_id])
        for r in by_id.values()
        if r.memory_id not in gone and r.memory_id not in evicted and expired_by(r, now, config)
    ]
    expiring = {e.memory_id for e in expiries}  # the expiry writes their decayed importance too
    decays = [d for d in decays if d.memory_id not in gone | evicted | expiring]
    return Plan(tuple(decays), tuple(merges), tuple(evictions), tuple(expiries))
