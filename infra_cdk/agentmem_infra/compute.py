"""The shared layer, the five functions (six while a reindex is configured: ``reindex``, invoked by
the operator, no trigger), their roles, event sources and schedules.

Each function gets its own role with inline statements only (no AWS managed policy): its own log
group, X-Ray, the VPC ENI actions, and exactly the table actions / index / graph / Bedrock / queue
rights its services use (``config.ACCESS``). Settings reach the code as ``AGENTMEM_*`` variables
(``agentmem.settings.Settings``); every function gets the full set, as the aws backend requires.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from constructs import Construct

from agentmem_infra import FUNCTIONS_DIR, INFRA_DIR, LAYERS_DIR
from agentmem_infra.bundling import ARCHITECTURE, DEV_PACKAGES, RUNTIME, python_code
from agentmem_infra.config import ACCESS, AUDIT_ACTIONS, FUNCTIONS, REINDEX, EnvConfig
from agentmem_infra.data import Queues, Tables
from agentmem_infra.graph import GraphCluster
from agentmem_infra.layer_contents import read_requirements
from agentmem_infra.network import Network
from agentmem_infra.search import SearchDomain, vpc_access

METRICS_NAMESPACE = "agentmem"
SCHEDULES = {"consolidate": Duration.minutes(15), "reconcile": Duration.hours(1)}
STREAM_BATCH_SIZE = 100
STREAM_RETRY_ATTEMPTS = 5
# agentmem.adapters.codec.SORT_KEY_PREFIX (checked by tests/infra): the codec ignores every other
# item of the memory table, so the event source mapping filters the others out before invoking.
MEMORY_SK_PREFIX = "MEM#"
DESCRIPTIONS = {
    "ingest": "agentmem ingest: SQS turns -> WritePipeline (extract, guard, embed, persist)",
    "api": "agentmem api: REST /v1/* (context, recall, memories, MCP, audit) behind the authorizer",
    "projector": "agentmem projector: DynamoDB stream -> OpenSearch index + Neptune graph",
    "consolidate": "agentmem consolidate: decay, dedup, merge, evict users with pending writes",
    "reconcile": "agentmem reconcile: repair missing / stale / orphan projections",
    REINDEX: "agentmem reindex: re-embed every memory with the new model, then switch (operator-invoked)",
}


def bedrock_model_arns(model_id: str) -> list[str]:
    """Resources for InvokeModel/Converse on ``model_id``: a foundation model in this region, or a
    cross-region inference profile (``us.``/``eu.``/``apac.``/``global.`` prefix) plus the model
    it routes to in any region."""
    prefix, _, base = model_id.partition(".")
    if prefix in ("us", "eu", "apac", "global", "us-gov", "ca", "jp", "au") and "." in base:
        return [
            f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}:{Aws.ACCOUNT_ID}:inference-profile/{model_id}",
            f"arn:{Aws.PARTITION}:bedrock:*::foundation-model/{base}",
        ]
    return [f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{model_id}"]


def settings_environment(
    config: EnvConfig, tables: Tables, queues: Queues, search: SearchDomain, graph: GraphCluster
) -> dict[str, str]:
    """The AGENTMEM_* variables (``agentmem.settings.Settings``) every function receives."""
    return {
        "AGENTMEM_BACKEND": "aws",
        "AGENTMEM_AWS_REGION": Aws.REGION,
        "AGENTMEM_TABLE_MEMORY": tables.memory.table_name,
        "AGENTMEM_TABLE_SESSION": tables.session.table_name,
        "AGENTMEM_TABLE_AUDIT": tables.audit.table_name,
        "AGENTMEM_QUEUE_URL": queues.ingest.queue_url,
        "AGENTMEM_DLQ_URL": queues.ingest_dlq.queue_url,
        "AGENTMEM_TURN_RETENTION_DAYS": str(config.turn_retention_days),
        "AGENTMEM_SEARCH_BACKEND": "opensearch",
        "AGENTMEM_OPENSEARCH_ENDPOINT": f"https://{search.endpoint}",
        "AGENTMEM_OPENSEARCH_SERVICE": "es",
        "AGENTMEM_OPENSEARCH_INDEX": config.opensearch_index,
        "AGENTMEM_OPENSEARCH_REPLICAS": str(config.opensearch_replicas),
        # index_setup.py puts the template and creates the index at deploy, not each cold start
        "AGENTMEM_OPENSEARCH_CREATE_INDEX": "false",
        "AGENTMEM_GRAPH_BACKEND": "neptune",
        "AGENTMEM_NEPTUNE_ENDPOINT": graph.endpoint,
        "AGENTMEM_NEPTUNE_PORT": graph.port,
        "AGENTMEM_NEPTUNE_IAM_AUTH": "true",
        "AGENTMEM_EMBEDDER": "bedrock",
        "AGENTMEM_BEDROCK_EMBED_MODEL": config.bedrock_embed_model,
        "AGENTMEM_BEDROCK_EMBED_DIMENSION": str(config.bedrock_embed_dimension),
        "AGENTMEM_BEDROCK_EMBED_WORKERS": str(config.bedrock_embed_workers),
        "AGENTMEM_BEDROCK_LLM_ENABLED": "true" if config.bedrock_llm_enabled else "false",
        "AGENTMEM_BEDROCK_LLM_MODEL": config.bedrock_llm_model,
        **(
            {"AGENTMEM_BEDROCK_EMBED_CALIBRATION": config.bedrock_embed_calibration}
            if config.bedrock_embed_calibration
            else {}
        ),
        **config.openai_settings,  # an OpenAI-compatible provider (validated by load_config)
        **(
            {"AGENTMEM_OPENAI_API_KEY_SECRET_ARN": config.openai_key_secret_arn}
            if config.openai_key_secret_arn
            else {}
        ),
    }


class Functions(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        network: Network,
        tables: Tables,
        queues: Queues,
        search: SearchDomain,
        graph: GraphCluster,
        key: kms.IKey | None,
        skip_bundling: bool,
    ) -> None:
        super().__init__(scope, id)
        self.config = config
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            description="agentmem library + runtime dependencies (python/agentmem, cp312, arm64)",
            code=python_code(
                LAYERS_DIR,
                requirements=read_requirements(INFRA_DIR / "layer-requirements.txt"),
                package_dir="agentmem",
                site_dir="python",
                skip=skip_bundling,
                exclude=DEV_PACKAGES,
            ),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        settings = settings_environment(config, tables, queues, search, graph)
        self.functions: dict[str, lambda_.Function] = {}
        self.roles: dict[str, iam.Role] = {}
        self.security_groups: dict[str, ec2.SecurityGroup] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        for name in FUNCTIONS:
            self._function(name, settings, network)
            self._grant(name, tables, queues, search, graph, key)
        if config.reindex_settings:
            # the stack's settings with the new model's embedder and index; the function creates
            # that index (its template and mapping) on first use, with the new dimension
            target = {**settings, **config.reindex_settings, "AGENTMEM_OPENSEARCH_CREATE_INDEX": "true"}
            self._function(REINDEX, target, network)
            self._grant(REINDEX, tables, queues, search, graph, key)
        self.event_sources = self._event_sources(tables, queues)
        self.schedules = self._schedules(queues)

    # ------------------------------------------------------------------ functions

    def _function(self, name: str, settings: dict[str, str], network: Network) -> None:
        spec = self.config.functions[name]
        log_group = logs.LogGroup(
            self,
            f"{name.capitalize()}Logs",
            retention=self.config.log_retention,
            removal_policy=RemovalPolicy.RETAIN if self.config.retain_data else RemovalPolicy.DESTROY,
        )
        role = iam.Role(
            self,
            f"{name.capitalize()}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"agentmem {name} function (least privilege, inline statements only)",
        )
        log_group.grant_write(role)
        vpc_access(role)
        sg = network.security_group(
            f"{name.capitalize()}Sg", f"agentmem {name} function: egress to AWS APIs, OpenSearch, Neptune"
        )
        environment = {
            **settings,
            "POWERTOOLS_SERVICE_NAME": f"agentmem-{name}",
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": self.config.log_level,
        }
        fn = lambda_.Function(
            self,
            name.capitalize(),
            description=DESCRIPTIONS[name],
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.handler",
            code=lambda_.Code.from_asset(str(FUNCTIONS_DIR / name), exclude=["**/__pycache__", "**/*.pyc"]),
            layers=[self.layer],
            role=role,
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_s),
            reserved_concurrent_executions=spec.reserved_concurrency,
            environment=environment,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            vpc=network.vpc,
            vpc_subnets=network.private,
            security_groups=[sg],
        )
        self.functions[name] = fn
        self.roles[name] = role
        self.security_groups[name] = sg
        self.log_groups[name] = log_group

    def _grant(
        self,
        name: str,
        tables: Tables,
        queues: Queues,
        search: SearchDomain,
        graph: GraphCluster,
        key: kms.IKey | None,
    ) -> None:
        access = ACCESS[name]
        role = self.roles[name]
        for table, actions in ((tables.memory, access.memory), (tables.session, access.session)):
            if actions:
                _table_statement(role, table, actions)
        if access.audit:
            _table_statement(role, tables.audit, AUDIT_ACTIONS)
        if key is not None and (access.memory or access.session or access.audit):
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
                    resources=[key.key_arn],
                    conditions={"StringEquals": {"kms:ViaService": f"dynamodb.{Aws.REGION}.amazonaws.com"}},
                )
            )
        if access.opensearch:
            search.grant(name, role, self.security_groups[name])
        if access.neptune:
            graph.grant(name, role, self.security_groups[name], access.neptune)
        models: list[str] = []
        embedder, embed_model = self._embedder_of(name)
        if access.bedrock_embed and embedder != "openai-compatible":
            models += bedrock_model_arns(embed_model)
        if access.bedrock_llm and self.config.bedrock_llm_enabled:
            models += bedrock_model_arns(self.config.bedrock_llm_model)
        if models:
            # Converse is authorised as bedrock:InvokeModel; no streaming is used.
            role.add_to_policy(iam.PolicyStatement(actions=["bedrock:InvokeModel"], resources=models))
        if self.config.openai_key_secret_arn and (access.bedrock_embed or access.bedrock_llm):
            # the OpenAI-compatible server's key, read once per cold start by the functions that call a model
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=["secretsmanager:GetSecretValue"], resources=[self.config.openai_key_secret_arn]
                )
            )
        if access.send_to_queue:
            role.add_to_policy(
                iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queues.ingest.queue_arn])
            )
        if access.dead_letters:  # listed by receiving (visibility given back), redriven, deleted
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=["sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage"],
                    resources=[queues.ingest_dlq.queue_arn],
                )
            )

    def _embedder_of(self, name: str) -> tuple[str, str]:
        """The embedder a function runs and its Bedrock model: the reindex function's is the
        new model's (``agentmem:reindexTo``), every other function's the stack's."""
        stack = (
            self.config.openai_settings.get("AGENTMEM_EMBEDDER", "bedrock"),
            self.config.bedrock_embed_model,
        )
        if name != REINDEX:
            return stack
        target = self.config.reindex_settings
        embedder = target.get("AGENTMEM_EMBEDDER", stack[0])
        return embedder, target.get("AGENTMEM_BEDROCK_EMBED_MODEL", stack[1])

    # ------------------------------------------------------------------ triggers

    def _event_sources(
        self, tables: Tables, queues: Queues
    ) -> dict[str, sources.SqsEventSource | sources.DynamoEventSource]:
        """The ingest queue and the memory stream, both with partial batch responses and the
        event source mapping's ``EventCount`` metrics on: with partial batch responses a failed
        record never shows in the function's ``Errors``; ``FailedInvokeEventCount`` counts it
        (``monitoring.py`` alarms on it)."""
        counted = lambda_.MetricsConfig(metrics=[lambda_.MetricType.EVENT_COUNT])
        ingest = sources.SqsEventSource(
            queues.ingest,
            batch_size=10,
            max_batching_window=Duration.seconds(1),
            report_batch_item_failures=True,
            max_concurrency=max(2, self.config.ingest_max_concurrency),
            metrics_config=counted,
        )
        self.functions["ingest"].add_event_source(ingest)
        projector = sources.DynamoEventSource(
            tables.memory,
            starting_position=lambda_.StartingPosition.TRIM_HORIZON,
            batch_size=STREAM_BATCH_SIZE,
            max_batching_window=Duration.seconds(1),
            bisect_batch_on_error=True,
            retry_attempts=STREAM_RETRY_ATTEMPTS,
            max_record_age=Duration.hours(24),
            report_batch_item_failures=True,
            parallelization_factor=self.config.projector_parallelization,
            on_failure=sources.SqsDlq(queues.projector_failures),
            # Only memory items (sk = MEM#...): the PENDING counters, SCOPE registry entries and
            # VEC# vector items are ignored by the codec anyway; filtering saves their invocations.
            filters=[
                lambda_.FilterCriteria.filter(
                    {"dynamodb": {"Keys": {"sk": {"S": lambda_.FilterRule.begins_with(MEMORY_SK_PREFIX)}}}}
                )
            ],
            metrics_config=counted,
        )
        self.functions["projector"].add_event_source(projector)
        return {"ingest": ingest, "projector": projector}

    def _schedules(self, queues: Queues) -> dict[str, events.Rule]:
        rules = {}
        for name, every in SCHEDULES.items():
            # reconcile: one target per segment, each owning a disjoint part of the scopes
            segments = self.config.reconcile_segments if name == "reconcile" else 1
            inputs = [
                events.RuleTargetInput.from_object({"segment": i, "segments": segments})
                if segments > 1
                else None
                for i in range(segments)
            ]
            rules[name] = events.Rule(
                self,
                f"{name.capitalize()}Schedule",
                description=f"agentmem {name}: every {every.to_human_string()}",
                schedule=events.Schedule.rate(every),
                targets=[
                    targets.LambdaFunction(
                        self.functions[name],
                        event=event,
                        retry_attempts=2,
                        max_event_age=Duration.minutes(30),
                        dead_letter_queue=queues.schedule_dlq,
                    )
                    for event in inputs
                ],
            )
        return rules


def _table_statement(role: iam.Role, table: dynamodb.Table, actions: tuple[str, ...]) -> None:
    resources: list[Any] = [table.table_arn]
    if "dynamodb:Query" in actions:
        resources.append(f"{table.table_arn}/index/*")
    role.add_to_policy(iam.PolicyStatement(actions=sorted(set(actions)), resources=resources))
