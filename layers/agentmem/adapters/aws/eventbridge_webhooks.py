"""The AWS webhook registry (:class:`~agentmem.webhook_ports.WebhookRegistry`), kept in EventBridge
itself: a webhook is a connection (its secret as an API-key header, stored by EventBridge in
Secrets Manager), an API destination (the URL) and a rule on the stack's bus matching the
tenant's events, whose target names the delivery role, a retry policy and the dead-letter queue
(docs/events.md). All three are named ``agentmem-<tenant digest>-<webhook id>``, so a tenant's
webhooks are the rules with its prefix; nothing else stores them.

EventBridge cannot sign a body with HMAC: the receiver compares the ``Agentmem-Webhook-Secret``
header with its secret instead.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client, error_code, translate
from agentmem.adapters.aws.eventbridge import SOURCE
from agentmem.errors import AgentMemError
from agentmem.webhook_ports import Webhook

SECRET_HEADER = "Agentmem-Webhook-Secret"
RETRY_ATTEMPTS = 185  # EventBridge's maximum; with the event age below, a day of backoff
MAX_EVENT_AGE_S = 86400
RATE_PER_SECOND = 10


def _prefix(tenant_id: str) -> str:
    return "agentmem-" + hashlib.sha256(tenant_id.encode()).hexdigest()[:12] + "-"


def event_pattern(tenant_id: str, events: tuple[str, ...]) -> dict[str, Any]:
    """The rule's pattern: the tenant's events of the webhook's types (``memory.*`` a prefix)."""
    pattern: dict[str, Any] = {"source": [SOURCE], "detail": {"tenant_id": [tenant_id]}}
    if "*" not in events:
        pattern["detail-type"] = [{"prefix": e[:-1]} if e.endswith(".*") else e for e in events]
    return pattern


def _filters(pattern: dict[str, Any]) -> tuple[str, ...]:
    types = pattern.get("detail-type")
    if not types:
        return ("*",)
    return tuple(t["prefix"] + "*" if isinstance(t, dict) else str(t) for t in types)


class EventBridgeWebhooks:
    def __init__(
        self, bus_name: str, role_arn: str, dlq_arn: str, *, region: str | None = None, client: Any = None
    ) -> None:
        self.bus_name, self.role_arn, self.dlq_arn = bus_name, role_arn, dlq_arn
        self._client: LazyClient[Any] = LazyClient(lambda: client or boto_client("events", region=region))

    def _call(self, operation: str, **params: Any) -> Any:
        method = "".join("_" + c.lower() if c.isupper() else c for c in operation).lstrip("_")
        try:
            return getattr(self._client.get(), method)(**params)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, store="eventbridge", operation=operation) from exc

    def add(self, hook: Webhook) -> None:
        name = _prefix(hook.tenant_id) + hook.webhook_id
        connection = self._call(
            "CreateConnection",
            Name=name,
            AuthorizationType="API_KEY",
            AuthParameters={
                "ApiKeyAuthParameters": {"ApiKeyName": SECRET_HEADER, "ApiKeyValue": hook.secret}
            },
        )
        destination = self._call(
            "CreateApiDestination",
            Name=name,
            ConnectionArn=connection["ConnectionArn"],
            InvocationEndpoint=hook.url,
            HttpMethod="POST",
            InvocationRateLimitPerSecond=RATE_PER_SECOND,
        )
        self._call(
            "PutRule",
            Name=name,
            EventBusName=self.bus_name,
            EventPattern=json.dumps(event_pattern(hook.tenant_id, hook.events)),
            Description=hook.description[:200],
            State="ENABLED",
        )
        self._call(
            "PutTargets",
            Rule=name,
            EventBusName=self.bus_name,
            Targets=[
                {
                    "Id": "webhook",
                    "Arn": destination["ApiDestinationArn"],
                    "RoleArn": self.role_arn,
                    "InputPath": "$.detail",
                    "RetryPolicy": {
                        "MaximumRetryAttempts": RETRY_ATTEMPTS,
                        "MaximumEventAgeInSeconds": MAX_EVENT_AGE_S,
                    },
                    "DeadLetterConfig": {"Arn": self.dlq_arn},
                }
            ],
        )

    def list_hooks(self, tenant_id: str) -> list[Webhook]:
        prefix = _prefix(tenant_id)
        rules: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._call(
                "ListRules",
                NamePrefix=prefix,
                EventBusName=self.bus_name,
                **({"NextToken": token} if token else {}),
            )
            rules += page.get("Rules", [])
            token = page.get("NextToken")
            if not token:
                break
        hooks = []
        for rule in rules:
            name = str(rule["Name"])
            try:
                destination = self._call("DescribeApiDestination", Name=name)
            except AgentMemError as exc:  # a rule whose destination is gone (a half-deleted webhook)
                if _not_found(exc):
                    continue
                raise
            hooks.append(
                Webhook(
                    webhook_id=name.removeprefix(prefix),
                    tenant_id=tenant_id,
                    url=str(destination["InvocationEndpoint"]),
                    events=_filters(json.loads(rule.get("EventPattern") or "{}")),
                    secret="",  # kept by EventBridge (Secrets Manager), never read back
                    created_at=destination["CreationTime"],
                    description=str(rule.get("Description") or ""),
                )
            )
        return sorted(hooks, key=lambda h: (h.created_at, h.webhook_id))

    def remove(self, tenant_id: str, webhook_id: str) -> bool:
        name = _prefix(tenant_id) + webhook_id
        try:
            self._call("DescribeRule", Name=name, EventBusName=self.bus_name)
        except AgentMemError as exc:
            if _not_found(exc):
                return False
            raise
        self._call("RemoveTargets", Rule=name, EventBusName=self.bus_name, Ids=["webhook"])
        self._call("DeleteRule", Name=name, EventBusName=self.bus_name)
        for operation in ("DeleteApiDestination", "DeleteConnection"):
            try:
                self._call(operation, Name=name)
            except AgentMemError as exc:
                if not _not_found(exc):
                    raise
        return True


def _not_found(exc: BaseException) -> bool:
    cause = exc.__cause__
    return isinstance(cause, ClientError) and error_code(cause) == "ResourceNotFoundException"
