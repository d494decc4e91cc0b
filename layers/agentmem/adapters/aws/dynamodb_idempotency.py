"""DynamoDB :class:`agentmem.ports.IdempotencyStore` over the *session* table: one item
``IDEM#<key>`` per ``Idempotency-Key`` in the caller's partition (``pk = scope.key``), with the
request's fingerprint, id and time, and the answer once the request has one. A claim is one
conditional ``PutItem`` (the key is new, or its record expired) and, when it fails, one strongly
consistent ``GetItem`` of the record that won; the answer is a second ``PutItem``. The item's
``ttl`` lets DynamoDB delete it after ``expires_at`` (eventually: the claim's condition treats an
expired record as absent meanwhile). Only the calls the api λ already makes on this table
(``PutItem``, ``GetItem``, ``Query`` and ``BatchWriteItem`` for an erase)."""

from __future__ import annotations

from datetime import datetime
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
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.domain.models import Scope
from agentmem.ports import IdempotencyRecord

IDEMPOTENCY = "IDEM#"


def _key(scope: Scope, key: str) -> Item:
    return {"pk": s(scope.key), "sk": s(IDEMPOTENCY + key)}


class DynamoIdempotencyStore:
    def __init__(
        self,
        table_name: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        self._t = DynamoTable(
            dynamodb_client(client, region), table_name, store="dynamodb-session", meter=meter
        )

    def _item(self, scope: Scope, record: IdempotencyRecord) -> Item:
        item: Item = {
            **_key(scope, record.key),
            "fingerprint": s(record.fingerprint),
            "request_id": s(record.request_id),
            "first_at": s(format_sortable(record.first_at)),
            "expires_at": s(format_sortable(record.expires_at)),
            "ttl": n(int(record.expires_at.timestamp())),
        }
        if record.status is not None and record.body is not None:
            item["status"] = n(record.status)
            item["body"] = s(record.body)
        return item

    def claim(self, scope: Scope, candidate: IdempotencyRecord, now: datetime) -> IdempotencyRecord:
        try:
            self._t.call(
                "put_item",
                Item=self._item(scope, candidate),
                ConditionExpression="attribute_not_exists(pk) OR expires_at <= :now",
                ExpressionAttributeValues={":now": s(format_sortable(now))},
            )
            return candidate
        except ConditionFailed:
            pass
        item = self._t.call("get_item", Key=_key(scope, candidate.key), ConsistentRead=True).get("Item")
        if not item:  # expired and deleted in between: claim again
            return self.claim(scope, candidate, now)
        status = item.get("status")
        return IdempotencyRecord(
            key=candidate.key,
            fingerprint=text(item, "fingerprint"),
            request_id=text(item, "request_id"),
            first_at=parse_datetime(text(item, "first_at")),
            expires_at=parse_datetime(text(item, "expires_at")),
            status=None if status is None else int(status["N"]),
            body=text(item, "body") if "body" in item else None,
        )

    def complete(self, scope: Scope, key: str, status: int, body: str) -> None:
        item = self._t.call("get_item", Key=_key(scope, key), ConsistentRead=True).get("Item")
        if not item:
            return
        self._t.call("put_item", Item={**item, "status": n(status), "body": s(body)})

    def prune_idempotency(self, now: datetime) -> int:
        """DynamoDB's TTL deletes expired records; nothing to do here."""
        return 0

    def erase_scope(self, scope: Scope) -> int:
        keys = self._t.partition_keys(scope.key, IDEMPOTENCY)
        self._t.batch_delete(keys)
        return len(keys)
