"""The API Gateway TOKEN authorizer (``infra_cdk/lambdas/authorizer/handler.py``) on real RS256
tokens signed with a key made here; the JWKS fetch is bypassed by passing the public key."""

from __future__ import annotations

import time
from typing import Any

import pytest
from infra_helpers import INFRA, load_module

# One worker synthesizes the stacks (jsii + Node are heavy): run with `pytest -n auto --dist loadgroup`.
pytestmark = pytest.mark.xdist_group("cdk")

jwt = pytest.importorskip("jwt", reason="PyJWT is not installed (the authorizer bundles PyJWT[crypto])")
rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_TEST"
CLIENT = "client-123"
METHOD_ARN = "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/POST/v1/context"


@pytest.fixture(scope="module")
def keys() -> tuple[Any, Any]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return private, private.public_key()


@pytest.fixture
def authorizer(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = load_module("agentmem_authorizer_handler", INFRA / "lambdas" / "authorizer" / "handler.py")
    monkeypatch.setattr(module, "ISSUER", ISSUER)
    monkeypatch.setattr(module, "CLIENT_IDS", (CLIENT,))
    return module


def token(private: Any, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "sub": "5f1c-user",
        "aud": CLIENT,
        "iss": ISSUER,
        "token_use": "id",
        "iat": now,
        "exp": now + 3600,
        "cognito:username": "alice",
        "custom:tenant_id": "acme",
        "custom:permissions": "memory:read,memory:write",
    }
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, private, algorithm="RS256", headers={"kid": "k1"})


def call(authorizer: Any, public: Any, header: str) -> dict[str, Any]:
    event = {"type": "TOKEN", "authorizationToken": header, "methodArn": METHOD_ARN}
    return authorizer.handler(event, None, key=public)


def test_valid_id_token_allows_with_the_principal_in_context(authorizer: Any, keys: Any) -> None:
    private, public = keys
    result = call(authorizer, public, f"Bearer {token(private)}")
    statement = result["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"] == "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*/v1/*"
    assert result["principalId"] == "alice"
    assert result["context"] == {
        "tenant_id": "acme",
        "user_id": "5f1c-user",
        "principal_id": "alice",
        "permissions": "memory:read,memory:write",
    }


def test_context_is_what_the_api_reads(authorizer: Any, keys: Any) -> None:
    """The api λ takes tenant_id/user_id/permissions from requestContext.authorizer (flat strings)."""
    private, public = keys
    context = call(authorizer, public, f"Bearer {token(private)}")["context"]
    assert all(isinstance(v, str) for v in context.values())
    assert {"tenant_id", "user_id", "permissions"} <= set(context)


def test_missing_permissions_attribute_is_omitted(authorizer: Any, keys: Any) -> None:
    private, public = keys
    context = call(authorizer, public, f"Bearer {token(private, **{'custom:permissions': None})}")["context"]
    assert "permissions" not in context  # the api then grants its default read + write


def test_malformed_permissions_are_dropped(authorizer: Any, keys: Any) -> None:
    private, public = keys
    raw = "memory:read, admin ,bad perm,memory:write;drop"
    context = call(authorizer, public, f"Bearer {token(private, **{'custom:permissions': raw})}")["context"]
    assert context["permissions"] == "memory:read,admin"


@pytest.mark.parametrize(
    "overrides",
    [
        {"exp": int(time.time()) - 3600},  # expired
        {"aud": "another-client"},
        {"iss": "https://cognito-idp.eu-west-1.amazonaws.com/other-pool"},
        {"token_use": "access"},  # access tokens carry no custom attributes
        {"token_use": None},
    ],
)
def test_invalid_tokens_are_unauthorized(authorizer: Any, keys: Any, overrides: dict[str, Any]) -> None:
    private, public = keys
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        call(authorizer, public, f"Bearer {token(private, **overrides)}")


def test_foreign_signature_is_unauthorized(authorizer: Any, keys: Any) -> None:
    _, public = keys
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        call(authorizer, public, f"Bearer {token(other)}")


@pytest.mark.parametrize("header", ["", "Bearer", "Basic abc", "bearer"])
def test_missing_bearer_is_unauthorized(authorizer: Any, keys: Any, header: str) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        call(authorizer, keys[1], header)


def test_token_without_tenant_is_denied(authorizer: Any, keys: Any) -> None:
    private, public = keys
    result = call(authorizer, public, f"Bearer {token(private, **{'custom:tenant_id': None})}")
    assert result["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    assert "context" not in result


def test_hs256_downgrade_is_refused(authorizer: Any, keys: Any) -> None:
    """A token "signed" with HS256 using the public key as secret must not pass (algorithm pinning)."""
    _, public = keys
    forged = jwt.encode(
        {
            "sub": "x",
            "aud": CLIENT,
            "iss": ISSUER,
            "token_use": "id",
            "iat": 0,
            "exp": 2**31,
            "custom:tenant_id": "t",
        },
        "not-the-signing-key-of-this-user-pool",
        algorithm="HS256",
    )
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        call(authorizer, public, f"Bearer {forged}")
