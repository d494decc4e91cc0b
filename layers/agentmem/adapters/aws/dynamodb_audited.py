""":class:`agentmem.ports.AuditedWrites` on DynamoDB: a memory write and its audit lines in one
``TransactWriteItems`` spanning the memory and the audit tables (DynamoDB transactions may span
tables of one account and region), so a function that dies between the two can leave neither a
change without its line nor a line without its change.

The audit lines are plain puts inside the transaction: a line's key is fresh (a timed id) unless
the caller named the event, and a retried transaction that names it writes the same line again.
IAM: ``dynamodb:PutItem`` on the audit table, which every function has
(``tests/infra/test_infra_grants_cover_calls.py`` checks it from the calls).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmem.adapters.aws.dynamodb_audit import audit_item
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.domain.models import AuditEvent, MemoryRecord
from agentmem.ports import Put


class DynamoAuditedWrites:
    """The memory store's transactions, carrying the audit table's lines."""

    def __init__(self, store: DynamoMemoryStore, audit_table: str) -> None:
        self._store = store
        self._audit_table = audit_table

    def create_audited(self, record: MemoryRecord, events: Sequence[AuditEvent]) -> None:
        self.transact_audited([Put(record, None)], events)

    def transact_audited(self, puts: Sequence[Put], events: Sequence[AuditEvent]) -> None:
        lines = [{"Put": {"TableName": self._audit_table, "Item": audit_item(e)}} for e in events]
        self._store.transact(puts, also=lines)


__all__ = ["DynamoAuditedWrites"]
