"""One line of the audit trail from the write paths: ids, an action and a reason, never content."""

from __future__ import annotations

from datetime import datetime

from agentmem.domain.models import AuditAction, AuditEvent, Scope
from agentmem.ports import AuditLog


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
    details: dict[str, object] = {"message_id": message_id} if message_id else {}
    audit.append(
        AuditEvent(scope=scope, action=action, at=at, memory_id=memory_id, reason=reason, details=details)
    )
