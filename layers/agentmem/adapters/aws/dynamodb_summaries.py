"""DynamoDB scene logs, scene summaries and the latest session (:class:`~agentmem.ports.SessionSummaryStore`).

Items of the *session* table, per ``pk = scope.key`` (beside the turn log's and the runtime
state's): ``SCENE#<session_id>`` the scene log (string sets of message, memory and withheld message
ids, grown with ``ADD``, so a replayed turn changes nothing; the first and the last recorded time; ``ttl`` = last
turn + retention, like the L0 turns), ``SUMMARY#<session_id>`` one summary as JSON and
``LATEST#`` the scope's latest session and the one before it. Summaries and the marker hold ids,
not text, and carry no TTL: the next session may come long after the turns expired; erasing the
user removes them.

The marker moves with a conditional put (the session it replaces must still be the one read), so
two sessions' turns arriving together cannot both report the same switch; a lost race is re-read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
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
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.domain.models import Scope
from agentmem.domain.summary import MAX_SCENE_TURNS, LatestSession, SceneLog, SceneSummary

log = logging.getLogger(__name__)

SCENE, SUMMARY, LATEST = "SCENE#", "SUMMARY#", "LATEST#"
_MOVE_TRIES = 3


def _key(scope: Scope, sk: str) -> Item:
    return {"pk": s(scope.key), "sk": s(sk)}


class DynamoSummaryStore:
    """:class:`agentmem.ports.SessionSummaryStore` over the session table."""

    def __init__(
        self,
        table_name: str,
        *,
        retention: timedelta = timedelta(days=30),
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        meter: CapacityMeter | None = None,
    ) -> None:
        lazy = dynamodb_client(client, region)
        self._t = DynamoTable(lazy, table_name, store="dynamodb-session", meter=meter)
        self._retention = retention

    def record_turn(
        self,
        scope: Scope,
        session_id: str,
        message_id: str,
        at: datetime,
        memory_ids: Sequence[str],
        withheld: Sequence[str] = (),
    ) -> str | None:
        values: dict[str, Any] = {
            ":m": {"SS": [message_id]},
            ":mid": s(message_id),
            ":at": s(format_sortable(at)),
            ":max": n(MAX_SCENE_TURNS),
            ":ttl": n(int((at + self._retention).timestamp())),
        }
        add = "ADD message_ids :m"
        if memory_ids:
            values[":ids"] = {"SS": sorted(set(memory_ids))}
            add += ", memory_ids :ids"
        if withheld:
            values[":w"] = {"SS": sorted(set(withheld))}
            add += ", withheld :w"
        try:
            self._t.call(
                "update_item",
                Key=_key(scope, SCENE + session_id),
                UpdateExpression=f"{add} SET started_at = if_not_exists(started_at, :at), ended_at = :at, #ttl = :ttl",
                ConditionExpression=(
                    "attribute_not_exists(message_ids) OR size(message_ids) < :max OR contains(message_ids, :mid)"
                ),
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues=values,
            )
        except ConditionFailed:
            log.info("summaries.scene_full", extra={"session_id": session_id})
        return self._move_latest(scope, session_id)

    def _move_latest(self, scope: Scope, session_id: str) -> str | None:
        for _ in range(_MOVE_TRIES):
            item = self._t.call("get_item", Key=_key(scope, LATEST), ConsistentRead=True).get("Item")
            before = text(item, "session_id") if item else None
            if before == session_id:
                return None
            new: Item = {**_key(scope, LATEST), "session_id": s(session_id)}
            if before is not None:
                new["previous"] = s(before)
            condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
            if before is not None:
                condition = {
                    "ConditionExpression": "session_id = :before",
                    "ExpressionAttributeValues": {":before": s(before)},
                }
            try:
                self._t.call("put_item", Item=new, **condition)
            except ConditionFailed:
                continue  # another turn moved it meanwhile: read it again
            return before
        return None

    def scene(self, scope: Scope, session_id: str) -> SceneLog | None:
        item = self._t.call("get_item", Key=_key(scope, SCENE + session_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        message_ids = item.get("message_ids", {}).get("SS", ())
        return SceneLog(
            session_id=session_id,
            started_at=parse_datetime(text(item, "started_at")),
            ended_at=parse_datetime(text(item, "ended_at")),
            message_ids=frozenset(message_ids),
            memory_ids=frozenset(item.get("memory_ids", {}).get("SS", ())),
            withheld=frozenset(item.get("withheld", {}).get("SS", ())) & frozenset(message_ids),
        )

    def latest(self, scope: Scope) -> LatestSession | None:
        item = self._t.call("get_item", Key=_key(scope, LATEST), ConsistentRead=True).get("Item")
        if not item:
            return None
        return LatestSession(text(item, "session_id"), text(item, "previous") or None)

    def put_summary(self, scope: Scope, summary: SceneSummary) -> None:
        self._t.call(
            "put_item",
            Item={
                **_key(scope, SUMMARY + summary.session_id),
                "summary": s(json.dumps(summary.to_dict(), ensure_ascii=False, separators=(",", ":"))),
            },
        )

    def summary(self, scope: Scope, session_id: str) -> SceneSummary | None:
        item = self._t.call("get_item", Key=_key(scope, SUMMARY + session_id), ConsistentRead=True).get(
            "Item"
        )
        if not item:
            return None
        try:
            return SceneSummary.from_dict(json.loads(text(item, "summary", "{}")))
        except (ValueError, KeyError, TypeError):
            log.warning("summaries.unreadable_row", extra={"store": "dynamodb", "session_id": session_id})
            return None

    def erase_scope(self, scope: Scope) -> int:
        keys = [k for prefix in (SCENE, SUMMARY, LATEST) for k in self._t.partition_keys(scope.key, prefix)]
        self._t.batch_delete(keys)
        return len(keys)
