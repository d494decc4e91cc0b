"""Memory and turn events (docs/events.md): what a webhook receiver is told when memory changes.

An event is content-free by construction: ids, the tenant/user scope, a reason, a time, never
a memory's text nor a turn's. Its id is derived from what it announces (the memory id and
version, the message id), so a change delivered twice (a retried stream batch, a redelivered
turn) carries the same id and a receiver drops the second by id.

Signatures follow Stripe's scheme: the header ``Agentmem-Signature: t=<unix seconds>,v1=<hex>``,
where ``v1`` is HMAC-SHA256 under the webhook's secret of ``"<t>.<raw body>"``; a receiver
recomputes it over the body as received and refuses a ``t`` further than the tolerance from its
clock (a replayed delivery). Pure: time is an argument.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

SIGNATURE_HEADER = "Agentmem-Signature"
EVENT_ID_HEADER = "Agentmem-Event-Id"
EVENT_TYPE_HEADER = "Agentmem-Event-Type"
TOLERANCE_S = 300  # a signature older (or newer) than this is refused as a replay
SCHEME = "v1"


class EventType(StrEnum):
    TURN_PROCESSED = "turn.processed"
    TURN_REJECTED = "turn.rejected"
    MEMORY_CREATED = "memory.created"
    MEMORY_SUPERSEDED = "memory.superseded"
    MEMORY_DELETED = "memory.deleted"
    USER_ERASED = "user.erased"


Detail = dict[str, str | int | list[str]]


@dataclass(frozen=True, slots=True)
class Event:
    """One event. ``detail`` holds ids, counts and reasons only (never text)."""

    event_type: EventType
    tenant_id: str
    user_id: str
    subject: str  # what it is about: a memory id, a message id, the user
    at: datetime
    detail: Detail = field(default_factory=dict)
    version: int = 0  # the memory's version for memory events (part of the id)

    @property
    def event_id(self) -> str:
        """Stable across replays of the same change: a digest of type, scope, subject, version."""
        key = "\x1f".join(
            (self.event_type.value, self.tenant_id, self.user_id, self.subject, str(self.version))
        )
        return "evt_" + hashlib.sha256(key.encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.event_id,
            "type": self.event_type.value,
            "tenant_id": self.tenant_id,
            "user_id": self.user_id,
            "subject": self.subject,
            "at": self.at.astimezone(UTC).isoformat(),
            "detail": dict(self.detail),
            "version": self.version,
        }

    def body(self) -> bytes:
        """The delivery body: the JSON above, compact and key-sorted (the bytes that are signed)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Event:
        detail = data.get("detail")
        return cls(
            event_type=EventType(str(data["type"])),
            tenant_id=str(data["tenant_id"]),
            user_id=str(data["user_id"]),
            subject=str(data["subject"]),
            at=datetime.fromisoformat(str(data["at"])),
            detail=dict(detail) if isinstance(detail, dict) else {},
            version=int(str(data.get("version", 0))),
        )


def wanted(filters: tuple[str, ...], event_type: str) -> bool:
    """Whether a webhook subscribed to ``filters`` gets ``event_type``: ``*`` is every event,
    ``memory.*`` every event of a family, otherwise the exact type."""
    for f in filters:
        if f == "*" or f == event_type or (f.endswith(".*") and event_type.startswith(f[:-1])):
            return True
    return False


def known_filter(value: str) -> bool:
    """Whether ``value`` names an event type, a family (``memory.*``) or every event (``*``)."""
    families = {t.value.split(".", 1)[0] for t in EventType}
    return (
        value == "*"
        or value in {t.value for t in EventType}
        or (value.endswith(".*") and value[:-2] in families)
    )


def sign(secret: str, body: bytes, at: datetime) -> str:
    """The signature header's value for ``body`` sent at ``at``."""
    stamp = int(at.timestamp())
    return f"t={stamp},{SCHEME}={_digest(secret, stamp, body)}"


def verify(secret: str, body: bytes, header: str, now: datetime, tolerance_s: int = TOLERANCE_S) -> bool:
    """Whether ``header`` signs ``body`` under ``secret`` within ``tolerance_s`` of ``now``.
    Several ``v1`` values (a secret being rolled) are accepted if any matches."""
    stamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            stamp = int(value)
        elif key == SCHEME:
            candidates.append(value)
    if stamp is None or not candidates or abs(now.timestamp() - stamp) > tolerance_s:
        return False
    expected = _digest(secret, stamp, body)
    return any(hmac.compare_digest(expected, c) for c in candidates)


def _digest(secret: str, stamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()


def backoff_s(attempt: int, base_s: float, cap_s: float) -> float:
    """Seconds before attempt ``attempt + 1`` after ``attempt`` failures: doubling from
    ``base_s``, capped at ``cap_s``."""
    return float(min(cap_s, base_s * (2 ** max(0, attempt - 1))))
