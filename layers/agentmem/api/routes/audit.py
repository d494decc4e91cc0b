"""``GET /v1/audit``: the caller's append-only audit trail (ids, actions, reasons — never content)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router

from agentmem.api.openapi import responses
from agentmem.api.params import Query
from agentmem.api.request import RequestContext
from agentmem.domain.models import AuditAction
from agentmem.wire.models import AuditEventOut, AuditOut

router = Router()
req = RequestContext(router)


@router.get(
    "/v1/audit",
    summary="The caller's audit trail, newest first",
    responses=responses(200, AuditOut, "Audit events", 403, 422, 503),
)
def get_audit(
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    action: Annotated[AuditAction | None, Query()] = None,
) -> AuditOut:
    p = req.principal()
    events = req.container().admin.audit_trail(p.scope, limit=limit, action=action.value if action else None)
    return AuditOut(
        events=[
            AuditEventOut(
                id=e.event_id,
                action=e.action,
                at=e.at,
                memory_id=e.memory_id,
                reason=e.reason,
                details=e.details,
            )
            for e in events
        ]
    )
