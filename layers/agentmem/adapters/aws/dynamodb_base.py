"""DynamoDB plumbing shared by the AWS stores: one table handle over a lazily built low-level
client, error translation, paginated queries, batched deletes, opaque cursors, and the capacity
every call consumed.

Every data call asks for ``ReturnConsumedCapacity=TOTAL`` and adds what DynamoDB reports to the
table's :class:`CapacityMeter` (shared between stores when one is injected), so a caller can see
the read and write units an operation cost. moto answers with fixed figures (0.5 or 1 per call,
nothing for transactions), not AWS's size-based ones: the bench computes the documented figures
apart (:mod:`agentmem_dev.bench.dynamodb_units`).

Items travel in typed DynamoDB JSON (``{"S": ...}``), the low-level client's and the stream's
form, so memory records go through :mod:`agentmem.adapters.codec` images unchanged.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client, error_code, translate
from agentmem.errors import StoreUnavailable, ValidationFailed

BATCH_WRITE_SIZE = 25  # BatchWriteItem's limit
BATCH_GET_SIZE = 100  # BatchGetItem's limit
UNPROCESSED_RETRIES = 5  # BatchWriteItem rounds for items DynamoDB left unprocessed (throttling)

Item = dict[str, Any]

READ_OPERATIONS = frozenset({"get_item", "batch_get_item", "query", "scan", "transact_get_items"})
WRITE_OPERATIONS = frozenset(
    {"put_item", "update_item", "delete_item", "batch_write_item", "transact_write_items"}
)
METERED_OPERATIONS = READ_OPERATIONS | WRITE_OPERATIONS


@dataclass
class OperationCapacity:
    """What one operation on one table consumed so far: calls, and the units DynamoDB reported
    (``reported_calls`` of them carried a ``ConsumedCapacity``)."""

    calls: int = 0
    units: float = 0.0
    reported_calls: int = 0


@dataclass
class CapacityMeter:
    """Consumed capacity as DynamoDB reported it, per ``(table, operation)``; thread-safe (the
    context service fetches its sources concurrently)."""

    operations: dict[tuple[str, str], OperationCapacity] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, table: str, operation: str, response: Mapping[str, Any]) -> None:
        """Add one call and the ``ConsumedCapacity`` of its response (a dict, or a list of them
        for batch and transaction calls; absent when the service reported none)."""
        consumed = response.get("ConsumedCapacity")
        entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
        units = sum(float(e.get("CapacityUnits") or 0.0) for e in entries if isinstance(e, Mapping))
        with self._lock:
            entry = self.operations.setdefault((table, operation), OperationCapacity())
            entry.calls += 1
            entry.units += units
            entry.reported_calls += 1 if entries else 0

    def units(self, kind: str) -> float:
        """Total ``read`` or ``write`` units reported."""
        names = READ_OPERATIONS if kind == "read" else WRITE_OPERATIONS
        with self._lock:
            return sum(c.units for (_, op), c in self.operations.items() if op in names)

    def snapshot(self) -> dict[tuple[str, str], OperationCapacity]:
        with self._lock:
            return {
                k: OperationCapacity(v.calls, v.units, v.reported_calls) for k, v in self.operations.items()
            }

    def reset(self) -> None:
        with self._lock:
            self.operations.clear()


def dynamodb_client(client: LazyClient[Any] | None, region: str | None) -> LazyClient[Any]:
    """``client`` (the one the wiring shares between the tables), else a DynamoDB client of its
    own, made on first use."""
    return client or LazyClient(lambda: boto_client("dynamodb", region=region))


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int | float) -> dict[str, str]:
    return {"N": str(value)}


def text(item: Mapping[str, Any], name: str, default: str = "") -> str:
    value = item.get(name)
    return str(value["S"]) if isinstance(value, Mapping) and "S" in value else default


def number(item: Mapping[str, Any], name: str, default: int = 0) -> int:
    value = item.get(name)
    return int(value["N"]) if isinstance(value, Mapping) and "N" in value else default


class ConditionFailed(Exception):  # internal signal, never leaves the adapters
    """A conditional write failed; ``item`` is the stored item when DynamoDB returned it."""

    def __init__(self, item: Item | None) -> None:
        super().__init__("conditional check failed")
        self.item = item


def encode_cursor(key: Mapping[str, Any]) -> str:
    """An opaque cursor from a (string-typed) DynamoDB key."""
    plain = {name: value["S"] for name, value in key.items()}
    return base64.urlsafe_b64encode(json.dumps(plain, sort_keys=True).encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str, required: Sequence[str]) -> Item:
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8"))
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor}) from exc
    if not isinstance(plain, dict) or any(not isinstance(plain.get(k), str) for k in required):
        raise ValidationFailed("invalid cursor", details={"cursor": cursor})
    return {name: s(plain[name]) for name in required}


class DynamoTable:
    """One table: every call names it, every SDK error leaves as an agentmem error."""

    def __init__(
        self,
        client: LazyClient[Any],
        name: str,
        *,
        store: str,
        sleep: Callable[[float], None] = time.sleep,
        meter: CapacityMeter | None = None,
    ) -> None:
        self.client = client
        self.name = name
        self.store = store
        self.meter = meter if meter is not None else CapacityMeter()
        self._sleep = sleep

    def call(self, operation: str, *, table: bool = True, **kwargs: Any) -> dict[str, Any]:
        """Run ``operation``; a failed condition raises :class:`ConditionFailed`. Data calls ask
        for their consumed capacity and add it to :attr:`meter`."""
        if table:
            kwargs["TableName"] = self.name
        metered = operation in METERED_OPERATIONS
        if metered:
            kwargs.setdefault("ReturnConsumedCapacity", "TOTAL")
        try:
            result: dict[str, Any] = getattr(self.client.get(), operation)(**kwargs)
        except ClientError as exc:
            if metered:  # a failed condition still costs its units; AWS reports them on the error
                self.meter.record(self.name, operation, exc.response)
            if error_code(exc) == "ConditionalCheckFailedException":
                raise ConditionFailed(exc.response.get("Item")) from exc
            raise translate(exc, store=self.store, operation=operation) from exc
        except BotoCoreError as exc:
            raise translate(exc, store=self.store, operation=operation) from exc
        if metered:
            self.meter.record(self.name, operation, result)
        return result

    def query(self, *, limit: int | None = None, **kwargs: Any) -> Iterator[Item]:
        """Items of a query, following ``LastEvaluatedKey``; stops after ``limit`` items."""
        taken = 0
        while True:
            page = self.call("query", **kwargs)
            for item in page.get("Items", []):
                yield item
                taken += 1
                if limit is not None and taken >= limit:
                    return
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last

    def partition_keys(self, pk: str, prefix: str | None = None) -> list[Item]:
        """The (pk, sk) keys of a partition, optionally only those whose sk starts with ``prefix``."""
        condition = "pk = :pk"
        values: dict[str, Any] = {":pk": s(pk)}
        if prefix is not None:
            condition += " AND begins_with(sk, :prefix)"
            values[":prefix"] = s(prefix)
        return list(
            self.query(
                KeyConditionExpression=condition,
                ExpressionAttributeValues=values,
                ProjectionExpression="pk, sk",
                ConsistentRead=True,
            )
        )

    def batch_get(
        self, keys: Sequence[Item], *, consistent: bool | None = None, projection: str | None = None
    ) -> list[Item]:
        """The items of ``keys`` (absent ones left out), 100 keys a request; keys DynamoDB left
        unprocessed (throttling) are asked again with backoff for :data:`UNPROCESSED_RETRIES`
        rounds, then StoreUnavailable."""
        found: list[Item] = []
        for start in range(0, len(keys), BATCH_GET_SIZE):
            request: dict[str, Any] = {"Keys": list(keys[start : start + BATCH_GET_SIZE])}
            if consistent is not None:
                request["ConsistentRead"] = consistent
            if projection:
                request["ProjectionExpression"] = projection
            pending: dict[str, Any] = {self.name: request}
            for attempt in range(UNPROCESSED_RETRIES + 1):
                result = self.call("batch_get_item", table=False, RequestItems=pending)
                found.extend((result.get("Responses") or {}).get(self.name, []))
                pending = result.get("UnprocessedKeys") or {}
                if not pending:
                    break
                if attempt < UNPROCESSED_RETRIES:
                    self._sleep(min(0.05 * 2**attempt, 1.0))
            if pending:
                raise StoreUnavailable(
                    f"{self.store}: batch get left keys unprocessed",
                    details={"store": self.store, "operation": "batch_get_item"},
                )
        return found

    def batch_delete(self, keys: Sequence[Item]) -> None:
        """Delete ``keys`` 25 at a time; unprocessed items are retried with backoff
        (:data:`UNPROCESSED_RETRIES` rounds), then StoreUnavailable."""
        for start in range(0, len(keys), BATCH_WRITE_SIZE):
            pending: list[dict[str, Any]] = [
                {"DeleteRequest": {"Key": {"pk": k["pk"], "sk": k["sk"]}}}
                for k in keys[start : start + BATCH_WRITE_SIZE]
            ]
            for attempt in range(UNPROCESSED_RETRIES + 1):
                result = self.call("batch_write_item", table=False, RequestItems={self.name: pending})
                pending = list((result.get("UnprocessedItems") or {}).get(self.name, []))
                if not pending:
                    break
                if attempt < UNPROCESSED_RETRIES:
                    self._sleep(min(0.05 * 2**attempt, 1.0))
            if pending:
                raise StoreUnavailable(
                    f"{self.store}: {len(pending)} deletes left unprocessed",
                    details={
                        "store": self.store,
                        "operation": "batch_write_item",
                        "unprocessed": len(pending),
                    },
                )
