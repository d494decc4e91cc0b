"""AuditLog contract, parametrised over ``embedded`` (SQLite), ``aws`` (DynamoDB on moto in-process, the
audit table), ``engine`` (the same on the DynamoDB engine over HTTP, :mod:`support.engines`) and
``fake`` (the in-memory fake of the service unit tests).

How each adapter keeps the trail append-only (SQLite triggers, DynamoDB conditional puts and an
IAM role without update or delete) is checked in the adapters' own files.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.embedded.audit_log import SqliteAuditLog
from agentmem.domain.models import AuditEvent, Scope
from agentmem.ports import AuditLog
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.memory import InMemoryAuditLog

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def audit(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AuditLog]:
    if request.param == "embedded":
        adapter = SqliteAuditLog(tmp_path / "audit.sqlite3")
        yield adapter
        adapter.close()
    elif request.param in ("aws", "engine"):
        with dynamodb_tables(request.param) as tables:
            yield DynamoAuditLog(tables.audit_table, client=tables.lazy())
    else:
        yield InMemoryAuditLog()


def test_list_is_newest_first_filters_by_action_and_is_scoped(audit: AuditLog) -> None:
    for i, action in enumerate(["written", "superseded", "written", "erased"]):
        audit.append(AuditEvent(S1, action, T0 + timedelta(minutes=i), memory_id=f"m{i}", details={"n": i}))
    audit.append(AuditEvent(S2, "written", T0))
    events = audit.list(S1)
    assert [e.action for e in events] == ["erased", "written", "superseded", "written"]
    assert events[0].details == {"n": 3} and events[0].memory_id == "m3"
    assert all(e.scope == S1 for e in events)
    assert all(e.event_id and e.event_id[:13].isdigit() for e in events)  # generated, time-sortable
    assert [e.memory_id for e in audit.list(S1, action="written")] == ["m2", "m0"]
    assert [e.action for e in audit.list(S1, limit=2)] == ["erased", "written"]
    assert audit.list(S1, limit=0) == []
    assert audit.list(S1, action="unknown") == []
    assert [e.scope for e in audit.list(S2)] == [S2]
    assert audit.list(Scope("nobody", "nobody")) == []


def test_the_limit_counts_matching_events_only(audit: AuditLog) -> None:
    """A page of other actions newer than the wanted ones must not hide them."""
    for i in range(3):
        audit.append(AuditEvent(S1, "user_erased", T0 + timedelta(minutes=i), details={"i": i}))
    for i in range(25):
        audit.append(AuditEvent(S1, "context_injected", T0 + timedelta(hours=1, minutes=i)))
    found = audit.list(S1, limit=2, action="user_erased")
    assert [e.details for e in found] == [{"i": 2}, {"i": 1}]


def test_an_event_round_trips_and_ties_order_by_event_id(audit: AuditLog) -> None:
    audit.append(
        AuditEvent(
            S1,
            "redacted",
            T0 + timedelta(seconds=1),
            reason="email,phone",
            details={"message_id": "m1", "kinds": ["email"]},
        )
    )
    audit.append(AuditEvent(S1, "patched", T0, event_id="e2", details={"actor": "管理员"}))
    audit.append(AuditEvent(S1, "patched", T0, event_id="e1"))
    first, second, third = audit.list(S1)
    assert (second.event_id, third.event_id) == ("e2", "e1")  # same instant: larger id first
    assert second.details == {"actor": "管理员"} and second.reason is None and second.memory_id is None
    assert third.details == {}
    assert (first.action, first.reason, first.at) == ("redacted", "email,phone", T0 + timedelta(seconds=1))
    assert first.details == {"message_id": "m1", "kinds": ["email"]}


def test_events_without_an_id_are_never_merged(audit: AuditLog) -> None:
    for _ in range(3):
        audit.append(AuditEvent(S1, "written", T0, memory_id="m1"))
    assert len({e.event_id for e in audit.list(S1)}) == 3


def test_append_with_an_existing_id_changes_nothing(audit: AuditLog) -> None:
    audit.append(AuditEvent(S1, "written", T0, reason="first", event_id="e1"))
    audit.append(AuditEvent(S1, "deleted", T0 + timedelta(minutes=1), reason="second", event_id="e1"))
    assert [(e.action, e.reason) for e in audit.list(S1)] == [("written", "first")]
