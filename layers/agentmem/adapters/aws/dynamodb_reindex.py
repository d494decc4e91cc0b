""":class:`DynamoReindexJournal`, the :class:`~agentmem.ports.ReindexJournal` of the AWS backend:
items of the memory table, over its table handle (docs/aws.md, "Changing the embedding model").

* ``RIX#<model tag>#<memory_id>`` in the scope's partition — a staged vector: ``version``,
  ``content_hash``, ``embedding_f16`` (the store's float16 bytes, so the switch writes the very
  bytes that were staged) and a ``ttl`` (:data:`STAGED_TTL`: an abandoned reindex goes by
  itself). ``<model tag>`` is 12 hex characters of a BLAKE2b of the model id, so two reindexes
  never read each other's vectors. In the scope's partition, so ``erase_scope`` (which deletes
  the partition) removes them with the user; the stream filter and the codec skip them, as they
  skip every item that is not ``MEM#``; listings read ``MEM#`` keys only.
* ``REINDEX#<model tag>`` / ``<scope key>`` — the scopes staged, with when each was listed
  (``listed_us``), walked by the sweep of erased scopes (an erased scope's partition is gone, so
  the list lives outside it).
* ``REINDEX`` / ``MODEL#<model tag>`` — the progress (:class:`~agentmem.ports.ReindexProgress`
  as JSON), written under ``attribute_not_exists(pk) OR revision = :read``: a run that lost the
  race stops with VersionConflict.

Staged vectors are written with ``BatchWriteItem`` (25 a request, unprocessed ones retried) and
read with a strongly consistent ``BatchGetItem``.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from agentmem.adapters.aws.dynamodb_base import (
    ConditionFailed,
    DynamoTable,
    Item,
    decode_cursor,
    encode_cursor,
    n,
    number,
    s,
    text,
)
from agentmem.adapters.aws.dynamodb_bookkeeping import epoch_us, item_key
from agentmem.adapters.aws.dynamodb_schema import TTL_ATTRIBUTE
from agentmem.adapters.codec import EMBEDDING_F16, embedding_to_f16_bytes, scope_from_partition_key
from agentmem.domain.models import Scope
from agentmem.errors import StoreUnavailable, VersionConflict
from agentmem.ports import ReindexProgress, StagedVector

STAGED_PREFIX = "RIX#"
PROGRESS_PK = "REINDEX"
STAGED_TTL = timedelta(days=30)
BATCH_WRITE_SIZE = 25
UNPROCESSED_RETRIES = 5
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DATES = ("pass_started_at", "updated_at")


def model_tag(model_id: str) -> str:
    return hashlib.blake2b(model_id.encode("utf-8"), digest_size=6).hexdigest()


def _from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


class DynamoReindexJournal:
    """:class:`agentmem.ports.ReindexJournal` of ``model_id`` in the memory table (module docstring)."""

    def __init__(
        self,
        table: DynamoTable,
        model_id: str,
        *,
        clock: Callable[[], datetime],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._t = table
        self._model = model_id
        self._tag = model_tag(model_id)
        self._clock = clock
        self._sleep = sleep

    @property
    def model_id(self) -> str:
        return self._model

    def _sk(self, memory_id: str) -> str:
        return f"{STAGED_PREFIX}{self._tag}#{memory_id}"

    # ------------------------------------------------------------------ staged vectors

    def staged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, StagedVector]:
        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return {}
        found: dict[str, StagedVector] = {}
        prefix = self._sk("")
        for item in self._t.batch_get([item_key(scope, self._sk(m)) for m in wanted], consistent=True):
            data = item.get(EMBEDDING_F16, {}).get("B")
            if data is None:
                continue
            memory_id = text(item, "sk").removeprefix(prefix)
            vector = tuple(float(x) for x in np.frombuffer(bytes(data), dtype="<f2"))
            found[memory_id] = StagedVector(
                memory_id, number(item, "version"), text(item, "content_hash"), vector
            )
        return found

    def keep(self, scope: Scope, rows: Sequence[StagedVector]) -> None:
        expires = n(int((self._clock() + STAGED_TTL).timestamp()))
        requests = [
            {
                "PutRequest": {
                    "Item": {
                        **item_key(scope, self._sk(row.memory_id)),
                        "version": n(row.version),
                        "content_hash": s(row.content_hash),
                        EMBEDDING_F16: {"B": embedding_to_f16_bytes(row.vector)},
                        TTL_ATTRIBUTE: expires,
                    }
                }
            }
            for row in rows
        ]
        self._batch_write(requests)

    def _batch_write(self, requests: builtins.list[dict[str, Any]]) -> None:
        for start in range(0, len(requests), BATCH_WRITE_SIZE):
            pending = requests[start : start + BATCH_WRITE_SIZE]
            for attempt in range(UNPROCESSED_RETRIES + 1):
                result = self._t.call("batch_write_item", table=False, RequestItems={self._t.name: pending})
                pending = list((result.get("UnprocessedItems") or {}).get(self._t.name, []))
                if not pending:
                    break
                if attempt < UNPROCESSED_RETRIES:
                    self._sleep(min(0.05 * 2**attempt, 1.0))
            if pending:
                raise StoreUnavailable(
                    "dynamodb: staged vectors left unprocessed",
                    details={
                        "store": "dynamodb",
                        "operation": "batch_write_item",
                        "unprocessed": len(pending),
                    },
                )

    # ------------------------------------------------------------------ staged scopes

    def _scopes_pk(self) -> str:
        return f"{PROGRESS_PK}#{self._tag}"

    def mark_scope(self, scope: Scope, listed_at: datetime) -> None:
        self._t.call(
            "put_item",
            Item={"pk": s(self._scopes_pk()), "sk": s(scope.key), "listed_us": n(epoch_us(listed_at))},
        )

    def staged_scopes(
        self, limit: int, cursor: str | None = None
    ) -> tuple[builtins.list[tuple[Scope, datetime]], str | None]:
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": s(self._scopes_pk())},
            "ConsistentRead": True,
            "Limit": max(1, limit),
        }
        if cursor:
            kwargs["ExclusiveStartKey"] = decode_cursor(cursor, ("pk", "sk"))
        page = self._t.call("query", **kwargs)
        found = [
            (scope_from_partition_key(text(item, "sk")), _from_us(number(item, "listed_us")))
            for item in page.get("Items", [])
        ]
        last = page.get("LastEvaluatedKey")
        return found, encode_cursor(last) if last else None

    def discard_scope(self, scope: Scope) -> None:
        keys = self._t.partition_keys(scope.key, prefix=self._sk(""))
        self._t.batch_delete(keys)
        self._t.call("delete_item", Key={"pk": s(self._scopes_pk()), "sk": s(scope.key)})

    # ------------------------------------------------------------------ progress

    def _progress_key(self) -> Item:
        return {"pk": s(PROGRESS_PK), "sk": s(f"MODEL#{self._tag}")}

    def progress(self) -> ReindexProgress | None:
        item = self._t.call("get_item", Key=self._progress_key(), ConsistentRead=True).get("Item")
        if not item:
            return None
        data = json.loads(text(item, "progress"))
        for name in _DATES:
            if data.get(name):
                data[name] = datetime.fromisoformat(data[name])
        data["revision"] = number(item, "revision")
        return ReindexProgress(**data)

    def save_progress(self, progress: ReindexProgress) -> ReindexProgress:
        if progress.model != self._model:
            raise ValueError(f"progress of {progress.model} in the journal of {self._model}")
        data = dataclasses.asdict(progress)
        for name in _DATES:
            if data.get(name) is not None:
                data[name] = data[name].isoformat()
        revision = progress.revision + 1
        data["revision"] = revision
        try:
            self._t.call(
                "put_item",
                Item={
                    **self._progress_key(),
                    "model_id": s(self._model),
                    "progress": s(json.dumps(data, sort_keys=True)),
                    "revision": n(revision),
                },
                ConditionExpression="attribute_not_exists(pk) OR revision = :read",
                ExpressionAttributeValues={":read": n(progress.revision)},
            )
        except ConditionFailed:
            raise VersionConflict(
                "another reindex run saved its progress meanwhile",
                details={"model": self._model, "revision": progress.revision},
            ) from None
        return dataclasses.replace(progress, revision=revision)
