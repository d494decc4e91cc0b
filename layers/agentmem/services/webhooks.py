"""Webhooks (docs/events.md): the per-tenant registry operators manage (``/v1/webhooks``), the
delivery of events to them where this process delivers (local mode's event-source process), and
the dead-lettered deliveries an operator lists and redrives.

A delivery POSTs the event's JSON with ``Agentmem-Signature`` (HMAC-SHA256, Stripe style,
:mod:`agentmem.domain.events`), ``Agentmem-Event-Id`` and ``Agentmem-Event-Type``; a 2xx answer
delivers it, anything else (another status, no answer in time, a refused connection) is retried
after ``base * 2^(n-1)`` seconds (capped), and after the last attempt it is dead: kept, listed,
redriven on request with its attempts reset.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from agentmem.domain.events import (
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    backoff_s,
    known_filter,
    sign,
)
from agentmem.errors import ConfigurationError, NotFound, ValidationFailed
from agentmem.webhook_ports import Delivery, DeliveryOutbox, Webhook, WebhookRegistry, WebhookTransport

log = logging.getLogger(__name__)

MAX_URL = 2048
MAX_HOOKS = 25  # per tenant
BATCH = 50


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    max_attempts: int = 8
    base_s: float = 5.0
    cap_s: float = 3600.0
    timeout_s: float = 10.0


@dataclass
class DeliveryReport:
    fanned: int = 0
    delivered: int = 0
    retried: int = 0
    dead: int = 0

    @property
    def moved(self) -> int:
        return self.fanned + self.delivered + self.retried + self.dead


def check_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host and no credentials; else
    ValidationFailed saying what is wrong."""
    if len(url) > MAX_URL:
        raise ValidationFailed(f"the url is longer than {MAX_URL} characters", details={"field": "url"})
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValidationFailed(f"the url does not parse: {exc}", details={"field": "url"}) from exc
    if parts.scheme not in ("http", "https"):
        raise ValidationFailed("the url must be http:// or https://", details={"field": "url"})
    if not parts.hostname:
        raise ValidationFailed("the url has no host", details={"field": "url"})
    if parts.username or parts.password:
        raise ValidationFailed("the url must not carry credentials", details={"field": "url"})
    if port == 0:
        raise ValidationFailed("the url's port must be 1-65535", details={"field": "url"})
    return url


def check_events(events: Sequence[str]) -> tuple[str, ...]:
    unknown = [e for e in events if not known_filter(e)]
    if unknown or not events:
        raise ValidationFailed(
            "events must name event types (turn.processed, memory.*, * ...)",
            details={"field": "events", "unknown": unknown},
        )
    return tuple(dict.fromkeys(events))


@dataclass
class WebhookService:
    registry: WebhookRegistry | None
    outbox: DeliveryOutbox | None = None  # None: the platform delivers (EventBridge) and keeps its own

    def _hooks(self) -> WebhookRegistry:
        if self.registry is None:
            raise ConfigurationError(
                "webhooks are not configured on this deployment (set AGENTMEM_EVENT_BUS_NAME)",
                details={"setting": "AGENTMEM_EVENT_BUS_NAME"},
            )
        return self.registry

    def _deliveries(self) -> DeliveryOutbox:
        if self.outbox is None:  # by design, not a fault: a 404 that says where they are
            raise NotFound(
                "this deployment keeps no delivery outbox: EventBridge delivers, and a failed delivery "
                "is in the webhook dead-letter queue, redriven by replaying the bus archive (docs/events.md)",
                details={"deliveries": "eventbridge"},
            )
        return self.outbox

    def create(
        self, tenant_id: str, url: str, events: Sequence[str], *, now: datetime, description: str = ""
    ) -> Webhook:
        """Register a webhook; the answer carries its secret, shown this once."""
        registry = self._hooks()
        hook = Webhook(
            webhook_id="wh_" + uuid.uuid4().hex[:24],
            tenant_id=tenant_id,
            url=check_url(url),
            events=check_events(events),
            secret="whsec_" + secrets.token_urlsafe(32),
            created_at=now,
            description=description,
        )
        if len(registry.list_hooks(tenant_id)) >= MAX_HOOKS:
            raise ValidationFailed(f"a tenant has at most {MAX_HOOKS} webhooks", details={"field": "url"})
        registry.add(hook)
        log.info("webhook.created", extra={"webhook_id": hook.webhook_id, "events": list(hook.events)})
        return hook

    def hooks(self, tenant_id: str) -> list[Webhook]:
        return self._hooks().list_hooks(tenant_id)

    def delete(self, tenant_id: str, webhook_id: str) -> None:
        if not self._hooks().remove(tenant_id, webhook_id):
            raise NotFound("no such webhook", details={"webhook_id": webhook_id})

    def dead(self, tenant_id: str | None, limit: int = 100) -> list[Delivery]:
        return self._deliveries().dead(tenant_id, limit)

    def redrive(self, tenant_id: str | None, delivery_ids: Sequence[str] | None, *, now: datetime) -> int:
        return self._deliveries().redrive(tenant_id, delivery_ids, now)


@dataclass
class WebhookDelivery:
    """The delivery loop's one step (local mode's event-source process)."""

    outbox: DeliveryOutbox
    registry: WebhookRegistry
    transport: WebhookTransport
    policy: DeliveryPolicy = field(default_factory=DeliveryPolicy)

    def run(self, now: datetime, limit: int = BATCH) -> DeliveryReport:
        """Fan the published events out to their webhooks, then attempt every due delivery."""
        report = DeliveryReport(fanned=self.outbox.fan_out(limit))
        hooks: dict[tuple[str, str], Webhook | None] = {}
        for delivery in self.outbox.due(now, limit):
            key = (delivery.tenant_id, delivery.webhook_id)
            if key not in hooks:
                found = {h.webhook_id: h for h in self.registry.list_hooks(delivery.tenant_id)}
                hooks.update({(delivery.tenant_id, i): h for i, h in found.items()})
                hooks.setdefault(key, None)
            hook = hooks[key]
            if hook is None:  # unregistered since: nothing to deliver to
                self.outbox.failed(delivery.delivery_id, now, "webhook_removed", None)
                report.dead += 1
                continue
            self._attempt(hook, delivery, now, report)
        return report

    def _attempt(self, hook: Webhook, delivery: Delivery, now: datetime, report: DeliveryReport) -> None:
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "agentmem-webhooks/1",
            SIGNATURE_HEADER: sign(hook.secret, delivery.body, now),
            EVENT_ID_HEADER: delivery.event_id,
            EVENT_TYPE_HEADER: delivery.event_type,
        }
        try:
            status = self.transport.post(hook.url, delivery.body, headers, self.policy.timeout_s)
            error = "" if 200 <= status < 300 else f"http_{status}"
        except OSError as exc:  # refused, reset, timed out, unresolvable
            error = f"{type(exc).__name__}: {exc}"[:300]
        if not error:
            self.outbox.delivered(delivery.delivery_id, now)
            report.delivered += 1
            return
        attempts = delivery.attempts + 1
        if attempts >= self.policy.max_attempts:
            self.outbox.failed(delivery.delivery_id, now, error, None)
            report.dead += 1
            log.warning("webhook.dead", extra={"delivery_id": delivery.delivery_id, "error": error})
            return
        wait = backoff_s(attempts, self.policy.base_s, self.policy.cap_s)
        self.outbox.failed(delivery.delivery_id, now, error, now + timedelta(seconds=wait))
        report.retried += 1
