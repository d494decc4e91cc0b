"""The AWS event publisher (:class:`~agentmem.webhook_ports.EventPublisher`): ``events:PutEvents``
on the stack's bus, ten entries a request (the API's limit). Source ``agentmem``, detail-type the
event type, detail the event's JSON, so a rule matches on type and on ``detail.tenant_id``
(docs/events.md). The bus's rules deliver to API destinations, retry and dead-letter; nothing
here sends HTTP."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client, translate
from agentmem.domain.events import Event
from agentmem.errors import StoreUnavailable

SOURCE = "agentmem"
PER_REQUEST = 10


class EventBridgePublisher:
    def __init__(self, bus_name: str, *, region: str | None = None, client: Any = None) -> None:
        self.bus_name = bus_name
        self._client: LazyClient[Any] = LazyClient(lambda: client or boto_client("events", region=region))

    def publish(self, events: Sequence[Event]) -> None:
        for start in range(0, len(events), PER_REQUEST):
            chunk = events[start : start + PER_REQUEST]
            entries = [
                {
                    "Source": SOURCE,
                    "DetailType": e.event_type.value,
                    "Detail": json.dumps(e.to_json(), ensure_ascii=False),
                    "EventBusName": self.bus_name,
                    "Time": e.at,
                }
                for e in chunk
            ]
            try:
                answer = self._client.get().put_events(Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                raise translate(exc, store="eventbridge", operation="PutEvents") from exc
            failed = int(answer.get("FailedEntryCount") or 0)
            if failed:
                codes = sorted(
                    {str(r.get("ErrorCode")) for r in answer.get("Entries", []) if r.get("ErrorCode")}
                )
                raise StoreUnavailable(
                    f"eventbridge refused {failed} of {len(entries)} events",
                    details={"store": "eventbridge", "operation": "PutEvents", "codes": codes},
                )
