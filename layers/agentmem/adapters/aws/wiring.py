"""``build_aws``: the ``aws`` backend (:mod:`agentmem.backends`), the adapters
:func:`agentmem.bootstrap.bootstrap` wires once per cold start when ``AGENTMEM_BACKEND=aws``.

DynamoDB (memories, sessions, audit), SQS and Bedrock are always AWS. The search index and graph
are OpenSearch and Neptune unless ``AGENTMEM_SEARCH_BACKEND=local`` / ``AGENTMEM_GRAPH_BACKEND=local``
put the embedded adapters under ``AGENTMEM_LOCAL_PROJECTION_DIR`` (``/tmp/agentmem``: the moto
end-to-end test, the smoke run, a stack without those clusters). A missing endpoint or queue URL
refuses to start with a :class:`~agentmem.errors.ConfigurationError` naming the setting, and so
does an SDK older than the calls need (the layer ships none: the functions run on the Lambda
runtime's boto3, :data:`MIN_BOTOCORE`).

Nothing here performs network I/O: every client is built on its first call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters import Adapters
from agentmem.adapters.aws.bedrock import TITAN_DIMENSIONS, BedrockEmbedder
from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.aws.dynamodb_audited import DynamoAuditedWrites
from agentmem.adapters.aws.dynamodb_banks import DynamoPrototypeBanks
from agentmem.adapters.aws.dynamodb_base import DynamoTable
from agentmem.adapters.aws.dynamodb_conflicts import DynamoConflictStore
from agentmem.adapters.aws.dynamodb_idempotency import DynamoIdempotencyStore
from agentmem.adapters.aws.dynamodb_reindex import DynamoReindexJournal
from agentmem.adapters.aws.dynamodb_runtime_state import DynamoRuntimeState
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.aws.dynamodb_summaries import DynamoSummaryStore
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.aws.errors import LazyClient, boto_client
from agentmem.adapters.aws.eventbridge import EventBridgePublisher
from agentmem.adapters.aws.eventbridge_webhooks import EventBridgeWebhooks
from agentmem.adapters.aws.sqs_dead_letters import SqsDeadLetterQueue
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.adapters.aws.turn_receipts import DynamoTurnReceipts
from agentmem.adapters.providers import build_embedder_for, build_llm
from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError
from agentmem.ports import Clock, Embedder, GraphStore, SearchIndex
from agentmem.settings import Settings


def _require(value: str | None, env: str, why: str) -> str:
    if not value:
        raise ConfigurationError(
            f"{env} is required with AGENTMEM_BACKEND=aws ({why})", details={"setting": env}
        )
    return value


def _embedder(settings: Settings) -> Embedder:
    remote = build_embedder_for(settings)  # a remote provider (docs/providers/), else None
    if remote is not None:
        return remote
    if settings.embedder in ("bedrock", "auto"):
        if settings.bedrock_embed_dimension not in TITAN_DIMENSIONS:
            raise ConfigurationError(
                f"AGENTMEM_BEDROCK_EMBED_DIMENSION must be one of {TITAN_DIMENSIONS}",
                details={"setting": "AGENTMEM_BEDROCK_EMBED_DIMENSION"},
            )
        model_id = f"bedrock/{settings.bedrock_embed_model}/{settings.bedrock_embed_dimension}"
        calibration = None
        if settings.bedrock_embed_calibration:
            try:
                calibration = Calibration.parse(model_id, settings.bedrock_embed_calibration)
            except ValueError as exc:
                raise ConfigurationError(
                    f"AGENTMEM_BEDROCK_EMBED_CALIBRATION: {exc}",
                    details={"setting": "AGENTMEM_BEDROCK_EMBED_CALIBRATION"},
                ) from None
        return BedrockEmbedder(
            model=settings.bedrock_embed_model,
            dimension=settings.bedrock_embed_dimension,
            workers=settings.bedrock_embed_workers,
            region=settings.aws_region,
            calibration=calibration,
        )
    from agentmem.adapters.embedders import build_embedder

    return build_embedder(settings.embedder, num_threads=settings.embedder_threads)


def _local_dir(settings: Settings) -> Path:
    path = Path(settings.local_projection_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _embedded_index(settings: Settings, embedder: Embedder) -> SearchIndex:
    from agentmem.adapters.embedded.search_index import LocalSearchIndex

    return LocalSearchIndex(_local_dir(settings) / "search.db")


def _opensearch(settings: Settings, embedder: Embedder) -> SearchIndex:
    from agentmem.adapters.aws.opensearch_index import OpenSearchIndex, build_client

    endpoint = _require(
        settings.opensearch_endpoint, "AGENTMEM_OPENSEARCH_ENDPOINT", "or AGENTMEM_SEARCH_BACKEND=local"
    )
    client = LazyClient(
        lambda: build_client(endpoint, region=settings.aws_region, service=settings.opensearch_service)
    )
    return OpenSearchIndex(
        client,
        index=settings.opensearch_index,
        dimension=int(embedder.dimension),
        create_index=settings.opensearch_create_index,
        replicas=settings.opensearch_replicas,
    )


def _embedded_graph(settings: Settings) -> GraphStore:
    from agentmem.adapters.embedded.graph_store import LocalGraphStore

    return LocalGraphStore(_local_dir(settings) / "graph.db")


def _neptune(settings: Settings) -> GraphStore:
    from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore, connection_factory

    endpoint = _require(
        settings.neptune_endpoint, "AGENTMEM_NEPTUNE_ENDPOINT", "or AGENTMEM_GRAPH_BACKEND=local"
    )
    return NeptuneGraphStore(
        connection_factory(
            endpoint, port=settings.neptune_port, region=settings.aws_region, iam=settings.neptune_iam_auth
        )
    )


# AGENTMEM_SEARCH_BACKEND / AGENTMEM_GRAPH_BACKEND -> builder (imports are lazy: a stack without
# the clusters never imports opensearch-py or gremlinpython).
SEARCH_BACKENDS: Mapping[str, Callable[[Settings, Embedder], SearchIndex]] = {
    "opensearch": _opensearch,
    "local": _embedded_index,
}
GRAPH_BACKENDS: Mapping[str, Callable[[Settings], GraphStore]] = {
    "neptune": _neptune,
    "local": _embedded_graph,
}


# The oldest botocore that has every call the adapters make: Bedrock's Converse (1.34.116).
MIN_BOTOCORE = (1, 34, 116)


def require_sdk(version: str | None = None) -> None:
    """Refuse an SDK older than :data:`MIN_BOTOCORE` with a message that says what to do, instead
    of an ``AttributeError`` on the first call that needs a newer one."""
    if version is None:
        import botocore

        version = botocore.__version__
    parts = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    if parts < MIN_BOTOCORE:
        wanted = ".".join(map(str, MIN_BOTOCORE))
        raise ConfigurationError(
            f"botocore {version} is older than {wanted}, which the AWS adapters need; use a newer "
            "Lambda runtime, or add boto3 to the layer (infra_cdk/agentmem_infra/bundling.py prunes it)",
            details={"botocore": version, "minimum": wanted},
        )


def build_aws(settings: Settings, clock: Clock, embedder: Embedder | None = None) -> Adapters:
    """The AWS adapters. ``embedder`` overrides the configured one (tests, the smoke run)."""
    require_sdk()
    region = settings.aws_region
    queue_url = _require(
        settings.queue_url, "AGENTMEM_QUEUE_URL", "the ingest queue the API enqueues turns on"
    )
    dynamodb: LazyClient[Any] = LazyClient(lambda: boto_client("dynamodb", region=region))
    embedder = embedder or _embedder(settings)
    llm = build_llm(settings)  # AGENTMEM_LLM: off, bedrock or openai-compatible
    receipts = DynamoTurnReceipts(
        settings.table_session, retention=timedelta(days=settings.turn_retention_days), client=dynamodb
    )
    queue = SqsTurnQueue(queue_url, region=region, receipts=receipts, clock=clock.now)
    store = DynamoMemoryStore(settings.table_memory, client=dynamodb, clock=clock.now)
    return Adapters(
        store=store,
        ledger=store.ledger,
        audited_writes=DynamoAuditedWrites(store, settings.table_audit),
        turn_log=DynamoTurnLog(
            settings.table_session, retention=timedelta(days=settings.turn_retention_days), client=dynamodb
        ),
        runtime_state=DynamoRuntimeState(settings.table_session, clock=clock.now, client=dynamodb),
        audit=DynamoAuditLog(settings.table_audit, client=dynamodb),
        embedder=embedder,
        index=SEARCH_BACKENDS[settings.search_backend](settings, embedder),
        graph=GRAPH_BACKENDS[settings.graph_backend](settings),
        queue=queue,
        llm=llm,
        conflicts=DynamoConflictStore(settings.table_session, client=dynamodb),
        dead_letters=SqsDeadLetterQueue(
            settings.dlq_url, queue, max_receives=settings.queue_max_receives, region=region
        )
        if settings.dlq_url
        else None,
        summaries=DynamoSummaryStore(
            settings.table_session, retention=timedelta(days=settings.turn_retention_days), client=dynamodb
        ),
        prototype_banks=DynamoPrototypeBanks(settings.table_session, client=dynamodb, clock=clock.now),
        idempotency=DynamoIdempotencyStore(settings.table_session, client=dynamodb),
        # events on the bus (docs/events.md); its rules deliver them, so no registry or outbox here
        events=EventBridgePublisher(settings.event_bus_name, region=region)
        if settings.event_bus_name
        else None,
        webhooks=_webhooks(settings),
        # the staged vectors of a reindex to this embedder's model (used by the reindex function)
        reindex_journal=DynamoReindexJournal(
            DynamoTable(dynamodb, settings.table_memory, store="dynamodb"), embedder.model_id, clock=clock.now
        ),
    )


def _webhooks(settings: Settings) -> EventBridgeWebhooks | None:
    """The webhook registry in EventBridge, where the stack names its bus, role and DLQ."""
    bus, role, dlq = settings.event_bus_name, settings.webhook_role_arn, settings.webhook_dlq_arn
    if not (bus and role and dlq):
        return None
    return EventBridgeWebhooks(bus, role, dlq, region=settings.aws_region)
