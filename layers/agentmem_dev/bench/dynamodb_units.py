"""DynamoDB capacity units by AWS's documented rules, for the calls an adapter really makes.

moto answers ``ReturnConsumedCapacity`` with fixed figures that ignore item sizes (GetItem 0.5,
PutItem / Query 1, UpdateItem 0.5 even when not asked, BatchGetItem one per key, DeleteItem and
TransactWriteItems nothing), so :class:`RulesClient` wraps the low-level client and prices every
call itself from the items involved, read back from moto around the call:

* reads: item sizes rounded up to 4 KB units — GetItem and each BatchGetItem key separately
  (an absent item still costs one unit), Query once over the *sum* of the items it evaluated
  (before its filter: a shadow query without the filter and projection, same key condition,
  start key and ``Limit``), at least one unit; strongly consistent ×1, eventually consistent
  ×0.5 (a GSI is always eventual); a ProjectionExpression changes nothing (the whole item is
  read); an index query reads index entries (its keys and projected attributes);
* writes: 1 KB units of the larger of the old and the new item (at least one; a failed
  condition costs the stored item's units); TransactWriteItems ×2 per item, a ConditionCheck
  included; every secondary index the write touches adds its own 1 KB units of the entry it
  puts or deletes (two when the index key changes, none when nothing projected changed) —
  at the standard rate also inside a transaction (an assumption: AWS's page does not say).

Each priced call is also filed under the port call that made it (:data:`CALLER`, set by
:class:`Attributed` around an adapter: ``store.scan_active``, ``turn_log.append_raw``, ...), so a
turn's units can be read per port call (:meth:`Ledger.by_caller`).

(Over 400 lines: the size rules, the schemas' index entries, the ledger and the wrapper that
applies them are one set of rules, read together.)

Item size (AWS's rules): attribute name bytes plus value bytes — strings UTF-8, binaries their
length, numbers ``(significant digits + 1) / 2 + 1``, booleans and null 1, lists and maps 3 plus
1 per element plus the elements. Scans and anything else pass through unpriced.
"""

from __future__ import annotations

import copy
import functools
import math
import re
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

Typed = Mapping[str, Any]
Item = dict[str, Any]

READ_UNIT = 4096
WRITE_UNIT = 1024


# ------------------------------------------------------------------------------ item size


def _number_size(text: str) -> int:
    digits = re.sub(r"[^0-9]", "", text.split("e")[0].split("E")[0]).strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def value_size(typed: Typed) -> int:
    """Bytes of one typed attribute value (``{"S": ...}``), by AWS's item-size rules."""
    ((tag, value),) = typed.items()
    if tag == "S":
        return len(str(value).encode("utf-8"))
    if tag == "N":
        return _number_size(str(value))
    if tag == "B":
        return len(value) if isinstance(value, bytes | bytearray) else math.ceil(len(str(value)) * 3 / 4)
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(str(v).encode("utf-8")) for v in value)
    if tag == "NS":
        return sum(_number_size(str(v)) for v in value)
    if tag == "BS":
        return sum(len(v) for v in value)
    if tag == "L":
        return 3 + sum(1 + value_size(v) for v in value)
    if tag == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(v) for k, v in value.items())
    raise ValueError(f"unknown DynamoDB type {tag}")


def item_size(item: Mapping[str, Typed] | None) -> int:
    """Bytes of a typed item (0 for None)."""
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(v) for name, v in item.items())


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


# ------------------------------------------------------------------------------ table schemas


@dataclass(frozen=True)
class Index:
    name: str
    keys: tuple[str, ...]
    projection: str  # ALL | KEYS_ONLY | INCLUDE
    include: tuple[str, ...] = ()
    is_global: bool = False


@dataclass(frozen=True)
class Schema:
    keys: tuple[str, ...]
    indexes: dict[str, Index]

    @classmethod
    def from_request(cls, request: Mapping[str, Any]) -> Schema:
        def keys(schema: list[dict[str, str]]) -> tuple[str, ...]:
            return tuple(k["AttributeName"] for k in schema)

        indexes: dict[str, Index] = {}
        for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
            for raw in request.get(kind, []):
                projection = raw.get("Projection") or {"ProjectionType": "ALL"}
                indexes[raw["IndexName"]] = Index(
                    raw["IndexName"],
                    keys(raw["KeySchema"]),
                    projection["ProjectionType"],
                    tuple(projection.get("NonKeyAttributes") or ()),
                    kind == "GlobalSecondaryIndexes",
                )
        return cls(keys(request["KeySchema"]), indexes)

    def entry(self, index: Index, item: Item | None) -> Item | None:
        """The index entry of ``item``, or None when the item is not in the (sparse) index."""
        if item is None or any(k not in item for k in index.keys):
            return None
        if index.projection == "ALL":
            return dict(item)
        names = set(self.keys) | set(index.keys) | set(index.include)
        return {k: v for k, v in item.items() if k in names}

    def index_write_units(self, old: Item | None, new: Item | None) -> dict[str, int]:
        """Write units per index for replacing ``old`` by ``new`` (None: absent)."""
        out: dict[str, int] = {}
        for index in self.indexes.values():
            before, after = self.entry(index, old), self.entry(index, new)
            if (before is None and after is None) or before == after:
                continue
            if before is None or after is None:
                units = write_units(item_size(before or after))
            elif any(before[k] != after[k] for k in index.keys):
                units = write_units(item_size(before)) + write_units(item_size(after))
            else:
                units = write_units(item_size(after))
            out[index.name] = units
        return out


# ------------------------------------------------------------------------------ the ledger


@dataclass
class Priced:
    calls: int = 0
    read_units: float = 0.0
    write_units: float = 0.0


CALLER: ContextVar[str] = ContextVar("agentmem_dynamodb_caller", default="")
"""The port call (``<adapter>.<method>``) whose DynamoDB calls are being priced."""


class Attributed:
    """``inner`` (an adapter) with each of its public methods naming itself in :data:`CALLER`
    while it runs; a call made inside another keeps the outer name (``store.create`` for the
    transaction it makes)."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner = inner
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if attr.startswith("_") or not callable(value):
            return value

        @functools.wraps(value)
        def named(*args: Any, **kwargs: Any) -> Any:
            if CALLER.get():
                return value(*args, **kwargs)
            token = CALLER.set(f"{self._name}.{attr}")
            try:
                return value(*args, **kwargs)
            finally:
                CALLER.reset(token)

        return named


@dataclass
class Ledger:
    """Units by the rules, per ``(table, operation)`` (``operation`` names the index when one
    is read, e.g. ``query:slot_lists``, and index writes are ``index:<name>``), and per
    ``(caller, table, operation)`` (:data:`CALLER`; ``?`` when none was set)."""

    rows: dict[tuple[str, str], Priced] = field(default_factory=dict)
    callers: dict[tuple[str, str, str], Priced] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(
        self, table: str, operation: str, *, read: float = 0.0, write: float = 0.0, call: bool = True
    ) -> None:
        with self._lock:
            for row in (
                self.rows.setdefault((table, operation), Priced()),
                self.callers.setdefault((CALLER.get() or "?", table, operation), Priced()),
            ):
                row.calls += 1 if call else 0
                row.read_units += read
                row.write_units += write

    def by_caller(self) -> dict[tuple[str, str, str], Priced]:
        with self._lock:
            return {k: Priced(v.calls, v.read_units, v.write_units) for k, v in self.callers.items()}

    def totals(self) -> tuple[float, float]:
        with self._lock:
            return (
                sum(r.read_units for r in self.rows.values()),
                sum(r.write_units for r in self.rows.values()),
            )

    def snapshot(self) -> dict[tuple[str, str], Priced]:
        with self._lock:
            return {k: Priced(v.calls, v.read_units, v.write_units) for k, v in self.rows.items()}

    def reset(self) -> None:
        with self._lock:
            self.rows.clear()
            self.callers.clear()


# ------------------------------------------------------------------------------ the wrapper

_PLACEHOLDER = re.compile(r"[:#][A-Za-z0-9_]+")


class RulesClient:
    """A low-level DynamoDB client (moto) that prices each call by the rules into :attr:`ledger`.
    ``schemas`` maps table names to their ``CreateTable`` requests. Not for production: every
    priced call reads the items it touches once more."""

    def __init__(self, inner: Any, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        self.inner = inner
        self.schemas = {name: Schema.from_request(r) for name, r in schemas.items()}
        self.ledger = Ledger()
        self.paused = False  # True: pass calls through unpriced (filling a store)
        # The items as this client last saw them written (moto serialises responses slowly, so
        # the sizes come from here; anything not seen is read back from moto).
        self._items: dict[tuple[str, tuple[str, ...]], Item | None] = {}
        self._lock = threading.Lock()

    def remember(self, table: str, item: Item | None, key: Mapping[str, Typed] | None = None) -> None:
        """Record ``item`` as stored (None: deleted at ``key``), e.g. for items written around
        the client."""
        where = self._where(table, key if key is not None else item or {})
        with self._lock:
            self._items[where] = copy.deepcopy(item) if item is not None else None

    def _where(self, table: str, key: Mapping[str, Typed]) -> tuple[str, tuple[str, ...]]:
        return table, tuple(str(next(iter(key[k].values()))) for k in self.schemas[table].keys)

    def __getattr__(self, name: str) -> Any:
        handler: Callable[..., Any] | None = getattr(self, "_" + name, None)
        if handler is None or self.paused:
            return getattr(self.inner, name)
        return handler

    # ------------------------------------------------------------------ helpers
    def _stored(self, table: str, key: Mapping[str, Typed]) -> Item | None:
        where = self._where(table, key)
        with self._lock:
            if where in self._items:
                return self._items[where]
        keys = {k: key[k] for k in self.schemas[table].keys}
        found: Item | None = self.inner.get_item(TableName=table, Key=keys, ConsistentRead=True).get("Item")
        self.remember(table, found, keys)
        return found

    def stored(self, table: str, key: Mapping[str, Typed]) -> Item | None:
        """The item at ``key`` as this client last saw it (read from moto if never seen)."""
        return self._stored(table, key)

    def _reread(self, table: str, key: Mapping[str, Typed]) -> Item | None:
        with self._lock:
            self._items.pop(self._where(table, key), None)
        return self._stored(table, key)

    def _price_write(
        self, table: str, operation: str, old: Item | None, new: Item | None, *, factor: int = 1, ok: bool
    ) -> None:
        size = max(item_size(old), item_size(new)) if ok else item_size(old)
        self.ledger.add(table, operation, write=factor * write_units(size))
        if ok:
            for index, units in self.schemas[table].index_write_units(old, new).items():
                self.ledger.add(table, f"index:{index}", write=units, call=False)

    # ------------------------------------------------------------------ reads
    def _get_item(self, **kwargs: Any) -> Any:
        table = kwargs["TableName"]
        stored = self._stored(table, kwargs["Key"])
        self.ledger.add(
            table,
            "get_item",
            read=read_units(item_size(stored), consistent=bool(kwargs.get("ConsistentRead"))),
        )
        return self.inner.get_item(**kwargs)

    def _batch_get_item(self, **kwargs: Any) -> Any:
        for table, request in kwargs["RequestItems"].items():
            consistent = bool(request.get("ConsistentRead"))
            units = sum(
                read_units(item_size(self._stored(table, k)), consistent=consistent) for k in request["Keys"]
            )
            self.ledger.add(table, "batch_get_item", read=units)
        return self.inner.batch_get_item(**kwargs)

    def _query(self, **kwargs: Any) -> Any:
        table = kwargs["TableName"]
        schema = self.schemas[table]
        shadow = {
            k: v for k, v in kwargs.items() if k not in ("FilterExpression", "ProjectionExpression", "Select")
        }
        shadow.pop("ReturnConsumedCapacity", None)
        shadow["ProjectionExpression"] = ", ".join(schema.keys)  # the evaluated keys; sizes from _stored
        used = set(_PLACEHOLDER.findall(kwargs["KeyConditionExpression"]))
        for part in ("ExpressionAttributeValues", "ExpressionAttributeNames"):
            if part in shadow:
                kept = {k: v for k, v in shadow[part].items() if k in used}
                if kept:
                    shadow[part] = kept
                else:
                    shadow.pop(part)
        evaluated = self.inner.query(**shadow).get("Items", [])
        name = kwargs.get("IndexName")
        if name is None:
            total = sum(item_size(self._stored(table, i)) for i in evaluated)
            consistent = bool(kwargs.get("ConsistentRead"))
            operation = "query"
        else:
            index = schema.indexes[name]
            total = sum(item_size(schema.entry(index, self._stored(table, i))) for i in evaluated)
            consistent = bool(kwargs.get("ConsistentRead")) and not index.is_global
            operation = f"query:{name}"
        self.ledger.add(table, operation, read=read_units(total, consistent=consistent))
        return self.inner.query(**kwargs)

    # ------------------------------------------------------------------ writes
    def _put_item(self, **kwargs: Any) -> Any:
        table = kwargs["TableName"]
        old = self._stored(table, kwargs["Item"])
        try:
            result = self.inner.put_item(**kwargs)
        except ClientError:
            self._price_write(table, "put_item", old, None, ok=False)
            raise
        self._price_write(table, "put_item", old, kwargs["Item"], ok=True)
        self.remember(table, kwargs["Item"])
        return result

    def _update_item(self, **kwargs: Any) -> Any:
        table = kwargs["TableName"]
        old = self._stored(table, kwargs["Key"])
        try:
            result = self.inner.update_item(**kwargs)
        except ClientError:
            self._price_write(table, "update_item", old, None, ok=False)
            raise
        self._price_write(table, "update_item", old, self._reread(table, kwargs["Key"]), ok=True)
        return result

    def _delete_item(self, **kwargs: Any) -> Any:
        table = kwargs["TableName"]
        old = self._stored(table, kwargs["Key"])
        try:
            result = self.inner.delete_item(**kwargs)
        except ClientError:
            self._price_write(table, "delete_item", old, None, ok=False)
            raise
        self._price_write(table, "delete_item", old, None, ok=True)
        self.remember(table, None, kwargs["Key"])
        return result

    def _batch_write_item(self, **kwargs: Any) -> Any:
        before: list[tuple[str, Item, Item | None, Item | None]] = []
        for table, requests in kwargs["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    item = request["PutRequest"]["Item"]
                    before.append((table, item, self._stored(table, item), item))
                else:
                    key = request["DeleteRequest"]["Key"]
                    before.append((table, key, self._stored(table, key), None))
        result = self.inner.batch_write_item(**kwargs)
        for table, key, old, new in before:
            self._price_write(table, "batch_write_item", old, new, ok=True)
            self.remember(table, new, key)
        return result

    def _transact_write_items(self, **kwargs: Any) -> Any:
        actions: list[tuple[str, str, Item, Item | None]] = []
        for action in kwargs["TransactItems"]:
            ((kind, body),) = action.items()
            key = body["Item"] if kind == "Put" else body["Key"]
            actions.append(
                (kind, body["TableName"], copy.deepcopy(key), self._stored(body["TableName"], key))
            )
        try:
            result = self.inner.transact_write_items(**kwargs)
        except ClientError:
            for kind, table, _, old in actions:
                self._price_write(table, f"transact:{kind}", old, None, factor=2, ok=False)
            raise
        for kind, table, key, old in actions:
            if kind == "ConditionCheck":
                self.ledger.add(table, "transact:ConditionCheck", write=2 * write_units(item_size(old)))
                continue
            new = None if kind == "Delete" else key if kind == "Put" else self._reread(table, key)
            self._price_write(table, f"transact:{kind}", old, new, factor=2, ok=True)
            self.remember(table, new, key)
        return result
