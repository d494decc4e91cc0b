"""Shared fixtures: a local container on a temp dir with the deterministic hashed embedder, a
settable clock, and helpers to drive the real handlers with AWS-shaped events."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

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
from agentmem_dev.emulator.runner import LocalRunner
from support.api import Api

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


@pytest.fixture
def api(container: Container) -> Api:
    return Api(container)
