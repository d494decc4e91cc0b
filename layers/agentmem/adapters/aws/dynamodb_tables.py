"""DynamoDB L0 turn log, runtime state and audit trail (:class:`~agentmem.ports.TurnLog`,
:class:`~agentmem.ports.RuntimeStateStore`, :class:`~agentmem.ports.AuditLog`).

The *session* table holds, per ``pk = scope.key``: ``TURN#<message_id>`` raw turns (appended with
``attribute_not_exists``, so a replay reports False and writes nothing), ``DONE#<message_id>``
processed marks (the write path's idempotency record, outcome as JSON) and
``STATE#<session_id>`` task state. Turns and marks carry ``ttl`` = time + retention; states
carry ``ttl`` = their expiry, and since DynamoDB deletes expired items only eventually (moto
never), an expired state reads as absent by the injected clock, as does a stored state that no
longer parses as a :class:`~agentmem.domain.runtime_state.RuntimeState` (logged). The ``by_session`` LSI orders a
session's turns by ``(at, arrival)``; session ids are hashed into it so one id can never be a
prefix of another.

The *audit* table is append-only: ``PutItem`` with ``attribute_not_exists`` (a retried append
is a no-op), never update or delete. An event the caller gave an id is ``EVT#<event_id>`` (so
its id alone makes a retry a no-op) and carries ``at_sk`` for the ``by_time`` LSI; an event
without one (every event the services write: a context call's ``context_injected``, a turn's
``written``, ...) gets a fresh id and the time-ordered key ``AT#<at>#<event_id>`` with no
``at_sk``, so it is one write unit instead of two (its item and the LSI's copy). A listing reads
both, newest first: the ``AT#`` range of the partition and the LSI (events with an id, and every
event written before the time-ordered keys), merged by ``(at, event_id)``.

Every call's consumed capacity goes to the table handle's
:class:`~agentmem.adapters.aws.dynamodb_base.CapacityMeter` (injected to share one). Reads are
strongly consistent except :meth:`DynamoTurnLog.is_processed` (its docstring says why).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    ConditionFailed,
    DynamoTable,
    Item,
    dynamodb_client,
    n,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_schema import AUDIT_LSI_BY_TIME, SESSION_LSI_BY_SESSION
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.runtime_state import parse_stored_state
from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.domain.runtime_state import RuntimeState
from agentmem.ports import RawTurnRecord

TURN, DONE, STATE, EVENT = "TURN#", "DONE#", "STATE#", "EVT#"
TIMED_EVENT = "AT#"  # an audit event without a caller's id: AT#<at>#<event_id>, newest first


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _session_prefix(session_id: str) -> str:
    return "S#" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32] + "#"


def _key(scope: Scope, sk: str) -> Item:
    return {"pk": s(scope.key), "sk": s(sk)}


class _Arrival:
    """Strictly increasing nanosecond stamps within the process (ties within one ``at``)."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns())
            return self._last


class DynamoTurnLog:
    """:class:`agentmem.ports.TurnLog` over the session table."""

    def __init__(
        self,
        table_name: str,
        *,
        retention: timedelta = timedelta(days=30),
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        self._t = DynamoTable(
            dynamodb_client(client, region), table_name, store="dynamodb-session", meter=meter
        )
        self._retention = retention
        self._arrival = _Arrival()

    def _ttl(self, at: datetime) -> dict[str, str]:
        return n(int((at + self._retention).timestamp()))

    def append_raw(self, scope: Scope, turn: RawTurnRecord) -> bool:
        item: Item = {
            **_key(scope, TURN + turn.message_id),
            "session_sk": s(
                f"{_session_prefix(turn.session_id)}{format_sortable(turn.at)}#{self._arrival.next():020d}"
            ),
            "message_id": s(turn.message_id),
            "session_id": s(turn.session_id),
            "at": s(format_sortable(turn.at)),
            "user_text": s(turn.user),
            "assistant_text": s(turn.assistant),
            "status": s(turn.status),
            "extra": s(_dumps(turn.extra)),
            "ttl": self._ttl(turn.at),
        }
        if turn.trace_id is not None:
            item["trace_id"] = s(turn.trace_id)
        try:
            self._t.call("put_item", Item=item, ConditionExpression="attribute_not_exists(pk)")
        except ConditionFailed:
            return False
        return True

    def recent_turns(self, scope: Scope, session_id: str, limit: int) -> list[RawTurnRecord]:
        if limit <= 0:
            return []
        items = self._t.query(
            limit=limit,
            IndexName=SESSION_LSI_BY_SESSION,
            KeyConditionExpression="pk = :pk AND begins_with(session_sk, :session)",
            ExpressionAttributeValues={":pk": s(scope.key), ":session": s(_session_prefix(session_id))},
            ScanIndexForward=False,
            ConsistentRead=True,
            Limit=limit,
        )
        turns = [
            RawTurnRecord(
                message_id=text(i, "message_id"),
                session_id=text(i, "session_id"),
                at=parse_datetime(text(i, "at")),
                user=text(i, "user_text"),
                assistant=text(i, "assistant_text"),
                trace_id=text(i, "trace_id") or None,
                status=text(i, "status", "accepted"),
                extra=dict(json.loads(text(i, "extra", "{}"))),
            )
            for i in items
        ]
        turns.reverse()
        return turns

    def is_processed(self, scope: Scope, message_id: str) -> bool:
        """Eventually consistent: a redelivery comes a visibility timeout after the first
        delivery, and a mark missed by a stale read only re-runs an idempotent turn (its memory
        ids derive from the message id; the store's reads before each write are consistent)."""
        result = self._t.call(
            "get_item", Key=_key(scope, DONE + message_id), ConsistentRead=False, ProjectionExpression="pk"
        )
        return bool(result.get("Item"))

    def mark_processed(self, scope: Scope, message_id: str, at: datetime, outcome: dict[str, Any]) -> None:
        """Idempotent; a repeated mark replaces the outcome."""
        self._t.call(
            "put_item",
            Item={
                **_key(scope, DONE + message_id),
                "at": s(format_sortable(at)),
                "outcome": s(_dumps(outcome)),
                "ttl": self._ttl(at),
            },
        )

    def processed_outcome(self, scope: Scope, message_id: str) -> dict[str, Any] | None:
        """The outcome recorded by :meth:`mark_processed` (not part of the port)."""
        result = self._t.call("get_item", Key=_key(scope, DONE + message_id), ConsistentRead=True)
        item = result.get("Item")
        return dict(json.loads(text(item, "outcome", "{}"))) if item else None

    def erase_scope(self, scope: Scope) -> int:
        turns = self._t.partition_keys(scope.key, TURN)
        self._t.batch_delete(turns + self._t.partition_keys(scope.key, DONE))
        return len(turns)

    def forget_turn(self, scope: Scope, message_id: str) -> bool:
        self._t.call("delete_item", Key=_key(scope, DONE + message_id))
        result = self._t.call("delete_item", Key=_key(scope, TURN + message_id), ReturnValues="ALL_OLD")
        return bool(result.get("Attributes"))


class DynamoRuntimeState:
    """:class:`agentmem.ports.RuntimeStateStore` over the session table, with an injected clock."""

    def __init__(
        self,
        table_name: str,
        *,
        clock: Callable[[], datetime] | None = None,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        self._t = DynamoTable(
            dynamodb_client(client, region), table_name, store="dynamodb-session", meter=meter
        )
        self._clock = clock or (lambda: datetime.now(UTC))

    def get(self, scope: Scope, session_id: str) -> RuntimeState | None:
        item = self._t.call("get_item", Key=_key(scope, STATE + session_id), ConsistentRead=True).get("Item")
        if not item or parse_datetime(text(item, "expires_at")) <= self._clock():
            return None
        return parse_stored_state(text(item, "state", "{}"), store="dynamodb", session_id=session_id)

    def put(self, scope: Scope, session_id: str, state: RuntimeState, expires_at: datetime) -> None:
        self._t.call(
            "put_item",
            Item={
                **_key(scope, STATE + session_id),
                "state": s(state.to_json()),
                "expires_at": s(format_sortable(expires_at)),
                "ttl": n(int(expires_at.timestamp())),
            },
        )

    def erase_scope(self, scope: Scope) -> int:
        """Removes expired slots too; counts every item removed."""
        keys = self._t.partition_keys(scope.key, STATE)
        self._t.batch_delete(keys)
        return len(keys)


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
