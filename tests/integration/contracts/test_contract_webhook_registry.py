"""Contract of :class:`agentmem.webhook_ports.WebhookRegistry`, over the embedded registry
(SQLite, events.db), the AWS one (EventBridge rules, connections and API destinations, on
moto) and the in-memory fake (:mod:`support.fakes.webhooks`): a tenant's webhooks come back oldest first with their URL and filters, never another
tenant's; removing one is True once and False after; the secret is kept by the registry (the
embedded one reads it back to sign; EventBridge keeps it in the connection, unreadable)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from agentmem.adapters.aws.eventbridge_webhooks import EventBridgeWebhooks
from agentmem.adapters.embedded.webhooks import SqliteWebhooks
from agentmem.webhook_ports import Webhook, WebhookRegistry
from support.fakes.webhooks import InMemoryWebhooks

T0 = datetime(2026, 12, 7, 20, 0, tzinfo=UTC)


@pytest.fixture(params=["embedded", "eventbridge", "fake"])
def registry(request: pytest.FixtureRequest) -> Iterator[WebhookRegistry]:
    if request.param == "fake":
        yield InMemoryWebhooks()
        return
    if request.param == "embedded":
        store = SqliteWebhooks(":memory:")
        yield store
        store.close()
        return
    with mock_aws():
        client = boto3.client("events", region_name="eu-west-1")
        client.create_event_bus(Name="agentmem-test-events")
        yield EventBridgeWebhooks(
            "agentmem-test-events",
            "arn:aws:iam::123456789012:role/delivery",
            "arn:aws:sqs:eu-west-1:123456789012:dlq",
            client=client,
        )


def _hook(tenant: str, n: int, events: tuple[str, ...] = ("*",)) -> Webhook:
    return Webhook(
        webhook_id=f"wh_{n:024d}",
        tenant_id=tenant,
        url=f"https://{tenant}.example.com/hook/{n}",
        events=events,
        secret=f"whsec_{n}",
        created_at=T0 + timedelta(minutes=n),
        description=f"hook {n}",
    )


def test_a_tenants_webhooks_come_back_and_only_its_own(registry: WebhookRegistry) -> None:
    registry.add(_hook("acme", 1, ("turn.processed", "memory.*")))
    registry.add(_hook("acme", 2))
    registry.add(_hook("globex", 3))
    listed = registry.list_hooks("acme")
    assert [(h.webhook_id, h.url, h.events, h.description) for h in listed] == [
        ("wh_" + "1".zfill(24), "https://acme.example.com/hook/1", ("turn.processed", "memory.*"), "hook 1"),
        ("wh_" + "2".zfill(24), "https://acme.example.com/hook/2", ("*",), "hook 2"),
    ]
    assert [h.tenant_id for h in registry.list_hooks("globex")] == ["globex"]
    assert registry.list_hooks("initech") == []


def test_removing_is_true_once(registry: WebhookRegistry) -> None:
    registry.add(_hook("acme", 1))
    assert registry.remove("globex", "wh_" + "1".zfill(24)) is False  # another tenant's id
    assert registry.remove("acme", "wh_" + "1".zfill(24)) is True
    assert registry.remove("acme", "wh_" + "1".zfill(24)) is False
    assert registry.list_hooks("acme") == []
