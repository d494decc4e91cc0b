"""Where events are made (docs/events.md): one small emitter the services call where a change
happens, publishing through the :class:`~agentmem.webhook_ports.EventPublisher` port.

- turn outcomes (``turn.processed`` / ``turn.rejected``): the ingest service, once a turn's
  outcome is recorded;
- memory changes (``memory.created`` / ``memory.superseded`` / ``memory.deleted``): from the
  store's change stream, after the projector applied the change (the DynamoDB stream, the
  embedded store's outbox). The stream is the outbox: a change committed is a change announced,
  by construction; a replay announces it again under the same event id;
- ``user.erased``: the admin service's erase, after its audit line.

Nothing here carries text: ids, the scope, counts and reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain.events import Detail, Event, EventType
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.ports import Change
from agentmem.services.outcome import TurnOutcome
from agentmem.webhook_ports import EventPublisher


class NoEvents:
    """The publisher of a deployment that publishes none (AWS without an event bus)."""

    def publish(self, events: Sequence[Event]) -> None:
        return None


@dataclass
class EventEmitter:
    publisher: EventPublisher

    def turn(self, scope: Scope, message_id: str, status: str, now: datetime, detail: Detail) -> None:
        """A turn's outcome: ``rejected`` is ``turn.rejected``, anything else ``turn.processed``."""
        kind = EventType.TURN_REJECTED if status == "rejected" else EventType.TURN_PROCESSED
        event = Event(kind, scope.tenant_id, scope.user_id, message_id, now, {"status": status, **detail})
        self.publisher.publish([event])

    def change(self, change: Change, now: datetime) -> None:
        """A change of the source of truth, as its stream reports it (one event or none)."""
        event = change_event(change, now)
        if event is not None:
            self.publisher.publish([event])

    def erased(self, scope: Scope, now: datetime, detail: Detail) -> None:
        self.publisher.publish(
            [Event(EventType.USER_ERASED, scope.tenant_id, scope.user_id, scope.user_id, now, detail)]
        )


def announced(outcome: TurnOutcome) -> Detail:
    """What a turn event tells of its outcome: the ids it wrote and superseded, counts, reasons
    (codes such as ``erased`` or ``injection:...``, never text)."""
    detail: Detail = {
        "written": list(outcome.written),
        "superseded": list(outcome.superseded),
        "reinforced": len(outcome.reinforced),
        "quarantined": len(outcome.quarantined),
    }
    if outcome.reasons:
        detail["reasons"] = [r[:80] for r in outcome.reasons]
    return detail


def change_event(change: Change, now: datetime) -> Event | None:
    """The event a stream change announces: a new active record is ``memory.created``; a record
    that became superseded ``memory.superseded`` (with the id that replaced it); one deleted or
    removed ``memory.deleted``. Other changes (reinforcement, a layer, quarantine) announce none."""
    new, old = change.new, change.old
    scope = change.scope
    if change.event_name == "REMOVE" or new is None:
        version = old.version + 1 if old is not None else 0
        return _memory(EventType.MEMORY_DELETED, scope, change.memory_id, version, now, {"reason": "removed"})
    was = old.status if old is not None else None
    if new.status is Status.ACTIVE and (old is None or was is not Status.ACTIVE):
        return _memory(EventType.MEMORY_CREATED, scope, change.memory_id, new.version, now, _about(new))
    if new.status is Status.SUPERSEDED and was is not Status.SUPERSEDED:
        detail: Detail = {**_about(new), "reason": "superseded"}
        if new.superseded_by:
            detail["superseded_by"] = new.superseded_by
        return _memory(EventType.MEMORY_SUPERSEDED, scope, change.memory_id, new.version, now, detail)
    if new.status is Status.DELETED and was is not Status.DELETED:
        return _memory(
            EventType.MEMORY_DELETED, scope, change.memory_id, new.version, now, {"reason": "deleted"}
        )
    return None


def _about(record: MemoryRecord) -> Detail:
    return {"category": record.category.value, "layer": record.layer.value}


def _memory(
    kind: EventType, scope: Scope, memory_id: str, version: int, now: datetime, detail: Detail
) -> Event:
    return Event(
        kind, scope.tenant_id, scope.user_id, memory_id, now, {"memory_id": memory_id, **detail}, version
    )
