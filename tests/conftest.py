"""Shared fixtures: a local container on a temp dir with the deterministic hashed embedder, a
settable clock, and helpers to drive the real handlers with AWS-shaped events."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_ACCOUNT_ID_ENDPOINT_MODE", "disabled")

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.settings import load_settings
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.runner import LocalRunner

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def pytest_configure(config: pytest.Config) -> None:
    from support import engine_run

    engine_run.configure()  # the real engines' run folder (they start on first use)


def pytest_unconfigure(config: pytest.Config) -> None:
    from support import engine_run

    engine_run.unconfigure()  # stops the engines any worker started


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def container(tmp_path: Path, clock: ManualClock) -> Container:
    return bootstrap(
        load_settings(data_dir=tmp_path / "data", embedder="hash"), clock=clock, embedder=HashEmbedder()
    )


@pytest.fixture
def runner(container: Container) -> LocalRunner:
    return LocalRunner(container)


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


@pytest.fixture
def api(container: Container) -> Api:
    return Api(container)
