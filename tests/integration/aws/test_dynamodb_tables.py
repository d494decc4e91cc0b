"""DynamoDB turn log, runtime state and audit trail on moto: the same behaviour as the embedded
ones (tests/integration/test_local_turn_log.py), plus the item shapes the tables rely on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from awshelpers import REGION, Moto
from botocore.stub import ANY, Stubber

from agentmem.adapters.aws.dynamodb_tables import DynamoAuditLog, DynamoRuntimeState, DynamoTurnLog
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain.models import AuditEvent, Scope
from agentmem.ports import RawTurnRecord

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def raw(message_id: str, minute: int, session: str = "s1", **extra: object) -> RawTurnRecord:
    return RawTurnRecord(
        message_id=message_id,
        session_id=session,
        at=T0 + timedelta(minutes=minute),
        user=f"user {message_id}",
        assistant=f"assistant {message_id}",
        trace_id=f"tr-{message_id}",
        extra=dict(extra),
    )


@pytest.fixture
def log(moto: Moto) -> DynamoTurnLog:
    return DynamoTurnLog(moto.session_table, client=moto.lazy(), retention=timedelta(days=30))


def test_append_is_idempotent_per_message_and_carries_a_ttl(log: DynamoTurnLog, moto: Moto) -> None:
    assert log.append_raw(S1, raw("m1", 0, lang="zh")) is True
    assert log.append_raw(S1, raw("m1", 0)) is False
    assert log.append_raw(S2, raw("m1", 0)) is True
    assert log.recent_turns(S1, "s1", 10) == [raw("m1", 0, lang="zh")]
    item = moto.dynamodb.get_item(
        TableName=moto.session_table, Key={"pk": {"S": S1.key}, "sk": {"S": "TURN#m1"}}
    )["Item"]
    assert item["ttl"] == {"N": str(int((T0 + timedelta(days=30)).timestamp()))}


def test_session_window_is_the_last_turns_oldest_first(log: DynamoTurnLog) -> None:
    for i in (3, 0, 2, 1, 4):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S1, raw("x", 10, session="s2"))
    log.append_raw(S1, raw("y", 10, session="s1#2"))  # a session id that extends another one
    log.append_raw(S2, raw("z", 10))
    assert [t.message_id for t in log.recent_turns(S1, "s1", 3)] == ["m2", "m3", "m4"]
    assert [t.message_id for t in log.recent_turns(S1, "s1", 10)] == ["m0", "m1", "m2", "m3", "m4"]
    assert [t.message_id for t in log.recent_turns(S1, "s2", 10)] == ["x"]
    assert [t.message_id for t in log.recent_turns(S2, "s1", 10)] == ["z"]
    assert log.recent_turns(S1, "s1", 0) == [] and log.recent_turns(S1, "unknown", 5) == []


def test_same_timestamp_keeps_arrival_order(log: DynamoTurnLog) -> None:
    for name in ("b", "a", "c"):
        log.append_raw(S1, raw(name, 0))
    assert [t.message_id for t in log.recent_turns(S1, "s1", 2)] == ["a", "c"]


def test_processed_marks_and_erase(log: DynamoTurnLog) -> None:
    assert log.is_processed(S1, "m1") is False
    log.mark_processed(S1, "m1", T0, {"written": ["mem-1"], "status": "accepted"})
    log.mark_processed(S1, "m1", T0, {"written": ["mem-1"], "status": "accepted"})
    assert log.is_processed(S1, "m1") and not log.is_processed(S2, "m1")
    assert log.processed_outcome(S1, "m1") == {"written": ["mem-1"], "status": "accepted"}
    for i in range(3):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S2, raw("m0", 0))
    assert log.erase_scope(S1) == 3
    assert log.recent_turns(S1, "s1", 10) == [] and log.is_processed(S1, "m1") is False
    assert [t.message_id for t in log.recent_turns(S2, "s1", 10)] == ["m0"]
    assert log.append_raw(S1, raw("m0", 0)) is True






def test_audit_log_is_newest_first_and_filters_by_action(moto: Moto) -> None:
    audit = DynamoAuditLog(moto.audit_table, client=moto.lazy())
    for i, action in enumerate(["write", "supersede", "write", "erase"]):
        audit.append(AuditEvent(S1, action, T0 + timedelta(minutes=i), memory_id=f"m{i}", details={"n": i}))
    audit.append(AuditEvent(S2, "write", T0))
    events = audit.list(S1)
    assert [e.action for e in events] == ["erase", "write", "supersede", "write"]
    assert events[0].details == {"n": 3} and events[0].memory_id == "m3"
    assert all(e.event_id and e.event_id[:13].isdigit() for e in events)
    assert [e.memory_id for e in audit.list(S1, action="write")] == ["m2", "m0"]
    assert len(audit.list(S1, limit=2)) == 2 and [e.scope for e in audit.list(S2)] == [S2]


def test_audit_append_with_an_existing_id_changes_nothing(moto: Moto) -> None:
    audit = DynamoAuditLog(moto.audit_table, client=moto.lazy())
    audit.append(AuditEvent(S1, "write", T0, reason="first", event_id="e1"))
    audit.append(AuditEvent(S1, "delete", T0 + timedelta(minutes=1), reason="second", event_id="e1"))
    assert [(e.action, e.reason) for e in audit.list(S1)] == [("write", "first")]


def test_audit_writes_are_conditional_puts_only() -> None:
    """Append-only at the API level: the adapter issues PutItem with attribute_not_exists and
    Query, nothing else (the functions' IAM role grants exactly that)."""
    client = boto3.client("dynamodb", region_name=REGION)
    audit = DynamoAuditLog("agentmem-audit", client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_response(
            "put_item",
            {},
            {"TableName": "agentmem-audit", "Item": ANY, "ConditionExpression": "attribute_not_exists(pk)"},
        )
        audit.append(AuditEvent(S1, "write", T0, event_id="e1"))
        stub.assert_no_pending_responses()
