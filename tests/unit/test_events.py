"""Events (pure parts and the emitter's mapping): a signature verifies only for its body, secret
and time window; filters match types and families; ids are stable per change; every stream change
maps to the event a receiver expects, with no text in it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agentmem.domain.events import Event, EventType, backoff_s, known_filter, sign, verify, wanted
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.ports import Change
from agentmem.services.events import change_event

NOW = datetime(2026, 12, 7, 20, 0, tzinfo=UTC)
S = Scope("acme", "alice")


@given(st.binary(max_size=500), st.text(min_size=1, max_size=40))
def test_a_signature_verifies_for_its_body_and_secret_only(body: bytes, secret: str) -> None:
    header = sign(secret, body, NOW)
    assert verify(secret, body, header, NOW)
    assert not verify(secret + "x", body, header, NOW)
    assert not verify(secret, body + b"x", header, NOW)


def test_a_signature_outside_the_tolerance_is_a_replay() -> None:
    header = sign("whsec_k", b"{}", NOW)
    assert verify("whsec_k", b"{}", header, NOW + timedelta(seconds=300))
    assert not verify("whsec_k", b"{}", header, NOW + timedelta(seconds=301))
    assert not verify("whsec_k", b"{}", header, NOW - timedelta(seconds=301))
    assert not verify("whsec_k", b"{}", "v1=" + header.split("v1=")[1], NOW)  # no timestamp
    rolled = header + ",v1=" + "0" * 64  # a secret being rolled: any v1 may match
    assert verify("whsec_k", b"{}", rolled, NOW)


def test_filters() -> None:
    assert wanted(("*",), "memory.deleted") and wanted(("memory.*",), "memory.created")
    assert not wanted(("memory.*",), "turn.processed") and not wanted(("turn.processed",), "turn.rejected")
    assert all(known_filter(f) for f in ("*", "turn.*", "memory.superseded", "user.erased"))
    assert not any(known_filter(f) for f in ("memory", "memories.*", "turn.done", ""))


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff_s(n, 5, 60) for n in range(1, 7)] == [5, 10, 20, 40, 60, 60]


def _record(status: Status = Status.ACTIVE, version: int = 1, **changes: object) -> MemoryRecord:
    fields: dict[str, object] = {
        "scope": S,
        "memory_id": "mem-1",
        "content": "住在青岛 Lives in Qingdao",
        "category": Category.FACT,
        "created_at": NOW,
        "valid_from": NOW,
        "status": status,
        "version": version,
        **changes,
    }
    return MemoryRecord(**fields)  # type: ignore[arg-type]


def test_each_stream_change_maps_to_the_event_a_receiver_expects() -> None:
    active, superseded = _record(), _record(Status.SUPERSEDED, 2, superseded_by="mem-2")
    cases = [
        (Change("INSERT", S, "mem-1", active, None), EventType.MEMORY_CREATED),
        (Change("MODIFY", S, "mem-1", superseded, active), EventType.MEMORY_SUPERSEDED),
        (Change("MODIFY", S, "mem-1", _record(Status.DELETED, 2), active), EventType.MEMORY_DELETED),
        (Change("REMOVE", S, "mem-1", None, active), EventType.MEMORY_DELETED),
        (
            Change("MODIFY", S, "mem-1", _record(Status.ACTIVE, 2), _record(Status.QUARANTINED)),
            EventType.MEMORY_CREATED,
        ),
    ]
    for change, expected in cases:
        event = change_event(change, NOW)
        assert event is not None and event.event_type is expected, change.event_name
        assert "Qingdao" not in event.body().decode() and "青岛" not in event.body().decode()
    assert change_event(Change("MODIFY", S, "mem-1", _record(version=2), active), NOW) is None  # reinforced
    assert change_event(Change("INSERT", S, "mem-1", _record(Status.QUARANTINED), None), NOW) is None
    event = change_event(cases[1][0], NOW)
    assert event is not None and event.detail["superseded_by"] == "mem-2"


def test_an_events_id_is_stable_per_change_and_its_body_round_trips() -> None:
    one = Event(EventType.MEMORY_CREATED, "acme", "alice", "mem-1", NOW, {"memory_id": "mem-1"}, 3)
    later = Event(EventType.MEMORY_CREATED, "acme", "alice", "mem-1", NOW + timedelta(hours=1), {}, 3)
    assert one.event_id == later.event_id  # a replay of the same change, announced later
    assert one.event_id != Event(EventType.MEMORY_CREATED, "acme", "alice", "mem-1", NOW, {}, 4).event_id
    assert one.event_id != Event(EventType.MEMORY_CREATED, "acme", "bob", "mem-1", NOW, {}, 3).event_id
    assert Event.from_json(json.loads(one.body())) == one
