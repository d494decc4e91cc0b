""":class:`~agentmem.ports.RuntimeStateStore` over the DynamoDB session table: ``STATE#<session_id>``
items per ``pk = scope.key``, each with ``ttl`` = its expiry. DynamoDB deletes expired items only
eventually (moto never), so an expired state reads as absent by the injected clock, as does a
stored state that no longer parses as a :class:`~agentmem.domain.runtime_state.RuntimeState`
(logged)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    DynamoTable,
    Item,
    dynamodb_client,
    n,
    s,
    text,
)
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.runtime_state import parse_stored_state
from agentmem.domain.models import Scope
from agentmem.domain.runtime_state import RuntimeState

STATE = "STATE#"


def _key(scope: Scope, sk: str) -> Item:
    return {"pk": s(scope.key), "sk": s(sk)}


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
