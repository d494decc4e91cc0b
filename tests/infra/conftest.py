"""Fixtures of the CDK synthesis tests (helpers live in ``infra_helpers``)."""

from __future__ import annotations

from typing import Any

import pytest
from infra_helpers import Synth, require_cdk, synthesize

_cache: dict[str, Synth] = {}


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``synth("prod")`` → the synthesized (and nag-checked) stack of that environment, cached."""
    require_cdk()

    def get(env: str) -> Synth:
        if env not in _cache:
            _cache[env] = synthesize(env, tmp_path_factory.mktemp(f"cdk-{env}"))
        return _cache[env]

    return get


@pytest.fixture(params=["dev", "staging", "prod"])
def each_env(request: pytest.FixtureRequest, synth: Any) -> Synth:
    return synth(request.param)
