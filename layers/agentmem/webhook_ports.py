"""Ports of events and webhooks (docs/events.md): the publisher every service emits through, the
per-tenant registry of webhooks, and — where this process delivers them itself (the embedded
backend; on AWS, EventBridge delivers) — the outbox of deliveries and the HTTP transport.

Every method raises :class:`~agentmem.errors.StoreUnavailable` when its store cannot answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from agentmem.domain.events import Event


@dataclass(frozen=True, slots=True)
class Webhook:
    """One registered receiver of a tenant's events. ``secret`` signs its deliveries."""

    webhook_id: str
    tenant_id: str
    url: str
    events: tuple[str, ...]
    secret: str
    created_at: datetime
    description: str = ""


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # waiting for its next attempt
    DELIVERED = "delivered"
    DEAD = "dead"  # every attempt failed: kept until redriven


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event owed to one webhook; ``body`` is the event's JSON (content-free)."""

    delivery_id: str
    webhook_id: str
    tenant_id: str
    event_id: str
    event_type: str
    body: bytes
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime
    last_error: str = ""
    last_attempt_at: datetime | None = None


class EventPublisher(Protocol):
    def publish(self, events: Sequence[Event]) -> None:
        """Hand ``events`` on durably (an outbox row, an EventBridge entry) before returning.
        Raises StoreUnavailable when any of them could not be handed on (the caller retries: an
        event's id is stable, so a receiver drops a repeat)."""
        ...


class WebhookRegistry(Protocol):
    def add(self, hook: Webhook) -> None:
        """Register ``hook`` (its id is new)."""
        ...

    def list_hooks(self, tenant_id: str) -> list[Webhook]:
        """The tenant's webhooks, oldest first."""
        ...

    def remove(self, tenant_id: str, webhook_id: str) -> bool:
        """Unregister; False when the tenant has no such webhook. Its pending deliveries go too."""
        ...


@runtime_checkable
class DeliveryOutbox(Protocol):
    """The deliveries a local process makes itself (the embedded backend)."""

    def fan_out(self, limit: int) -> int:
        """Turn up to ``limit`` published events into one pending delivery per matching webhook
        of their tenant; returns the events taken."""
        ...

    def due(self, now: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries whose next attempt is at or before ``now``, oldest first."""
        ...

    def delivered(self, delivery_id: str, now: datetime) -> None: ...

    def failed(self, delivery_id: str, now: datetime, error: str, retry_at: datetime | None) -> None:
        """Count a failed attempt; ``retry_at`` None: no attempt is left, the delivery is dead."""
        ...

    def dead(self, tenant_id: str | None, limit: int) -> list[Delivery]:
        """Dead-lettered deliveries (of one tenant, or all), newest first."""
        ...

    def redrive(self, tenant_id: str | None, delivery_ids: Sequence[str] | None, now: datetime) -> int:
        """Make dead deliveries pending again, due ``now``, with their attempts reset (the given
        ids, or all of the tenant's / all); returns how many."""
        ...


class WebhookTransport(Protocol):
    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        """POST ``body``; returns the HTTP status. Raises ConnectionError / TimeoutError (OSError)
        when no answer came."""
        ...
