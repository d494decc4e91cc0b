"""Events on AWS, on moto: the publisher puts content-free events on the bus as a rule matching
the tenant would see them (and says so when EventBridge refuses some), and the registry keeps a
webhook as a connection, an API destination and a rule on the bus: listed per tenant with its URL
and filters (never its secret), and removed whole."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agentmem.adapters.aws.eventbridge import EventBridgePublisher
from agentmem.adapters.aws.eventbridge_webhooks import SECRET_HEADER, EventBridgeWebhooks, event_pattern
from agentmem.domain.events import Event, EventType
from agentmem.errors import NotFound, StoreUnavailable
from agentmem.services.webhooks import WebhookService

REGION = "eu-west-1"
BUS = "agentmem-test-events"
ROLE = "arn:aws:iam::123456789012:role/delivery"
AT = datetime(2026, 12, 7, 20, 0, tzinfo=UTC)


@pytest.fixture
def events() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("events", region_name=REGION)
        client.create_event_bus(Name=BUS)
        yield client


def _capture(client: Any, pattern: dict[str, Any]) -> str:
    """An SQS queue a rule on the bus sends matching events to (moto delivers them)."""
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="seen")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    client.put_rule(Name="capture", EventBusName=BUS, EventPattern=json.dumps(pattern))
    client.put_targets(Rule="capture", EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])
    return url


def test_published_events_reach_a_rule_that_matches_their_tenant_and_type(events: Any) -> None:
    url = _capture(events, event_pattern("acme", ("turn.processed",)))
    created = Event(EventType.MEMORY_CREATED, "acme", "alice", "mem-1", AT, {"memory_id": "mem-1"}, 1)
    processed = Event(EventType.TURN_PROCESSED, "acme", "alice", "m-1", AT, {"status": "accepted"})
    other = Event(EventType.TURN_PROCESSED, "globex", "bob", "m-2", AT, {"status": "accepted"})
    EventBridgePublisher(BUS, client=events).publish([created, processed, other] * 5)  # two requests
    sqs = boto3.client("sqs", region_name=REGION)
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    details = [json.loads(m["Body"])["detail"] for m in got]
    assert details and {d["id"] for d in details} == {processed.event_id}
    assert all(d["tenant_id"] == "acme" and d["type"] == "turn.processed" for d in details)


def test_a_refused_entry_is_an_error_the_caller_retries() -> None:
    class Refusing:
        def put_events(self, Entries: list[Any]) -> dict[str, Any]:
            return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure"}]}

    event = Event(EventType.USER_ERASED, "acme", "alice", "alice", AT)
    with pytest.raises(StoreUnavailable):
        EventBridgePublisher(BUS, client=Refusing()).publish([event])


def test_the_registry_keeps_a_webhook_as_connection_destination_and_rule(events: Any) -> None:
    registry = EventBridgeWebhooks(BUS, ROLE, "arn:aws:sqs:eu-west-1:123456789012:dlq", client=events)
    service = WebhookService(registry)
    hook = service.create("acme", "https://chat.example.com/h", ["turn.processed", "memory.*"], now=AT)
    service.create("globex", "https://globex.example.com/h", ["*"], now=AT)
    [listed] = service.hooks("acme")
    assert (listed.webhook_id, listed.url, listed.events) == (hook.webhook_id, hook.url, hook.events)
    assert listed.secret == ""  # EventBridge keeps it; it is returned once, at creation
    name = next(
        r["Name"] for r in events.list_rules(EventBusName=BUS)["Rules"] if hook.webhook_id in r["Name"]
    )
    connection = events.describe_connection(Name=name)
    assert connection["AuthParameters"]["ApiKeyAuthParameters"]["ApiKeyName"] == SECRET_HEADER
    [target] = events.list_targets_by_rule(Rule=name, EventBusName=BUS)["Targets"]
    assert target["RoleArn"] == ROLE and target["DeadLetterConfig"]["Arn"].endswith(":dlq")
    pattern = json.loads(events.describe_rule(Name=name, EventBusName=BUS)["EventPattern"])
    assert pattern["detail"] == {"tenant_id": ["acme"]}
    assert pattern["detail-type"] == ["turn.processed", {"prefix": "memory."}]

    service.delete("acme", hook.webhook_id)
    assert service.hooks("acme") == [] and [h.url for h in service.hooks("globex")] == [
        "https://globex.example.com/h"
    ]
    with pytest.raises(NotFound):
        service.delete("acme", hook.webhook_id)
