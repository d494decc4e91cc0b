"""How the scope space is cut into shards and reconcile segments (pure).

A scope's shard is a stable hash of its key (``sha256`` of ``Scope.key``, first four bytes, modulo
:data:`SCOPE_SHARDS`). The stores spread their scope registry over those shards (DynamoDB: one
registry partition per shard, so no single partition carries every new user), and a reconcile
segment ``i`` of ``n`` owns the shards ``i, i + n, i + 2n, ...``: segments are disjoint and
together cover every scope, whichever store holds them. The number of shards is part of the
stored layout: changing it moves scopes between registry partitions.
"""

from __future__ import annotations

import hashlib

from agentmem.domain.models import Scope

SCOPE_SHARDS = 64


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
