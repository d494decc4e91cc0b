"""One line of the audit trail from the write paths: ids, an action and a reason, never content."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.ports import AuditedWrites, AuditLog, MemoryStore, Put


def append_audit(
    audit: AuditLog,
    scope: Scope,
    action: AuditAction,
    at: datetime,
    *,
    memory_id: str | None = None,
    reason: str | None = None,
    message_id: str | None = None,
) -> None:
    """Append one event; ``message_id`` (the turn or request it came from) goes in the details."""
    audit.append(audit_event(scope, action, at, memory_id=memory_id, reason=reason, message_id=message_id))


def audit_event(
    scope: Scope,
    action: AuditAction,
    at: datetime,
    *,
    memory_id: str | None = None,
    reason: str | None = None,
    message_id: str | None = None,
    details: dict[str, object] | None = None,
) -> AuditEvent:
    """One line of the trail (``message_id`` goes in the details)."""
    found: dict[str, object] = {"message_id": message_id} if message_id else {}
    return AuditEvent(
        scope=scope,
        action=action,
        at=at,
        memory_id=memory_id,
        reason=reason,
        details={**found, **(details or {})},
    )


def write_audited(
    store: MemoryStore,
    audit: AuditLog,
    audited: AuditedWrites | None,
    puts: Sequence[Put],
    events: Sequence[AuditEvent],
) -> None:
    """Write ``puts`` and append ``events``: in one transaction where the store keeps the trail
    (``audited``: the embedded store, whose trail is a table of its file), else the write and then
    the lines (DynamoDB: the audit table is another table). A single put goes as a create or an
    update, as the store's own methods would send it."""
    if audited is not None:
        audited.transact_audited(puts, events)
        return
    expected = puts[0].expected_version if len(puts) == 1 else None
    if len(puts) == 1 and expected is None:
        store.create(puts[0].record)
    elif len(puts) == 1 and expected is not None:
        store.update(puts[0].record, expected)
    else:
        store.transact(puts)
    for event in events:
        audit.append(event)
