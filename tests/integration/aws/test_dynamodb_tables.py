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

from agentmem.adapters.aws.dynamodb_tables import DynamoAuditLog, DynamoTurnLog
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
