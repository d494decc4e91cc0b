""":class:`~agentmem.ports.AuditLog` over the DynamoDB audit table.

The *audit* table is append-only: ``PutItem`` with ``attribute_not_exists`` (a retried append
is a no-op), never update or delete. An event the caller gave an id is ``EVT#<event_id>`` (so
its id alone makes a retry a no-op) and carries ``at_sk`` for the ``by_time`` LSI; an event
without one (every event the services write: a context call's ``context_injected``, a turn's
``written``, ...) gets a fresh id and the time-ordered key ``AT#<at>#<event_id>`` with no
``at_sk``, so it is one write unit instead of two (its item and the LSI's copy). A listing reads
both, newest first: the ``AT#`` range of the partition and the LSI (events with an id, and every
event written before the time-ordered keys), merged by ``(at, event_id)``.
"""

from __future__ import annotations

import builtins
import json
from typing import Any
from uuid import uuid4

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    ConditionFailed,
    DynamoTable,
    Item,
    dynamodb_client,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_schema import AUDIT_LSI_BY_TIME
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.domain.models import AuditAction, AuditEvent, Scope

EVENT = "EVT#"
TIMED_EVENT = "AT#"  # an audit event without a caller's id: AT#<at>#<event_id>, newest first


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def new_event_id(event: AuditEvent) -> str:
    """A time-sortable id (``<epoch ms, 13 digits>-<8 hex>``), as the embedded trail makes them."""
    return f"{max(0, int(event.at.timestamp() * 1000)):013d}-{uuid4().hex[:8]}"


def audit_item(event: AuditEvent) -> Item:
    """The audit table's item of ``event`` (what ``append`` puts, and a transaction's audit line)."""
    event_id = event.event_id or new_event_id(event)
    at_sk = f"{format_sortable(event.at)}#{event_id}"
    # an id given by the caller must stay the key (a retry at another time is the same event);
    # a fresh id is unique anyway, so its key can order the trail and spare the LSI's copy
    key = {"sk": s(EVENT + event_id), "at_sk": s(at_sk)} if event.event_id else {"sk": s(TIMED_EVENT + at_sk)}
    item: Item = {
        "pk": s(event.scope.key),
        **key,
        "event_id": s(event_id),
        "tenant_id": s(event.scope.tenant_id),
        "user_id": s(event.scope.user_id),
        "action": s(event.action),
        "at": s(format_sortable(event.at)),
        "details": s(_dumps(event.details)),
    }
    if event.memory_id is not None:
        item["memory_id"] = s(event.memory_id)
    if event.reason is not None:
        item["reason"] = s(event.reason)
    return item


class DynamoAuditLog:
    """:class:`agentmem.ports.AuditLog` over the audit table: conditional PutItem and Query only."""

    def __init__(
        self,
        table_name: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        self._t = DynamoTable(
            dynamodb_client(client, region), table_name, store="dynamodb-audit", meter=meter
        )

    def append(self, event: AuditEvent) -> None:
        try:
            self._t.call("put_item", Item=audit_item(event), ConditionExpression="attribute_not_exists(pk)")
        except ConditionFailed:
            return  # a retried append of the same event: the trail already has it

    def list(self, scope: Scope, limit: int = 100, action: str | None = None) -> list[AuditEvent]:
        if limit <= 0:
            return []
        timed = self._newest(
            scope, limit, action, {"KeyConditionExpression": "pk = :pk AND begins_with(sk, :at)"}
        )
        indexed = self._newest(
            scope, limit, action, {"IndexName": AUDIT_LSI_BY_TIME, "KeyConditionExpression": "pk = :pk"}
        )
        ordered = sorted(timed + indexed, key=lambda i: text(i, "at_sk") or text(i, "sk")[len(TIMED_EVENT) :])
        return [
            AuditEvent(
                scope=scope,
                action=AuditAction(text(i, "action")),
                at=parse_datetime(text(i, "at")),
                memory_id=text(i, "memory_id") or None,
                reason=text(i, "reason") or None,
                details=dict(json.loads(text(i, "details", "{}"))),
                event_id=text(i, "event_id"),
            )
            for i in reversed(ordered[-limit:])
        ]

    def _newest(
        self, scope: Scope, limit: int, action: str | None, where: dict[str, Any]
    ) -> builtins.list[Item]:
        """Up to ``limit`` events of one of the two orders (``where``), newest first."""
        kwargs: dict[str, Any] = {
            **where,
            "ExpressionAttributeValues": {":pk": s(scope.key)},
            "ScanIndexForward": False,
            "ConsistentRead": True,
        }
        if "IndexName" not in where:
            kwargs["ExpressionAttributeValues"][":at"] = s(TIMED_EVENT)
        if action is not None:
            kwargs["FilterExpression"] = "#a = :action"
            kwargs["ExpressionAttributeNames"] = {"#a": "action"}
            kwargs["ExpressionAttributeValues"][":action"] = s(action)
        else:
            kwargs["Limit"] = limit
        return list(self._t.query(limit=limit, **kwargs))
