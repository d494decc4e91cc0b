"""DynamoDB L0 turn log (:class:`~agentmem.ports.TurnLog`), in the session table beside the
runtime state (:mod:`.dynamodb_runtime_state`); the audit trail is :mod:`.dynamodb_audit`.

The *session* table holds, per ``pk = scope.key``: ``TURN#<message_id>`` raw turns (appended with
``attribute_not_exists``, so a replay reports False and writes nothing), ``DONE#<message_id>``
processed marks (the write path's idempotency record, outcome as JSON) and
``STATE#<session_id>`` task state. Turns and marks carry ``ttl`` = time + retention; states
carry ``ttl`` = their expiry, and since DynamoDB deletes expired items only eventually (moto
never), an expired state reads as absent by the injected clock, as does a stored state that no
longer parses as a :class:`~agentmem.domain.runtime_state.RuntimeState` (logged). The ``by_session`` LSI orders a
session's turns by ``(at, arrival)``; session ids are hashed into it so one id can never be a
prefix of another.

Every call's consumed capacity goes to the table handle's
:class:`~agentmem.adapters.aws.dynamodb_base.CapacityMeter` (injected to share one). Reads are
strongly consistent except :meth:`DynamoTurnLog.is_processed` (its docstring says why).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import datetime, timedelta
from typing import Any

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
from agentmem.adapters.aws.dynamodb_schema import SESSION_LSI_BY_SESSION
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.domain.models import Scope
from agentmem.ports import RawTurnRecord

TURN, DONE = "TURN#", "DONE#"


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
