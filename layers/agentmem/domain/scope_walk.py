"""How the reconciler walks the scope space (pure): shards, segments, and the saved cursor.

A scope's shard is a stable hash of its key (``sha256`` of ``Scope.key``, first four bytes, modulo
:data:`SCOPE_SHARDS`). The stores spread their scope registry over those shards (DynamoDB: one
registry partition per shard, so no single partition carries every new user), and a reconcile
segment ``i`` of ``n`` owns the shards ``i, i + n, i + 2n, ...``: segments are disjoint and
together cover every scope, whichever store holds them. The number of shards is part of the
stored layout: changing it moves scopes between registry partitions.

The port's walk (:meth:`agentmem.ports.MemoryStore.all_scopes`) returns up to ``limit`` scopes
of segment ``segment`` of ``segments`` and the next page's cursor (None after the last; a cursor
is valid for its segment only; ValueError for a bad segment, ValidationFailed for a bad cursor).
A reconcile run keeps a :class:`ReconcileCursor` between runs
(:meth:`~agentmem.ports.MemoryStore.reconcile_cursor` / ``save_reconcile_cursor``, one per
segment and number of segments).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain.models import Scope

SCOPE_SHARDS = 64
# A scope with at least this many pending writes is "ready" for consolidation (the default of
# settings.consolidate_every): MemoryStore.pending_scopes lists ready scopes first, each group
# longest waiting (since its first pending write) first, so the reconciler's dirty-first step
# and consolidation never wait behind users below the trigger.
PENDING_READY_WRITES = 5


def shard_of(key: str, shards: int) -> int:
    """The shard (``0 <= shard < shards``) of a scope key."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % shards


def scope_shard(scope: Scope) -> int:
    """The registry shard of ``scope`` (``0 <= shard < SCOPE_SHARDS``)."""
    return shard_of(scope.key, SCOPE_SHARDS)


def check_segment(segment: int, segments: int) -> None:
    """Refuse a segment that owns nothing: ``1 <= segments <= SCOPE_SHARDS``, ``0 <= segment < segments``."""
    if not 1 <= segments <= SCOPE_SHARDS:
        raise ValueError(f"segments must be between 1 and {SCOPE_SHARDS}")
    if not 0 <= segment < segments:
        raise ValueError("segment must be between 0 and segments - 1")


def segment_shards(segment: int, segments: int) -> tuple[int, ...]:
    """The shards segment ``segment`` of ``segments`` owns, in walk order."""
    check_segment(segment, segments)
    return tuple(range(segment, SCOPE_SHARDS, segments))


def in_segment(scope: Scope, segment: int, segments: int) -> bool:
    """Whether ``scope`` belongs to segment ``segment`` of ``segments``."""
    check_segment(segment, segments)
    return scope_shard(scope) % segments == segment


@dataclass(frozen=True, slots=True)
class ReconcilePass:
    """One finished walk of a reconcile segment over every scope it owns."""

    started_at: datetime
    completed_at: datetime
    scopes_checked: int


@dataclass(frozen=True, slots=True)
class ReconcileCursor:
    """Where the reconcile walk of segment ``segment`` of ``segments`` stands between runs.

    ``position`` is the opaque ``MemoryStore.all_scopes`` cursor of the page to resume in (None:
    the first page) and ``skip`` how many scopes of that page are done; ``pass_started_at`` /
    ``pass_scopes`` describe the pass under way (None / 0 before its first scope); ``last_pass``
    is the latest finished pass, if any."""

    segment: int = 0
    segments: int = 1
    position: str | None = None
    skip: int = 0
    pass_started_at: datetime | None = None
    pass_scopes: int = 0
    last_pass: ReconcilePass | None = None
