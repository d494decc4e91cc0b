"""The api λ driven with API Gateway proxy events, as the local server drives it (the ``api``
fixture of tests/conftest.py; importable by tests that need a second caller)."""

from __future__ import annotations

import json
from typing import Any

from agentmem.bootstrap import Container
from agentmem_dev.emulator import events, lambdas


class Api:
    """Calls the api λ with API Gateway proxy events, as the local server does."""

    def __init__(
        self,
        container: Container,
        tenant: str = "t1",
        user: str = "u1",
        permissions: str = "memory:read,memory:write",
    ) -> None:
        self.container = container
        self.auth: dict[str, Any] | None = {"tenant_id": tenant, "user_id": user, "permissions": permissions}

    def __call__(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: str | None = None,
        query: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        text = (
            raw if raw is not None else (json.dumps(body, ensure_ascii=False) if body is not None else None)
        )
        event = events.api_gateway_event(
            method,
            path,
            body=text,
            authorizer=self.auth,
            query={k: [v] for k, v in (query or {}).items()},
            headers={"Content-Type": "application/json"},
        )
        result = lambdas.invoke("api", event, self.container)
        payload = result.get("body") or ""
        try:
            return result["statusCode"], json.loads(payload) if payload else None
        except json.JSONDecodeError:
            return result["statusCode"], payload
