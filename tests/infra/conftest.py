"""Fixtures of the CDK synthesis tests (helpers live in ``infra_helpers``)."""

from __future__ import annotations

import json
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


# the stack while it moves to a new embedding model (-c agentmem:reindexTo=...): the reindex function
REINDEX_TO = {
    "AGENTMEM_EMBEDDER": "bedrock",
    "AGENTMEM_BEDROCK_EMBED_DIMENSION": "512",
    "AGENTMEM_OPENSEARCH_INDEX": "agentmem-titan-512",
}


@pytest.fixture(scope="session")
def reindexing(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    """The dev stack with a reindex to Titan at 512 dimensions configured."""
    require_cdk()
    return synthesize(
        "dev", tmp_path_factory.mktemp("cdk-reindex"), **{"agentmem:reindexTo": json.dumps(REINDEX_TO)}
    )


@pytest.fixture(params=["dev", "staging", "prod"])
def each_env(request: pytest.FixtureRequest, synth: Any) -> Synth:
    return synth(request.param)
