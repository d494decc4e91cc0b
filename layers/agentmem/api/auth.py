"""Who is calling: the principal, from the request's authorizer context only (the API Gateway
authorizer in AWS; the local server's loopback/token check on a laptop). A request without a
tenant and user is refused (401); a body or path naming another tenant or user is refused (403).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentmem.domain.models import Scope
from agentmem.errors import Forbidden, Unauthorized

# An authorizer that states no permissions grants read and write (not memory:permanent).
DEFAULT_PERMISSIONS = frozenset({"memory:read", "memory:write"})


@dataclass(frozen=True, slots=True)
class Principal:
    scope: Scope
    permissions: frozenset[str]
    principal_id: str

    def can(self, permission: str) -> bool:
        return permission in self.permissions or "admin" in self.permissions

    def require(self, permission: str) -> None:
        if not self.can(permission):
            raise Forbidden(f"this call needs the {permission!r} permission")

    def same_scope(self, tenant_id: str | None, user_id: str | None) -> None:
        """Refuse a body or path that names another tenant or user than the caller's."""
        if tenant_id is not None and tenant_id != self.scope.tenant_id:
            raise Forbidden("the body names another tenant than the caller's")
        if user_id is not None and user_id != self.scope.user_id:
            raise Forbidden("the body names another user than the caller's")


def principal_from(authorizer: Mapping[str, Any] | None) -> Principal:
    """The caller described by an authorizer context (custom authorizer keys ``tenant_id``,
    ``user_id``, ``permissions``, ``principal_id``, or Cognito ``claims``). Raises Unauthorized."""
    context: dict[str, Any] = dict(authorizer or {})
    claims = context.get("claims") if isinstance(context.get("claims"), dict) else {}
    tenant = context.get("tenant_id") or (claims or {}).get("custom:tenant_id")
    user = context.get("user_id") or (claims or {}).get("sub")
    if not tenant or not user:
        raise Unauthorized("no tenant and user in the request's authorizer context")
    try:
        scope = Scope(str(tenant), str(user))
    except ValueError as exc:
        raise Unauthorized(f"invalid principal: {exc}") from exc
    raw_permissions = context.get("permissions")
    if raw_permissions is None:
        permissions = DEFAULT_PERMISSIONS
    else:
        permissions = frozenset(p.strip() for p in str(raw_permissions).split(",") if p.strip())
    return Principal(scope, permissions, str(context.get("principal_id") or user))
