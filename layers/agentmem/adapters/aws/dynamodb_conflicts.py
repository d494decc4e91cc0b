"""DynamoDB pending-conflict store (:class:`agentmem.ports.ConflictStore`) on the *session*
table: per ``pk = scope.key`` one ``CONFLICT#<conflict_id>`` item holding ``status``,
``created_at`` and the conflict as one JSON document (:mod:`agentmem.adapters.conflict_codec`).

A put is ``attribute_not_exists`` (a redelivered turn writes nothing twice); a resolution is a
conditional PutItem on ``status = pending``, so two resolutions cannot both win. A listing
queries the scope's ``CONFLICT#`` items (strongly consistent; a user has few) and orders them
as the embedded store does.
"""

from __future__ import annotations

from typing import Any

from agentmem.adapters.aws.dynamodb_base import (
    CapacityMeter,
    ConditionFailed,
    DynamoTable,
    Item,
    dynamodb_client,
    s,
    text,
)
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable
from agentmem.adapters.conflict_codec import MAX_LISTED, from_doc, page, to_doc
from agentmem.domain.models import Scope
from agentmem.domain.pending import ConflictStatus, PendingConflict
from agentmem.errors import NotFound, VersionConflict

CONFLICT = "CONFLICT#"


def _key(scope: Scope, conflict_id: str) -> Item:
    return {"pk": s(scope.key), "sk": s(CONFLICT + conflict_id)}


class DynamoConflictStore:
    """:class:`agentmem.ports.ConflictStore` over the session table."""

    def __init__(
        self,
        table_name: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        lazy = dynamodb_client(client, region)
        self._t = DynamoTable(lazy, table_name, store="dynamodb-session", meter=meter)

    @staticmethod
    def _item(conflict: PendingConflict) -> Item:
        return {
            **_key(conflict.scope, conflict.conflict_id),
            "status": s(conflict.status.value),
            "created_at": s(format_sortable(conflict.created_at)),
            "doc": s(to_doc(conflict)),
        }

    def put(self, conflict: PendingConflict) -> bool:
        try:
            self._t.call(
                "put_item", Item=self._item(conflict), ConditionExpression="attribute_not_exists(pk)"
            )
        except ConditionFailed:
            return False
        return True

    def get(self, scope: Scope, conflict_id: str) -> PendingConflict | None:
        item = self._t.call("get_item", Key=_key(scope, conflict_id), ConsistentRead=True).get("Item")
        return from_doc(scope, text(item, "doc")) if item else None

    def resolve(self, conflict: PendingConflict) -> None:
        try:
            self._t.call(
                "put_item",
                Item=self._item(conflict),
                ConditionExpression="attribute_exists(pk) AND #st = :pending",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":pending": s(ConflictStatus.PENDING.value)},
            )
        except ConditionFailed:
            details: dict[str, object] = {"conflict_id": conflict.conflict_id}
            if self.get(conflict.scope, conflict.conflict_id) is None:
                raise NotFound("conflict not found", details=details) from None
            raise VersionConflict("conflict already resolved", details=details) from None

    def list(
        self,
        scope: Scope,
        *,
        status: ConflictStatus | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[PendingConflict], str | None]:
        items = self._t.query(
            limit=MAX_LISTED,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(scope.key), ":prefix": s(CONFLICT)},
            ConsistentRead=True,
        )
        return page((from_doc(scope, text(i, "doc")) for i in items), status, limit, cursor)

    def erase_scope(self, scope: Scope) -> int:
        keys = self._t.partition_keys(scope.key, CONFLICT)
        self._t.batch_delete(keys)
        return len(keys)
