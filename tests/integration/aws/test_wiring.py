"""The ``aws`` backend: which adapters it wires, what it refuses, and that building does no I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmem.adapters.aws.bedrock import BedrockEmbedder
from agentmem.adapters.aws.bedrock_llm import BedrockLLM
from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.aws.dynamodb_runtime_state import DynamoRuntimeState
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
from agentmem.adapters.aws.opensearch_index import OpenSearchIndex
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.adapters.embedded.graph_store import LocalGraphStore
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.errors import ConfigurationError
from agentmem.settings import Settings, load_settings

QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/agentmem-ingest"


def settings(tmp_path: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "backend": "aws",
        "queue_url": QUEUE,
        "aws_region": "us-east-1",
        "opensearch_endpoint": "https://search-agentmem.us-east-1.es.amazonaws.com",
        "neptune_endpoint": "agentmem.cluster-abc.us-east-1.neptune.amazonaws.com",
        "local_projection_dir": tmp_path,
    }
    values.update(overrides)
    return load_settings(**values)


def test_full_aws_wiring_builds_without_network(tmp_path: Path) -> None:
    container = bootstrap(settings(tmp_path))
    assert isinstance(container.store, DynamoMemoryStore)
    assert isinstance(container.turn_log, DynamoTurnLog) and isinstance(
        container.runtime_state, DynamoRuntimeState
    )
    assert isinstance(container.audit, DynamoAuditLog) and isinstance(container.queue, SqsTurnQueue)
    assert isinstance(container.index, OpenSearchIndex) and container.index.dimension == 1024
    assert isinstance(container.graph, NeptuneGraphStore)
    assert isinstance(container.embedder, BedrockEmbedder)  # "auto" means Bedrock on AWS
    assert container.embedder.model_id == "bedrock/amazon.titan-embed-text-v2:0/1024"
    assert container.llm is None
    assert not container.store._t.client.built  # no client, no connection yet
    assert not container.index._client.built and container.graph._conn is None


def test_local_projections_and_the_llm_switch(tmp_path: Path) -> None:
    container = bootstrap(
        settings(
            tmp_path,
            search_backend="local",
            graph_backend="local",
            opensearch_endpoint=None,
            neptune_endpoint=None,
            embedder="hash",
            bedrock_llm_enabled=True,
        ),
    )
    assert isinstance(container.index, LocalSearchIndex) and isinstance(container.graph, LocalGraphStore)
    assert isinstance(container.embedder, HashEmbedder) and isinstance(container.llm, BedrockLLM)


@pytest.mark.parametrize(
    ("overrides", "setting"),
    [
        ({"queue_url": None}, "AGENTMEM_QUEUE_URL"),
        ({"opensearch_endpoint": None}, "AGENTMEM_OPENSEARCH_ENDPOINT"),
        ({"neptune_endpoint": None}, "AGENTMEM_NEPTUNE_ENDPOINT"),
        ({"bedrock_embed_dimension": 768}, "AGENTMEM_BEDROCK_EMBED_DIMENSION"),
    ],
)
def test_missing_settings_refuse_to_start(tmp_path: Path, overrides: dict[str, object], setting: str) -> None:
    with pytest.raises(ConfigurationError, match=setting) as caught:
        bootstrap(settings(tmp_path, **overrides))
    assert caught.value.details["setting"] == setting


def test_bootstrap_builds_the_aws_backend_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "AGENTMEM_BACKEND": "aws",
        "AGENTMEM_QUEUE_URL": QUEUE,
        "AGENTMEM_SEARCH_BACKEND": "local",
        "AGENTMEM_GRAPH_BACKEND": "local",
        "AGENTMEM_LOCAL_PROJECTION_DIR": str(tmp_path),
        "AGENTMEM_EMBEDDER": "hash",
        "AGENTMEM_TABLE_MEMORY": "prod-memories",
        "AGENTMEM_AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(name, value)
    container: Container = bootstrap()
    assert isinstance(container.store, DynamoMemoryStore) and container.store._t.name == "prod-memories"


def test_an_sdk_older_than_the_adapters_need_refuses_to_start() -> None:
    """The layer ships no boto3 (the runtime's is used): an older runtime SDK is named at start."""
    from agentmem.adapters.aws.wiring import require_sdk

    with pytest.raises(ConfigurationError, match=r"botocore 1\.34\.100 is older than 1\.34\.116"):
        require_sdk("1.34.100")
    require_sdk("1.34.116")
    require_sdk("1.40.0")
