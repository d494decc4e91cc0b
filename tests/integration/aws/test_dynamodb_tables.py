"""DynamoDB turn log and audit trail on moto: what only these adapters do (TTL attributes, an
audit trail written by conditional puts only; the session table shared with the runtime state is
checked in ``contracts/test_contract_runtime_state.py``). The TurnLog and AuditLog ports are checked on every implementation in
``contracts/test_contract_turn_log.py`` / ``test_contract_audit_log.py``."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest
from awshelpers import REGION, Moto
from botocore.stub import ANY, Stubber

from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain.models import AuditEvent, Scope
from support.turns import T0, raw

S1 = Scope("t1", "u1")


@pytest.fixture
def log(moto: Moto) -> DynamoTurnLog:
    return DynamoTurnLog(moto.session_table, client=moto.lazy(), retention=timedelta(days=30))


def test_turns_and_marks_carry_a_ttl_of_the_retention(log: DynamoTurnLog, moto: Moto) -> None:
    assert log.append_raw(S1, raw("m1", 0, lang="zh")) is True
    log.mark_processed(S1, "m1", T0 + timedelta(minutes=1), {"status": "accepted"})

    def ttl(sk: str) -> dict[str, str]:
        key = {"pk": {"S": S1.key}, "sk": {"S": sk}}
        return dict(moto.dynamodb.get_item(TableName=moto.session_table, Key=key)["Item"]["ttl"])

    assert ttl("TURN#m1") == {"N": str(int((T0 + timedelta(days=30)).timestamp()))}
    assert ttl("DONE#m1") == {"N": str(int((T0 + timedelta(days=30, minutes=1)).timestamp()))}


def test_audit_writes_are_conditional_puts_only() -> None:
    """Append-only at the API level: the adapter issues PutItem with attribute_not_exists and
    Query, nothing else (the functions' IAM role grants exactly that)."""
    client = boto3.client("dynamodb", region_name=REGION)
    audit = DynamoAuditLog("agentmem-audit", client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_response(
            "put_item",
            {},
            {
                "TableName": "agentmem-audit",
                "Item": ANY,
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnConsumedCapacity": "TOTAL",
            },
        )
        audit.append(AuditEvent(S1, "written", T0, event_id="e1"))
        stub.assert_no_pending_responses()


def test_an_event_without_an_id_is_one_write_unit_and_lists_among_the_older_layout(moto: Moto) -> None:
    """A fresh id needs no LSI copy: its time-ordered key (``AT#<at>#<id>``) orders the trail.
    Events with a caller's id keep ``EVT#<id>`` and the LSI, as every event did before; a
    listing merges the two orders."""
    from agentmem.adapters.aws.dynamodb_schema import audit_table_request
    from agentmem.adapters.codec import format_sortable
    from agentmem_dev.bench.dynamodb_units import RulesClient

    rules = RulesClient(moto.dynamodb, {moto.audit_table: audit_table_request(moto.audit_table)})
    audit = DynamoAuditLog(moto.audit_table, client=LazyClient(lambda: rules))
    audit.append(AuditEvent(S1, "context_injected", T0 + timedelta(minutes=2)))
    assert rules.ledger.totals() == (0.0, 1.0)  # the item only, no by_time entry
    rules.ledger.reset()
    audit.append(AuditEvent(S1, "patched", T0 + timedelta(minutes=1), event_id="e1"))
    assert rules.ledger.totals() == (0.0, 2.0)  # the item and its by_time entry
    # an event of the older layout (a fresh id under EVT# with at_sk), written before the change
    old_at = format_sortable(T0 + timedelta(minutes=3))
    moto.dynamodb.put_item(
        TableName=moto.audit_table,
        Item={
            "pk": {"S": S1.key},
            "sk": {"S": "EVT#old"},
            "at_sk": {"S": f"{old_at}#old"},
            "event_id": {"S": "old"},
            "tenant_id": {"S": S1.tenant_id},
            "user_id": {"S": S1.user_id},
            "action": {"S": "written"},
            "at": {"S": old_at},
            "details": {"S": "{}"},
        },
    )
    audit.append(AuditEvent(S1, "context_injected", T0))
    assert [e.action for e in audit.list(S1)] == [
        "written",
        "context_injected",
        "patched",
        "context_injected",
    ]
    assert [e.event_id for e in audit.list(S1, limit=2)] == ["old", audit.list(S1)[1].event_id]
    assert [e.at for e in audit.list(S1, limit=3, action="context_injected")] == [
        T0 + timedelta(minutes=2),
        T0,
    ]
    # a retry of an event with an id, at another time, is still the same event
    audit.append(AuditEvent(S1, "deleted", T0 + timedelta(hours=1), event_id="e1"))
    assert [e.action for e in audit.list(S1) if e.event_id == "e1"] == ["patched"]
