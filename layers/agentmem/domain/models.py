"""The memory model (docs/design.md "The memory model"): scopes, records, turns, and the small value types around them.

Pure: no I/O, no clock (timestamps are arguments), no environment.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

# The vocabulary the wire contract shares (a leaf: stdlib and pydantic only), one class for both.
from agentmem.wire.vocabulary import EARLIEST as EARLIEST  # re-exported (x as x)
from agentmem.wire.vocabulary import LATEST as LATEST
from agentmem.wire.vocabulary import Category as Category
from agentmem.wire.vocabulary import checked_time as checked_time


class Layer(StrEnum):
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"
    PERMANENT = "permanent"


class Confidence(StrEnum):
    CONFIRMED = "confirmed"
    INFERRED = "inferred"
    EXPIRED = "expired"


class Source(StrEnum):
    USER = "user"
    EXCHANGE = "exchange"
    EXPLICIT = "explicit"
    ADMIN = "admin"
    CONSOLIDATION = "consolidation"


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    QUARANTINED = "quarantined"
    DELETED = "deleted"


class ImportanceSource(StrEnum):
    SCORED = "scored"
    EXPLICIT = "explicit"


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose memory: every store call takes one. An empty id is refused, never read as "all"."""

    tenant_id: str
    user_id: str

    def __post_init__(self) -> None:
        for name in ("tenant_id", "user_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Scope.{name} must be a non-empty string")
            if len(value) > 128 or any(ch in value for ch in "#\x00\n\r"):
                raise ValueError(f"Scope.{name} has forbidden characters or is longer than 128")

    @property
    def key(self) -> str:
        """The partition key every adapter derives its own keys from."""
        return f"TENANT#{self.tenant_id}#USER#{self.user_id}"


@dataclass(frozen=True, slots=True)
class SourceRefs:
    """Where a memory came from: every memory can be traced back to the turns that produced it."""

    session_id: str | None = None
    message_ids: tuple[str, ...] = ()
    trace_id: str | None = None

    def with_message(self, message_id: str) -> SourceRefs:
        if message_id in self.message_ids:
            return self
        return replace(self, message_ids=(*self.message_ids, message_id))

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "message_ids": list(self.message_ids),
            "trace_id": self.trace_id,
        }

    @staticmethod
    def from_dict(data: dict[str, Any] | None) -> SourceRefs:
        data = data or {}
        return SourceRefs(
            session_id=data.get("session_id"),
            message_ids=tuple(str(m) for m in data.get("message_ids") or ()),
            trace_id=data.get("trace_id"),
        )


def content_hash(content: str, key: str | None, value: str | None, category: str, status: str) -> str:
    """Fingerprint of what a projection shows; same version + different hash = drift."""
    payload = json.dumps([content, key, value, category, status], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One memory. Immutable: changes produce a new record with ``version + 1``."""

    scope: Scope
    memory_id: str
    content: str
    category: Category
    layer: Layer = Layer.LONG_TERM
    key: str | None = None
    value: str | None = None
    tags: tuple[str, ...] = ()
    slot_hint: str | None = None
    importance: float = 0.5
    importance_source: ImportanceSource = ImportanceSource.SCORED
    confidence: Confidence = Confidence.CONFIRMED
    source: Source = Source.USER
    source_refs: SourceRefs = field(default_factory=SourceRefs)
    embedding: tuple[float, ...] | None = None
    embedding_model: str | None = None
    embedding_revision: str | None = None
    version: int = 1
    content_hash: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    status: Status = Status.ACTIVE
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    pinned: bool = False
    expires_at: datetime | None = None
    entities: tuple[str, ...] = ()
    quarantine_reason: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.importance <= 1.0:
            raise ValueError("importance must be within [0, 1]")
        if self.version < 1:
            raise ValueError("version starts at 1")
        if not self.content_hash:
            object.__setattr__(self, "content_hash", self.compute_hash())

    def compute_hash(self) -> str:
        return content_hash(self.content, self.key, self.value, self.category.value, self.status.value)

    def evolve(self, *, now: datetime, **changes: Any) -> MemoryRecord:
        """The next version of this record with ``changes`` applied and a fresh content hash."""
        return self.revised(**changes, version=self.version + 1, updated_at=now)

    def revised(self, **changes: Any) -> MemoryRecord:
        """This record with ``changes`` applied and its content hash made again, in the same
        version (:meth:`evolve` is the next one): what ``dataclasses.replace`` of a hashed field
        (content, key, value, category, status) must be, or the hash names the old values."""
        return replace(self, **changes, content_hash="")  # __post_init__ hashes it

    @property
    def is_active(self) -> bool:
        return self.status is Status.ACTIVE

    @property
    def never_decays(self) -> bool:
        return self.pinned or self.layer is Layer.PERMANENT

    def valid_at(self, at: datetime) -> bool:
        """Whether this record was true at ``at``: active or superseded (a replaced value was
        true until its ``valid_to``), ``valid_from`` (else ``created_at``) <= ``at`` < ``valid_to``
        (None: still valid). Deleted, evicted and quarantined records are never valid."""
        if self.status not in (Status.ACTIVE, Status.SUPERSEDED):
            return False
        start = self.valid_from or self.created_at
        if start is not None and start > at:
            return False
        if self.valid_to is not None:
            return at < self.valid_to
        return self.status is Status.ACTIVE


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished exchange sent by a chat service (the SQS message body)."""

    scope: Scope
    session_id: str
    user: str
    assistant: str
    at: datetime
    message_id: str
    trace_id: str | None = None
    speaker: str | None = None


class AuditAction(StrEnum):
    """What an audit line records (the ``?action=`` filter of ``GET /v1/audit``)."""

    WRITTEN = "written"  # a memory stored by an explicit write
    REJECTED = "rejected"  # a malformed message, or content the guards refused
    QUARANTINED = "quarantined"  # gate 0: the turn was an injection
    REDACTED = "redacted"  # PII replaced by placeholders (the kinds in the reason)
    SUPERSEDED = "superseded"  # an update replaced this memory
    DEDUP = "dedup"  # consolidation folded a duplicate into another memory
    MERGE = "merge"  # consolidation merged two close memories
    EVICTED = "evicted"  # consolidation dropped a stale, unimportant memory
    PATCHED = "patched"
    DELETED = "deleted"  # soft delete
    ERASED = "erased"  # hard delete of one memory
    USER_ERASED = "user_erased"  # everything of a user
    LAYER_CHANGED = "layer_changed"
    CONTEXT_INJECTED = "context_injected"  # which memories a context used
    PROJECTION_CONFLICT = "projection_conflict"  # same version, other content in a projection
    CONFLICT_PENDING = "conflict_pending"  # a turn contradicts a permanent/pinned memory: asked first
    CONFLICT_CONFIRMED = "conflict_confirmed"  # the user confirmed: the proposal superseded it
    CONFLICT_REJECTED = "conflict_rejected"  # the user rejected: the proposal was dropped
    EXPIRED = "expired"  # a short-term memory passed its TTL (kept until eviction)
    REDRIVEN = "redriven"  # a dead-lettered turn sent back to the ingest queue


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One line of the append-only audit trail. Never carries memory content or PII."""

    scope: Scope
    action: AuditAction
    at: datetime
    memory_id: str | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    event_id: str = ""

    def __post_init__(self) -> None:
        # stores give the action back as text; an action that is not one of ours is a bug
        object.__setattr__(self, "action", AuditAction(self.action))


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """A memory with its score, the explanation of the score, and how it was found."""

    record: MemoryRecord
    score: float
    components: dict[str, float] = field(default_factory=dict)
    channels: tuple[str, ...] = ()
