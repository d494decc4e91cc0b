"""API Gateway Lambda TOKEN authorizer: Cognito ID token in, agentmem principal out.

The ``Authorization: Bearer <jwt>`` header must carry an ID token of the stack's Cognito user
pool, issued to one of its app clients. The token's signature (RS256, the pool's JWKS), issuer,
audience, ``token_use == "id"`` and expiry are checked with PyJWT. The principal reaches the api
function as ``event.requestContext.authorizer``:

=============== ==================================================================
``tenant_id``   the user's ``custom:tenant_id`` attribute (admin-set, immutable)
``user_id``     the user's ``sub``
``permissions`` the user's ``custom:permissions`` attribute, comma separated
                (``memory:read,memory:write,memory:permanent,admin``); omitted when
                the attribute is unset, and the api then grants read + write
``principal_id`` ``cognito:username``
=============== ==================================================================

An invalid or expired token → ``Unauthorized`` (401). A valid token without a tenant → an
explicit Deny (403). The Allow policy covers every method under ``/v1/`` of the stage, so that a
cached decision (keyed on the token) serves the caller's other routes too.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

import jwt

log = logging.getLogger()
log.setLevel(os.environ.get("LOG_LEVEL", "INFO"))

ISSUER = os.environ.get("AUTH_ISSUER", "")
CLIENT_IDS = tuple(c for c in os.environ.get("AUTH_CLIENT_IDS", "").split(",") if c)
TENANT_CLAIM = "custom:tenant_id"
PERMISSIONS_CLAIM = "custom:permissions"
_PERMISSION = re.compile(r"^[a-z]+(:[a-z_]+)?$")
_jwks: jwt.PyJWKClient | None = None


class Unauthorized(Exception):
    """Raised with the exact message API Gateway maps to a 401."""

    def __init__(self) -> None:
        super().__init__("Unauthorized")


def _jwks_client() -> jwt.PyJWKClient:
    global _jwks
    if _jwks is None:
        _jwks = jwt.PyJWKClient(f"{ISSUER}/.well-known/jwks.json", cache_keys=True, lifespan=3600, timeout=5)
    return _jwks


def verify(token: str, *, key: Any = None) -> dict[str, Any]:
    """The token's claims when it is a valid ID token of the pool; raises otherwise."""
    signing_key = key if key is not None else _jwks_client().get_signing_key_from_jwt(token).key
    claims: dict[str, Any] = jwt.decode(
        token,
        signing_key,
        algorithms=["RS256"],
        audience=list(CLIENT_IDS),
        issuer=ISSUER,
        options={"require": ["exp", "iat", "iss", "aud", "sub", "token_use"]},
        leeway=30,
    )
    if claims.get("token_use") != "id":
        raise jwt.InvalidTokenError("not an ID token")
    return claims


def context_from_claims(claims: dict[str, Any]) -> dict[str, str]:
    """The authorizer context the api function reads (flat strings only: API Gateway's rule)."""
    context = {
        "tenant_id": str(claims.get(TENANT_CLAIM) or ""),
        "user_id": str(claims.get("sub") or ""),
        "principal_id": str(claims.get("cognito:username") or claims.get("sub") or ""),
    }
    raw = claims.get(PERMISSIONS_CLAIM)
    if raw is not None:
        permissions = [p.strip() for p in str(raw).split(",") if _PERMISSION.match(p.strip())]
        context["permissions"] = ",".join(permissions)
    return context


def api_resource(method_arn: str) -> str:
    """``arn:aws:execute-api:region:account:api/stage/VERB/path`` → every method under /v1/."""
    arn, _, rest = method_arn.partition("/")
    api_and_stage = rest.split("/", 1)[0] if rest else ""
    if not api_and_stage:
        return method_arn
    return f"{arn}/{api_and_stage}/*/v1/*"


def policy(
    principal: str, effect: str, resource: str, context: dict[str, str] | None = None
) -> dict[str, Any]:
    document = {
        "Version": "2012-10-17",
        "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": resource}],
    }
    result: dict[str, Any] = {"principalId": principal or "anonymous", "policyDocument": document}
    if context:
        result["context"] = context
    return result


def handler(event: dict[str, Any], _context: Any, *, key: Any = None) -> dict[str, Any]:
    header = str(event.get("authorizationToken") or "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized()
    try:
        claims = verify(token.strip(), key=key)
    except (jwt.PyJWTError, ValueError) as exc:
        log.info(json.dumps({"message": "token rejected", "reason": type(exc).__name__}))
        raise Unauthorized() from exc
    context = context_from_claims(claims)
    resource = api_resource(str(event.get("methodArn") or ""))
    if not context["tenant_id"] or not context["user_id"]:
        log.info(json.dumps({"message": "no tenant on the token", "principal": context["principal_id"]}))
        return policy(context["principal_id"], "Deny", resource)
    return policy(context["principal_id"], "Allow", resource, context)
