"""Per-environment settings (``-c env=dev|staging|prod``) and the functions' access matrix.

Everything an operator may want to tune per environment lives in :class:`EnvConfig`; the three
instances below are the defaults. A few values can be overridden with CDK context (see
``infra_cdk/README.md``): ``agentmem:alarmEmail``, ``agentmem:bedrockLlmEnabled``,
``agentmem:embedCalibration``.

Every environment has the alarms (``monitoring.py``): dev too, since a deployment that loses
turns or stops projecting is broken whatever it costs. ``opensearch_replicas`` must leave every
replica a node to live on (``replicas < data nodes``): a single-node domain with one replica
stays yellow forever.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_logs as logs

ENVIRONMENTS = ("dev", "staging", "prod")
FUNCTIONS = ("ingest", "api", "projector", "consolidate", "reconcile")
# Made only while the stack is moving to a new embedding model (``-c agentmem:reindexTo=...``)
REINDEX = "reindex"

# DynamoDB actions the adapters issue (layers/agentmem/adapters/aws/dynamodb_*.py). TransactWriteItems
# is authorised per contained action: every memory create holds a ``ConditionCheck`` on the scope's
# erase barrier, which needs dynamodb:ConditionCheckItem. The matrix below is verified against the
# calls each handler makes, not the other way round: tests/infra/test_infra_grants_cover_calls.py
# records every SDK call of a run through every function and evaluates it against the role's
# statements in the synthesized template.
DDB_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
CONDITION_CHECK = "dynamodb:ConditionCheckItem"  # the erase barrier inside every create's transaction
AUDIT_ACTIONS = ("dynamodb:PutItem", "dynamodb:Query")  # append-only: never Update/Delete


@dataclass(frozen=True)
class Access:
    """What one function touches. Derived from the services it runs (``agentmem.bootstrap.Container``)."""

    memory: tuple[str, ...] = ()  # actions on the memory table (and its indexes)
    session: tuple[str, ...] = ()  # actions on the session table
    audit: bool = True  # PutItem + Query on the audit table
    opensearch: bool = False  # es:ESHttp* on the domain + FGAC role mapping
    neptune: tuple[str, ...] = ()  # neptune-db:* data actions
    bedrock_embed: bool = False  # InvokeModel on the Titan embedding model
    bedrock_llm: bool = False  # InvokeModel/Converse on the LLM (only when the LLM is enabled)
    send_to_queue: bool = False  # sqs:SendMessage on the ingest queue (POST /v1/turns)
    dead_letters: bool = False  # receive / change visibility / delete on the ingest DLQ (redrive)


NEPTUNE_READ = ("neptune-db:connect", "neptune-db:ReadDataViaQuery")
NEPTUNE_WRITE = (*NEPTUNE_READ, "neptune-db:WriteDataViaQuery", "neptune-db:DeleteDataViaQuery")

ACCESS: dict[str, Access] = {
    # WritePipeline: create/update/transact (PutItem), mark_pending + scope registry (UpdateItem),
    # get/get_many/scan_active/find_by_key (reads); the L0 log and processed marks (session Put/Get);
    # k-NN dedup against the index; embeddings; the scene logs of session memory (session
    # UpdateItem: ADD to a scene's id sets). No graph. A turn that meets its user's erase (sent
    # before it, delivered after it, or erased while written) removes what it left: its L0 line
    # (session DeleteItem) and the records it wrote in the race (memory DeleteItem).
    "ingest": Access(
        memory=(*DDB_READ, "dynamodb:PutItem", "dynamodb:UpdateItem", CONDITION_CHECK, "dynamodb:DeleteItem"),
        session=(
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
        ),
        opensearch=True,
        bedrock_embed=True,
        bedrock_llm=True,
        send_to_queue=False,
    ),
    # Every route: recall/context (reads, index, graph, embeddings), explicit writes and MCP
    # (the write pipeline), admin correct/delete/erase (Delete, BatchWrite on both tables, index
    # delete_by_query, graph drop), session state (session Put/Get), POST /v1/turns (SQS).
    "api": Access(
        memory=(
            *DDB_READ,
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            CONDITION_CHECK,
            "dynamodb:DeleteItem",
            "dynamodb:BatchWriteItem",
        ),
        session=("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchWriteItem"),
        opensearch=True,
        neptune=NEPTUNE_WRITE,
        bedrock_embed=True,
        bedrock_llm=True,
        send_to_queue=True,
        dead_letters=True,  # GET /v1/dead-letters, POST /v1/dead-letters/{id}/redrive
    ),
    # Projector: reads the source of truth before every upsert; index + graph writes; audit of
    # projection conflicts. The stream read is granted by the event source mapping.
    "projector": Access(memory=DDB_READ, opensearch=True, neptune=NEPTUNE_WRITE),
    # Consolidation: update/transact (PutItem), scope registry on merge (UpdateItem), clear_pending
    # (DeleteItem), pending_scopes/scan_active (reads); graph degree (read only). No index.
    "consolidate": Access(
        memory=(*DDB_READ, "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"),
        neptune=NEPTUNE_READ,
    ),
    # Reconciler: all_scopes/list (reads), update (PutItem); both projections read and repaired.
    # A record that predates its user's erase barrier (written in a race with the erase's sweep)
    # is removed (memory DeleteItem): the erase is final on AWS too.
    "reconcile": Access(
        memory=(*DDB_READ, "dynamodb:PutItem", "dynamodb:DeleteItem"), opensearch=True, neptune=NEPTUNE_WRITE
    ),
    # Reindex (invoked by the operator, docs/aws.md "Changing the embedding model"): the ledger
    # walk and listings (reads); staged vectors (BatchWriteItem, BatchGetItem), its progress and
    # staged scopes (PutItem, Query, DeleteItem of an erased scope's); the switch's transactions
    # (PutItem); the new model's index (created by the function, filled while staging) and the
    # new model's embeddings. No graph, no audit.
    REINDEX: Access(
        memory=(*DDB_READ, "dynamodb:PutItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem"),
        audit=False,
        opensearch=True,
        bedrock_embed=True,
    ),
}


@dataclass(frozen=True)
class FunctionSpec:
    memory_mb: int
    timeout_s: int
    reserved_concurrency: int | None = None


@dataclass(frozen=True)
class EnvConfig:
    name: str
    # --- data protection
    retain_data: bool  # RETAIN stateful resources on stack deletion (else DESTROY)
    deletion_protection: bool  # DynamoDB + Neptune deletion protection
    customer_managed_key: bool  # one KMS CMK (rotated) for tables, OpenSearch and Neptune at rest
    log_retention: logs.RetentionDays
    # --- network
    nat_gateways: int
    # --- OpenSearch (managed domain in the VPC)
    opensearch_data_nodes: int
    opensearch_instance_type: str
    opensearch_master_nodes: int  # 0 = no dedicated masters
    opensearch_master_instance_type: str
    opensearch_volume_gib: int
    opensearch_zone_awareness: bool  # 2 AZs
    opensearch_replicas: int  # number_of_replicas of the index (< data nodes; >= 1 over 2 AZs)
    # --- Neptune
    neptune_instance_class: str
    neptune_instances: int  # 1 writer + (n-1) readers, spread over the AZs
    # --- functions
    functions: dict[str, FunctionSpec]
    ingest_max_concurrency: int  # SQS event source max concurrency (throttles ingestion fairly)
    projector_parallelization: int  # batches per stream shard processed concurrently
    log_level: str
    # --- API
    api_rate_limit: float  # steady-state requests per second (stage-wide)
    api_burst_limit: int
    waf: bool  # WAFv2 web ACL (AWS managed common rules + per-IP rate limit) on the stage
    # --- Cognito
    mfa_required: bool
    cognito_plus: bool  # Plus feature plan with threat protection (per-MAU cost)
    # --- application settings (AGENTMEM_*)
    turn_retention_days: int = 30
    bedrock_embed_model: str = "amazon.titan-embed-text-v2:0"
    bedrock_embed_dimension: int = 1024
    bedrock_embed_workers: int = 4
    bedrock_llm_enabled: bool = False
    # Titan's calibration anchors measured on the account (`agentmem calibrate --embedder bedrock`),
    # -c agentmem:embedCalibration=...; None: the library's placeholders
    bedrock_embed_calibration: str | None = None
    bedrock_llm_model: str = "amazon.nova-lite-v1:0"
    # An OpenAI-compatible model server instead of Bedrock (docs/providers/): -c agentmem:openai=
    # a JSON object of AGENTMEM_* names (AGENTMEM_LLM, AGENTMEM_EMBEDDER, AGENTMEM_OPENAI_BASE_URL,
    # ..._LLM_MODEL, ..._EMBED_MODEL, ..._EMBED_DIMENSION, ..._EMBED_CALIBRATION, ...), validated at
    # synth by agentmem.settings; its key by ARN (-c agentmem:openaiKeySecretArn=arn:...), granted
    # as secretsmanager:GetSecretValue to the functions that call a model.
    openai_settings: dict[str, str] = field(default_factory=dict)
    openai_key_secret_arn: str | None = None
    opensearch_index: str = "agentmem-memories"
    # Moving to a new embedding model (-c agentmem:reindexTo=...): the reindex function's AGENTMEM_*
    # embedder settings and its index (AGENTMEM_OPENSEARCH_INDEX, a new name); empty: no reindex
    # function. Validated by load_config.
    reindex_settings: dict[str, str] = field(default_factory=dict)
    # reconcile runs in this many parallel segments, one schedule target each ({"segment": i,
    # "segments": n}); at most 5 (an EventBridge rule's targets)
    reconcile_segments: int = 1
    # --- engines
    opensearch_version: str = "OPENSEARCH_2_19"  # attribute of aws_opensearchservice.EngineVersion
    # TinkerPop 3.7.x server; 1.4.7.0 is supported until 2027-06-03 (1.4.4.0 only until 2027-03-06)
    neptune_engine_version: str = "1.4.7.0"
    neptune_parameter_family: str = "neptune1.4"
    neptune_backup_days: int = 7
    alarm_email: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.reconcile_segments <= 5:
            raise ValueError(f"{self.name}: reconcile_segments must be 1..5 (one rule target each)")
        reserved = self.functions["reconcile"].reserved_concurrency
        if reserved is not None and reserved < self.reconcile_segments:
            raise ValueError(
                f"{self.name}: reconcile reserved_concurrency={reserved} < reconcile_segments="
                f"{self.reconcile_segments}: the segments' runs would throttle each other"
            )
        if not 0 <= self.opensearch_replicas < self.opensearch_data_nodes:
            raise ValueError(
                f"{self.name}: opensearch_replicas={self.opensearch_replicas} needs more than that many"
                f" data nodes (has {self.opensearch_data_nodes}); the index would stay yellow"
            )
        if self.opensearch_zone_awareness and self.opensearch_replicas < 1:
            raise ValueError(
                f"{self.name}: a multi-AZ domain needs opensearch_replicas >= 1 to survive an AZ"
            )

    @property
    def removal_policy(self) -> RemovalPolicy:
        return RemovalPolicy.RETAIN if self.retain_data else RemovalPolicy.DESTROY


PROD_RECONCILE_SEGMENTS = 4

_FN_DEV = {
    "ingest": FunctionSpec(1024, 60),
    "api": FunctionSpec(1024, 25),
    "projector": FunctionSpec(1024, 120),
    # No reserved concurrency in dev: fresh accounts have a concurrency quota of 10 and reserving
    # any of it fails the deployment. Overlapping scheduled runs are harmless (version checks).
    "consolidate": FunctionSpec(1024, 600),
    "reconcile": FunctionSpec(1024, 900),
    REINDEX: FunctionSpec(1024, 900),
}
_FN_PROD = {
    "ingest": FunctionSpec(1024, 60),
    "api": FunctionSpec(1024, 25),
    "projector": FunctionSpec(1024, 120),
    "consolidate": FunctionSpec(1024, 600, reserved_concurrency=1),  # one run at a time
    "reconcile": FunctionSpec(1024, 900, reserved_concurrency=PROD_RECONCILE_SEGMENTS),  # one per segment
    REINDEX: FunctionSpec(1024, 900, reserved_concurrency=1),  # one run at a time (its progress is one walk)
}

CONFIGS: dict[str, EnvConfig] = {
    "dev": EnvConfig(
        name="dev",
        retain_data=False,
        deletion_protection=False,
        customer_managed_key=False,
        log_retention=logs.RetentionDays.ONE_WEEK,
        nat_gateways=1,
        opensearch_data_nodes=1,
        opensearch_instance_type="t3.medium.search",
        opensearch_master_nodes=0,
        opensearch_master_instance_type="m6g.large.search",
        opensearch_volume_gib=20,
        opensearch_zone_awareness=False,
        opensearch_replicas=0,  # one data node: a replica would have nowhere to go
        neptune_instance_class="db.t4g.medium",
        neptune_instances=1,
        functions=_FN_DEV,
        ingest_max_concurrency=2,
        projector_parallelization=1,
        log_level="DEBUG",
        api_rate_limit=20,
        api_burst_limit=40,
        waf=False,
        mfa_required=False,
        cognito_plus=False,
    ),
    "staging": EnvConfig(
        name="staging",
        retain_data=False,
        deletion_protection=False,
        customer_managed_key=True,
        log_retention=logs.RetentionDays.ONE_MONTH,
        nat_gateways=2,
        opensearch_data_nodes=2,
        opensearch_instance_type="r6g.large.search",
        opensearch_master_nodes=3,
        opensearch_master_instance_type="m6g.large.search",
        opensearch_volume_gib=50,
        opensearch_zone_awareness=True,
        opensearch_replicas=1,  # one copy of every shard in each AZ
        neptune_instance_class="db.r6g.large",
        neptune_instances=2,
        functions=_FN_PROD,
        reconcile_segments=PROD_RECONCILE_SEGMENTS,
        ingest_max_concurrency=10,
        projector_parallelization=2,
        log_level="INFO",
        api_rate_limit=100,
        api_burst_limit=200,
        waf=True,
        mfa_required=True,
        cognito_plus=False,
    ),
    "prod": EnvConfig(
        name="prod",
        retain_data=True,
        deletion_protection=True,
        customer_managed_key=True,
        log_retention=logs.RetentionDays.ONE_YEAR,
        nat_gateways=2,
        opensearch_data_nodes=2,
        opensearch_instance_type="r6g.large.search",
        opensearch_master_nodes=3,
        opensearch_master_instance_type="m6g.large.search",
        opensearch_volume_gib=100,
        opensearch_zone_awareness=True,
        opensearch_replicas=1,  # one copy of every shard in each AZ
        neptune_instance_class="db.r6g.large",
        neptune_instances=2,
        functions=_FN_PROD,
        reconcile_segments=PROD_RECONCILE_SEGMENTS,
        ingest_max_concurrency=50,
        projector_parallelization=4,
        log_level="INFO",
        api_rate_limit=500,
        api_burst_limit=1000,
        waf=True,
        mfa_required=True,
        cognito_plus=True,
    ),
}


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def load_config(env: str | None, context: dict[str, Any] | None = None) -> EnvConfig:
    """The configuration of ``env``, with the supported context overrides applied."""
    name = (env or "dev").strip().lower()
    if name not in CONFIGS:
        raise ValueError(f"unknown environment {env!r}: pass -c env=dev|staging|prod")
    config = CONFIGS[name]
    context = context or {}
    overrides: dict[str, Any] = {}
    if context.get("agentmem:alarmEmail"):
        overrides["alarm_email"] = str(context["agentmem:alarmEmail"])
    if context.get("agentmem:bedrockLlmEnabled") is not None:
        overrides["bedrock_llm_enabled"] = _bool(context["agentmem:bedrockLlmEnabled"])
    if context.get("agentmem:embedCalibration"):
        from agentmem.domain.similarity import Calibration

        text = str(context["agentmem:embedCalibration"])
        Calibration.parse("bedrock", text)  # refuses a malformed value at synth, not at first traffic
        overrides["bedrock_embed_calibration"] = text
    if context.get("agentmem:openai"):
        overrides["openai_settings"] = openai_settings(context["agentmem:openai"])
    for name, attribute, cast in (
        ("agentmem:opensearchIndex", "opensearch_index", str),
        ("agentmem:bedrockEmbedModel", "bedrock_embed_model", str),
        ("agentmem:bedrockEmbedDimension", "bedrock_embed_dimension", int),
    ):  # the deploy that makes a reindex's target the stack's embedder
        if context.get(name) is not None:
            overrides[attribute] = cast(context[name])
    if context.get("agentmem:openaiKeySecretArn"):
        arn = str(context["agentmem:openaiKeySecretArn"])
        if not arn.startswith("arn:") or ":secretsmanager:" not in arn:
            raise ValueError("agentmem:openaiKeySecretArn must be a Secrets Manager secret's ARN")
        overrides["openai_key_secret_arn"] = arn
    config = replace(config, **overrides) if overrides else config
    if context.get("agentmem:reindexTo"):
        config = replace(config, reindex_settings=reindex_settings(context["agentmem:reindexTo"], config))
    return config


REINDEX_SETTINGS_ALLOWED = (
    "AGENTMEM_EMBEDDER",
    "AGENTMEM_OPENSEARCH_INDEX",
    "AGENTMEM_BEDROCK_EMBED_MODEL",
    "AGENTMEM_BEDROCK_EMBED_DIMENSION",
    "AGENTMEM_BEDROCK_EMBED_CALIBRATION",
)  # plus every AGENTMEM_OPENAI_* but the key


def reindex_settings(value: Any, config: EnvConfig) -> dict[str, str]:
    """The ``agentmem:reindexTo`` context: the new model's embedder settings and the name of its
    own index, checked at synth. The index must be new and outside the serving index's template
    (``<index>-*``: two templates of one priority may not overlap), so the serving index keeps
    answering while the function fills the new one."""
    from agentmem.settings import Settings

    raw = json.loads(value) if isinstance(value, str) else dict(value)
    found = {str(k): str(v) for k, v in raw.items()}
    for name in found:
        if name not in REINDEX_SETTINGS_ALLOWED and not name.startswith("AGENTMEM_OPENAI_"):
            raise ValueError(f"agentmem:reindexTo takes embedder settings and the index only, not {name}")
        if name == "AGENTMEM_OPENAI_API_KEY":
            raise ValueError("the key must not be in the template: pass -c agentmem:openaiKeySecretArn=...")
    index = found.get("AGENTMEM_OPENSEARCH_INDEX", "")
    serving = config.opensearch_index
    if not index or index == serving or index.startswith(f"{serving}-"):
        raise ValueError(
            f"agentmem:reindexTo needs AGENTMEM_OPENSEARCH_INDEX: a new index for the new model, not"
            f" {serving!r} nor {serving}-* (e.g. agentmem-titan-512)"
        )
    fields = {k.removeprefix("AGENTMEM_").lower(): v for k, v in found.items()}
    checked = Settings(backend="aws", queue_url="https://sqs/q", **fields)  # type: ignore[arg-type]
    if checked.embedder in ("bedrock", "auto"):
        from agentmem.adapters.aws.bedrock import TITAN_DIMENSIONS

        if checked.bedrock_embed_dimension not in TITAN_DIMENSIONS:
            raise ValueError(f"agentmem:reindexTo: Titan's dimension must be one of {TITAN_DIMENSIONS}")
    if checked.embedder == "openai-compatible" and not (
        checked.openai_embed_dimension and checked.openai_embed_calibration
    ):
        raise ValueError(
            "agentmem:reindexTo with an OpenAI-compatible embedder needs AGENTMEM_OPENAI_EMBED_DIMENSION"
            " and AGENTMEM_OPENAI_EMBED_CALIBRATION"
        )
    return found


OPENAI_SETTINGS_ALLOWED = ("AGENTMEM_LLM", "AGENTMEM_EMBEDDER")  # plus every AGENTMEM_OPENAI_* but the key


def openai_settings(value: Any) -> dict[str, str]:
    """The ``agentmem:openai`` context: AGENTMEM_* names of the provider settings, checked against
    :class:`agentmem.settings.Settings` at synth (a misspelt name or a missing model refuses to
    synthesize, not to start). The key itself never goes in the template: use the secret's ARN."""
    from agentmem.settings import Settings

    raw = json.loads(value) if isinstance(value, str) else dict(value)
    found = {str(k): str(v) for k, v in raw.items()}
    for name in found:
        if name not in OPENAI_SETTINGS_ALLOWED and not name.startswith("AGENTMEM_OPENAI_"):
            raise ValueError(f"agentmem:openai takes the provider settings only, not {name}")
        if name == "AGENTMEM_OPENAI_API_KEY":
            raise ValueError("the key must not be in the template: pass -c agentmem:openaiKeySecretArn=...")
    fields = {k.removeprefix("AGENTMEM_").lower(): v for k, v in found.items()}
    unknown = sorted(set(fields) - set(Settings.model_fields))
    if unknown:
        raise ValueError(f"agentmem:openai: unknown settings {unknown}")
    checked = Settings(backend="aws", queue_url="https://sqs/q", **fields)  # type: ignore[arg-type]
    if checked.embedder == "openai-compatible" and not (
        checked.openai_embed_dimension and checked.openai_embed_calibration
    ):
        raise ValueError(
            "an OpenAI-compatible embedder on AWS needs AGENTMEM_OPENAI_EMBED_DIMENSION (the k-NN index is "
            "made at deploy) and AGENTMEM_OPENAI_EMBED_CALIBRATION (agentmem calibrate prints it)"
        )
    return found
