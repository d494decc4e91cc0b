"""DynamoDB turn receipts: which turns the API put on the SQS ingest queue, and when.

SQS cannot look a message up by id, so ``GET /v1/turns/{message_id}`` would not know a turn that
is still queued from one never sent. :class:`DynamoTurnReceipts` keeps one small item per sent turn
in the *session* table, ``pk = scope.key``, ``sk = QUEUED#<message_id>``: the time only, never the
turn's text, with ``ttl`` = time + the turn retention (the L0 log's). Once the turn is processed its
processed mark answers instead; an erase removes the scope's receipts
(:meth:`~agentmem.adapters.aws.sqs_queue.SqsTurnQueue.purge_scope`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from agentmem.adapters.aws.dynamodb_base import BATCH_WRITE_SIZE, DynamoTable, dynamodb_client, n, s, text
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.domain.models import Scope

QUEUED = "QUEUED#"


class DynamoTurnReceipts:
    """Receipts of sent turns over the session table (``QUEUED#<message_id>`` items)."""

    def __init__(
        self,
        table_name: str,
        *,
        retention: timedelta = timedelta(days=30),
        client: LazyClient[Any] | None = None,
        region: str | None = None,
    ) -> None:
        self._t = DynamoTable(
            dynamodb_client(client, region),
            table_name,
            store="dynamodb-session",
        )
        self._retention = retention

    def record(self, scope_message_ids: Sequence[tuple[Scope, str]], at: datetime) -> None:
        """One receipt per (scope, message id), replacing an earlier one (a redrive sends again)."""
        ttl = n(int((at + self._retention).timestamp()))
        items = [
            {"pk": s(scope.key), "sk": s(QUEUED + message_id), "at": s(format_sortable(at)), "ttl": ttl}
            for scope, message_id in dict.fromkeys(scope_message_ids)
        ]
        for start in range(0, len(items), BATCH_WRITE_SIZE):
            chunk = [{"PutRequest": {"Item": item}} for item in items[start : start + BATCH_WRITE_SIZE]]
            result = self._t.call("batch_write_item", table=False, RequestItems={self._t.name: chunk})
            for left in (result.get("UnprocessedItems") or {}).get(self._t.name, []):
                self._t.call("put_item", Item=left["PutRequest"]["Item"])  # once, one by one

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        item = self._t.call(
            "get_item", Key={"pk": s(scope.key), "sk": s(QUEUED + message_id)}, ConsistentRead=True
        ).get("Item")
        return parse_datetime(text(item, "at")) if item else None

    def erase_scope(self, scope: Scope) -> int:
        """Remove every receipt of the scope; returns how many."""
        keys = self._t.partition_keys(scope.key, QUEUED)
        self._t.batch_delete(keys)
        return len(keys)
