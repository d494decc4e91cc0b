"""The value types the ports pass: projection outcomes and states, pages, hits, edges, raw-log
lines and stream changes. Plain frozen data; re-exported by :mod:`agentmem.ports`, where the
protocols that use them live."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from agentmem.domain.models import MemoryRecord, Scope

__all__ = [
    "Change",
    "DeadLetterEntry",
    "DeadLetterPage",
    "Edge",
    "Hit",
    "IdempotencyRecord",
    "Neighbour",
    "Page",
    "ProjectionOutcome",
    "ProjectionState",
    "Put",
    "RawTurnRecord",
    "RetentionPolicy",
]


class ProjectionOutcome(StrEnum):
    """Result of applying one change to a projection (search index or graph)."""

    APPLIED = "applied"  # newer version written (or deleted)
    STALE = "stale"  # the projection already holds this version or a newer one: harmless replay
    CONFLICT = "conflict"  # same version, different content hash: drift, left to the reconciler


@dataclass(frozen=True, slots=True)
class Put:
    """One write inside a transaction. ``expected_version`` None means "must not exist yet"."""

    record: MemoryRecord
    expected_version: int | None


@dataclass(frozen=True, slots=True)
class Page:
    items: builtins.list[MemoryRecord]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """A candidate from a retrieval channel: id and the channel's own score (higher is better)."""

    memory_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Reading:
    """What a search index keeps of a memory for the write path's neighbour pool
    (:mod:`agentmem.adapters.readings`): the attribute keys of its content
    (:func:`~agentmem.domain.conflict.attribute_keys`, by the rules that run now) and whether it
    is pinned."""

    keys: frozenset[str]
    pinned: bool


@dataclass(frozen=True, slots=True)
class ProjectionState:
    """What a projection holds for one memory, for reconciliation."""

    memory_id: str
    version: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory_id: str
    hops: int
    via: str  # edge type of the last step


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    type: str  # FOLLOWS | SIMILAR_TO | CAUSES | BELONGS_TO
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class RawTurnRecord:
    """An L0 raw-log line (already redacted)."""

    message_id: str
    session_id: str
    at: datetime
    user: str
    assistant: str
    trace_id: str | None = None
    status: str = "accepted"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Change:
    """One change of the source of truth, as the stream delivers it (a stream record, an outbox row).
    ``new`` / ``old`` may come without their embedding (the DynamoDB store keeps the vector in an
    item of its own): a consumer that needs it reads the record through the store."""

    event_name: str  # INSERT | MODIFY | REMOVE
    scope: Scope
    memory_id: str
    new: MemoryRecord | None
    old: MemoryRecord | None
    sequence: str = ""


@dataclass(frozen=True, slots=True)
class DeadLetterEntry:
    """One turn the ingest queue gave up on: ids, the reason and the count, never its text."""

    message_id: str  # the turn's message id (from its body)
    scope: Scope | None  # the scope its body names (None: a body that names none)
    session_id: str | None
    reason: str
    attempts: int
    failed_at: datetime


@dataclass(frozen=True, slots=True)
class DeadLetterPage:
    items: builtins.list[DeadLetterEntry]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long the embedded stores keep what AWS expires with TTLs (docs/data-at-rest.md):
    L0 turns and processed marks ``turn_days``; audit lines by action (``audit_days``, absent:
    kept); outbox rows once ``outbox_reader`` has applied them, and at most ``outbox_max_age``
    whatever it has applied (DynamoDB Streams keep 24 hours; the reconciler repairs what a
    projection missed); files vacuumed when ``vacuum_free_fraction`` of their pages are free."""

    turn_days: float
    audit_days: dict[str, float]
    outbox_reader: str
    outbox_max_age: timedelta
    vacuum_free_fraction: float


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """What an ``Idempotency-Key`` stands for: the first request that used it (a hash of its
    method, path and body; its request id and time, which a retry reuses so that it writes the
    same ids), and that request's answer once it has one (``status`` None: not finished — the
    request is in flight, or its worker died before answering)."""

    key: str
    fingerprint: str
    request_id: str
    first_at: datetime
    expires_at: datetime
    status: int | None = None
    body: str | None = None


@dataclass(frozen=True, slots=True)
class StagedVector:
    """A memory's vector of a reindex's target model, embedded from the memory as it was at
    ``version`` (``content_hash``): usable at the switch only while the memory is still there."""

    memory_id: str
    version: int
    content_hash: str
    vector: tuple[float, ...]


@dataclass(slots=True)
class ReindexProgress:
    """Where a reindex to ``model`` stands (saved after every scope, so a run cut by its time
    budget or killed resumes there): the step it walks, its place in the scope walk
    (``position`` / ``skip`` as the reconciler's cursor; ``sweeping``: the pass's last part, the
    scopes erased since they were staged, at ``sweep_position``), the pass's counts, and which
    steps have finished a whole pass. ``revision`` counts saves: a save names the revision it
    read, so two runs never both advance one walk."""

    model: str
    step: str = "stage"
    position: str | None = None
    skip: int = 0
    pass_started_at: datetime | None = None  # None: the next run starts a new pass
    sweeping: bool = False
    sweep_position: str | None = None
    scopes: int = 0
    memories: int = 0  # active memories of another model, seen by this pass
    staged: int = 0  # embedded by this pass
    reused: int = 0  # found staged at their current version
    switched: int = 0
    conflicts: int = 0  # scopes whose switch kept meeting concurrent writes (retried next pass)
    swept: int = 0  # scopes erased since they were staged, their staged vectors dropped
    stage_done: bool = False  # a whole stage pass has run
    switch_done: bool = False  # a whole switch pass has run without conflicts
    revision: int = 0
    updated_at: datetime | None = None
