"""On DynamoDB too a memory write and its audit lines are one transaction across the memory and
the audit tables: a cancelled write leaves no line, a done one leaves both."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from awshelpers import Moto

from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.aws.dynamodb_audited import DynamoAuditedWrites
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.domain.models import AuditAction, AuditEvent, Category, MemoryRecord, Scope, Status
from agentmem.errors import VersionConflict
from agentmem.ports import Put

S = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def rec(memory_id: str) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=f"content of {memory_id}",
        category=Category.FACT,
        embedding=(0.25, -0.5, 0.125, 1.0),
        embedding_model="hash-test",
        created_at=T0,
    )


def line(action: AuditAction, memory_id: str) -> AuditEvent:
    return AuditEvent(scope=S, action=action, at=T0, memory_id=memory_id, reason=None, details={})


@pytest.fixture
def parts(moto: Moto) -> tuple[DynamoMemoryStore, DynamoAuditedWrites, DynamoAuditLog]:
    store = DynamoMemoryStore(moto.memory_table, client=moto.lazy(), clock=lambda: T0, sleep=lambda _: None)
    return (
        store,
        DynamoAuditedWrites(store, moto.audit_table),
        DynamoAuditLog(moto.audit_table, client=moto.lazy()),
    )


def test_a_create_and_its_line_land_together(
    parts: tuple[DynamoMemoryStore, DynamoAuditedWrites, DynamoAuditLog],
) -> None:
    store, audited, audit = parts
    audited.create_audited(rec("m1"), [line(AuditAction.WRITTEN, "m1")])
    assert store.get(S, "m1") is not None
    assert [(e.action, e.memory_id) for e in audit.list(S, 10)] == [(AuditAction.WRITTEN, "m1")]


def test_a_cancelled_write_leaves_no_line(
    parts: tuple[DynamoMemoryStore, DynamoAuditedWrites, DynamoAuditLog],
) -> None:
    store, audited, audit = parts
    store.create(rec("m1"))
    with pytest.raises(VersionConflict):
        audited.create_audited(rec("m1"), [line(AuditAction.WRITTEN, "m1")])
    old = store.get(S, "m1")
    assert old is not None
    superseded = replace(old, status=Status.SUPERSEDED)
    with pytest.raises(VersionConflict):  # a stale version: the whole transaction is cancelled
        audited.transact_audited(
            [Put(rec("m2"), None), Put(superseded, old.version + 7)], [line(AuditAction.SUPERSEDED, "m1")]
        )
    assert store.get(S, "m2") is None and audit.list(S, 10) == []
    audited.transact_audited(
        [Put(rec("m2"), None), Put(superseded, old.version)], [line(AuditAction.SUPERSEDED, "m1")]
    )
    assert [e.action for e in audit.list(S, 10)] == [AuditAction.SUPERSEDED]
