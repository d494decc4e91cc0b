"""``build_aws(settings)``: the AWS backend's composition root (called once per cold start by
:func:`agentmem.runtime.get_container` when ``AGENTMEM_BACKEND=aws``).

DynamoDB (memories, sessions, audit), SQS and Bedrock are always AWS. The search index and graph
are OpenSearch and Neptune unless ``AGENTMEM_SEARCH_BACKEND=local`` / ``AGENTMEM_GRAPH_BACKEND=local``
put the embedded adapters under ``AGENTMEM_LOCAL_PROJECTION_DIR`` (``/tmp/agentmem``: the moto
end-to-end test, the smoke run, a stack without those clusters). A missing endpoint or queue URL
refuses to start with a :class:`~agentmem.errors.ConfigurationError` naming the setting.

Nothing here performs network I/O: every client is built on its first call.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters.aws.bedrock import TITAN_DIMENSIONS, BedrockEmbedder, BedrockLLM
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.aws.dynamodb_tables import DynamoAuditLog, DynamoRuntimeState, DynamoTurnLog
from agentmem.adapters.aws.errors import LazyClient, boto_client
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.errors import ConfigurationError
from agentmem.ports import Embedder, GraphStore, SearchIndex
from agentmem.runtime import Container, Settings, SystemClock


def _require(value: str | None, env: str, why: str) -> str:
    if not value:
        raise ConfigurationError(
            f"{env} is required with AGENTMEM_BACKEND=aws ({why})", details={"setting": env}
        )
    return value


def _embedder(settings: Settings) -> Embedder:
    if settings.embedder in ("bedrock", "auto"):
        if settings.bedrock_embed_dimension not in TITAN_DIMENSIONS:
            raise ConfigurationError(
                f"AGENTMEM_BEDROCK_EMBED_DIMENSION must be one of {TITAN_DIMENSIONS}",
                details={"setting": "AGENTMEM_BEDROCK_EMBED_DIMENSION"},
            )
        return BedrockEmbedder(
            model=settings.bedrock_embed_model,
            dimension=settings.bedrock_embed_dimension,
            workers=settings.bedrock_embed_workers,
            region=settings.aws_region,
        )
    from agentmem.adapters.embedders import build_embedder

    return build_embedder(settings.embedder, num_threads=settings.embedder_threads)


def _local_dir(settings: Settings) -> Path:
    path = Path(settings.local_projection_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _index(settings: Settings, embedder: Embedder) -> SearchIndex:
    if settings.search_backend == "local":
        from agentmem.adapters.embedded.search_index import LocalSearchIndex

        return LocalSearchIndex(_local_dir(settings) / "search.db")
    from agentmem.adapters.aws.opensearch_index import OpenSearchIndex, build_client

    endpoint = _require(
        settings.opensearch_endpoint, "AGENTMEM_OPENSEARCH_ENDPOINT", "or AGENTMEM_SEARCH_BACKEND=local"
    )
    client = LazyClient(
        lambda: build_client(endpoint, region=settings.aws_region, service=settings.opensearch_service)
    )
    return OpenSearchIndex(client, index=settings.opensearch_index, dimension=int(embedder.dimension))


def _graph(settings: Settings) -> GraphStore:
    if settings.graph_backend == "local":
        from agentmem.adapters.embedded.graph_store import LocalGraphStore

        return LocalGraphStore(_local_dir(settings) / "graph.db")
    from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore, connection_factory

    endpoint = _require(
        settings.neptune_endpoint, "AGENTMEM_NEPTUNE_ENDPOINT", "or AGENTMEM_GRAPH_BACKEND=local"
    )
    return NeptuneGraphStore(
        connection_factory(
            endpoint, port=settings.neptune_port, region=settings.aws_region, iam=settings.neptune_iam_auth
        )
    )


def build_aws(settings: Settings, *, embedder: Embedder | None = None, clock: Any = None) -> Container:
    """Wire the AWS adapters into the services. ``embedder`` / ``clock`` override for tests."""
    clock = clock or SystemClock()
    region = settings.aws_region
    queue_url = _require(
        settings.queue_url, "AGENTMEM_QUEUE_URL", "the ingest queue the API enqueues turns on"
    )
    dynamodb: LazyClient[Any] = LazyClient(lambda: boto_client("dynamodb", region=region))
    embedder = embedder or _embedder(settings)
    index = _index(settings, embedder)
    graph = _graph(settings)
    extras: dict[str, Any] = {
        "backends": {"search": settings.search_backend, "graph": settings.graph_backend}
    }
    if settings.bedrock_llm_enabled:
        extras["llm"] = BedrockLLM(model=settings.bedrock_llm_model, region=region)
    return Container(
        settings=settings,
        store=DynamoMemoryStore(settings.table_memory, client=dynamodb, clock=clock.now),
        turn_log=DynamoTurnLog(
            settings.table_session, retention=timedelta(days=settings.turn_retention_days), client=dynamodb
        ),
        runtime_state=DynamoRuntimeState(settings.table_session, clock=clock.now, client=dynamodb),
        audit=DynamoAuditLog(settings.table_audit, client=dynamodb),
        embedder=embedder,
        index=index,
        graph=graph,
        queue=SqsTurnQueue(queue_url, region=region),
        clock=clock,
        extras=extras,  # before __post_init__ wires the services: the pipeline takes the LLM
    )
