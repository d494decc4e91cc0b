"""CloudWatch alarms (every environment, dev included) and their SNS topic.

What a deployment hits, by where it shows:

* **record failures.** With partial batch responses (``ReportBatchItemFailures``) a failed record
  never fails the invocation, so Lambda ``Errors`` stays 0 while turns are retried and dead-lettered.
  The handlers emit no failed-record metric of their own (Powertools' ``BatchProcessor`` counts
  nothing), so the alarms use what AWS emits: each event source mapping's
  ``FailedInvokeEventCount`` (``MetricsConfig: EventCount``, set in ``compute.py``; it counts the
  events of every response with a non-empty ``batchItemFailures``), the stream's
  ``DroppedEventCount``, the depth of **every** dead-letter queue, the age of the oldest turn on
  the ingest queue and the projector's ``IteratorAge``;
* **functions**: ``Errors`` (whole invocations) and ``Throttles``; the API's 5xx;
* **OpenSearch**: cluster red / yellow, writes blocked, write and search thread pool rejections,
  5xx, free storage, JVM pressure (data and master nodes), CPU, snapshot failures;
* **Neptune**: CPU, buffer cache hit ratio (the working set no longer fits in memory), requests
  queued (Neptune throttles when that queue fills), server errors;
* **DynamoDB**: read and write throttle events of each table and of each global secondary index
  (a throttled GSI throttles the table's writes).

Alarm actions go to one SNS topic (TLS-only, encrypted with its own CMK: CloudWatch cannot
publish to a topic under the AWS managed ``aws/sns`` key, whose policy it is not in);
``-c agentmem:alarmEmail=...`` subscribes an address to it.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Aws, Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from agentmem_infra.config import EnvConfig
from agentmem_infra.data import REQUESTS, Queues, Tables
from agentmem_infra.graph import GraphCluster
from agentmem_infra.search import SearchDomain

ITERATOR_AGE_MS = 5 * 60 * 1000  # the projections lag the source of truth by more than 5 minutes
INGEST_AGE_S = 10 * 60  # a turn waited 10 minutes: retried records or a stalled consumer
GTE = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
GT = cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD
LTE = cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD
LT = cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD
FIVE_MINUTES = Duration.minutes(5)
ONE_MINUTE = Duration.minutes(1)

EventSources = Mapping[str, sources.SqsEventSource | sources.DynamoEventSource]


class Alarms(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        queues: Queues,
        tables: Tables,
        search: SearchDomain,
        graph: GraphCluster,
        event_sources: EventSources,
        functions: dict[str, lambda_.IFunction],
        rest_api: apigw.RestApi,
    ) -> None:
        super().__init__(scope, id)
        self.config = config
        self.key = kms.Key(
            self,
            "TopicKey",
            description=f"agentmem {config.name}: alarm topic (CloudWatch may publish)",
            enable_key_rotation=True,
            removal_policy=config.removal_policy,
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
                conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
            )
        )
        self.topic = sns.Topic(
            self,
            "Topic",
            display_name=f"agentmem {config.name} alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        if config.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        self._action = actions.SnsAction(self.topic)
        self.alarms: list[cloudwatch.Alarm] = []

        self._records(queues, event_sources, functions)
        self._functions(functions, rest_api)
        self._search(search)
        self._graph(graph)
        self._tables(tables)

    # ------------------------------------------------------------------ record failures

    def _records(
        self, queues: Queues, event_sources: EventSources, functions: dict[str, lambda_.IFunction]
    ) -> None:
        for name, queue, what in (
            ("IngestDlq", queues.ingest_dlq, "turns dead-lettered after 5 receives"),
            ("ProjectorFailures", queues.projector_failures, "stream batches the projector gave up on"),
            ("ScheduleDlq", queues.schedule_dlq, "undelivered consolidate/reconcile schedules"),
        ):
            self._add(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES, statistic="Maximum"),
                threshold=0,
                comparison=GT,
                description=f"{what}: inspect, fix, then redrive",
            )
        for name, source in event_sources.items():
            mapping = {"EventSourceMappingUUID": source.event_source_mapping_id}
            self._add(
                f"{name.capitalize()}FailedRecords",
                _lambda_metric("FailedInvokeEventCount", mapping),
                threshold=1,
                evaluation_periods=3,
                datapoints_to_alarm=2,
                description=f"{name}: records keep failing (partial batch failures; Errors does not count them)",
            )
            if isinstance(source, sources.DynamoEventSource):
                self._add(
                    f"{name.capitalize()}DroppedRecords",
                    _lambda_metric("DroppedEventCount", mapping),
                    threshold=1,
                    description=f"{name}: stream records dropped after their retries or maximum age",
                )
        self._add(
            "IngestQueueAge",
            queues.ingest.metric_approximate_age_of_oldest_message(period=FIVE_MINUTES, statistic="Maximum"),
            threshold=INGEST_AGE_S,
            evaluation_periods=3,
            datapoints_to_alarm=2,
            description="turns wait over 10 minutes on the ingest queue (retried records or no consumer)",
        )
        self._add(
            "ProjectorIteratorAge",
            functions["projector"].metric("IteratorAge", period=ONE_MINUTE, statistic="Maximum"),
            threshold=ITERATOR_AGE_MS,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            description="the search index and graph lag DynamoDB by more than 5 minutes",
        )

    # ------------------------------------------------------------------ functions + API

    def _functions(self, functions: dict[str, lambda_.IFunction], rest_api: apigw.RestApi) -> None:
        for name, fn in functions.items():
            self._add(
                f"{name.capitalize()}Errors",
                fn.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"the {name} function failed (whole invocations; record failures: *FailedRecords)",
            )
            self._add(
                f"{name.capitalize()}Throttles",
                fn.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
                threshold=5,
                description=f"the {name} function is being throttled",
            )
        self._add(
            "Api5xx",
            rest_api.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            threshold=5,
            description="the API answered 5xx (includes 503 degraded stores)",
        )

    # ------------------------------------------------------------------ OpenSearch

    def _search(self, search: SearchDomain) -> None:
        domain = search.domain
        add = self._add
        add(
            "SearchRed",
            domain.metric_cluster_status_red(period=ONE_MINUTE, statistic="Maximum"),
            threshold=1,
            description="OpenSearch is red: a primary shard is unassigned",
        )
        add(
            "SearchYellow",
            domain.metric_cluster_status_yellow(period=ONE_MINUTE, statistic="Maximum"),
            threshold=1,
            evaluation_periods=5,
            description="OpenSearch yellow for 5 minutes: a replica has no node to live on",
        )
        add(
            "SearchWritesBlocked",
            domain.metric_cluster_index_writes_blocked(period=FIVE_MINUTES, statistic="Maximum"),
            threshold=1,
            description="OpenSearch blocks writes (storage or memory): nothing is projected",
        )
        add(
            "SearchWriteRejected",
            domain.metric("ThreadpoolWriteRejected", period=FIVE_MINUTES, statistic="Sum"),
            threshold=1,
            description="OpenSearch rejects writes (write thread pool full): throttling",
        )
        add(
            "SearchSearchRejected",
            domain.metric("ThreadpoolSearchRejected", period=FIVE_MINUTES, statistic="Sum"),
            threshold=1,
            description="OpenSearch rejects searches (search thread pool full): throttling",
        )
        add(
            "Search5xx",
            domain.metric("5xx", period=FIVE_MINUTES, statistic="Sum"),
            threshold=10,
            description="OpenSearch answers 5xx",
        )
        add(
            "SearchFreeStorage",
            domain.metric_free_storage_space(period=ONE_MINUTE, statistic="Minimum"),
            threshold=self.config.opensearch_volume_gib * 1024 * 0.25,
            comparison=LTE,
            description="an OpenSearch node has under 25% of its storage free (MiB)",
        )
        add(
            "SearchJvmPressure",
            domain.metric_jvm_memory_pressure(period=ONE_MINUTE, statistic="Maximum"),
            threshold=95,
            evaluation_periods=3,
            description="OpenSearch JVM memory pressure >= 95%",
        )
        add(
            "SearchCpu",
            domain.metric_cpu_utilization(period=Duration.minutes(15), statistic="Maximum"),
            threshold=80,
            evaluation_periods=3,
            description="OpenSearch data nodes over 80% CPU for 45 minutes",
        )
        add(
            "SearchSnapshotFailure",
            domain.metric_automated_snapshot_failure(period=ONE_MINUTE, statistic="Maximum"),
            threshold=1,
            description="an OpenSearch automated snapshot failed",
        )
        if self.config.opensearch_master_nodes:
            add(
                "SearchMasterJvmPressure",
                domain.metric_master_jvm_memory_pressure(period=ONE_MINUTE, statistic="Maximum"),
                threshold=95,
                description="OpenSearch dedicated master JVM memory pressure >= 95%",
            )

    # ------------------------------------------------------------------ Neptune

    def _graph(self, graph: GraphCluster) -> None:
        def metric(name: str, statistic: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace="AWS/Neptune",
                metric_name=name,
                dimensions_map={"DBClusterIdentifier": graph.cluster.ref},
                period=FIVE_MINUTES,
                statistic=statistic,
            )

        add = self._add
        add(
            "GraphCpu",
            metric("CPUUtilization", "Maximum"),
            threshold=80,
            evaluation_periods=3,
            description="Neptune over 80% CPU for 15 minutes",
        )
        add(
            "GraphBufferCache",
            metric("BufferCacheHitRatio", "Average"),
            threshold=99,
            comparison=LT,
            evaluation_periods=3,
            description="Neptune buffer cache hits under 99%: the working set outgrew memory",
        )
        add(
            "GraphQueuedRequests",
            metric("MainRequestQueuePendingRequests", "Average"),
            threshold=10,
            evaluation_periods=3,
            description="Neptune requests queue up (it throttles once the queue is full)",
        )
        add(
            "GraphServerErrors",
            metric("TotalServerErrorsPerSec", "Average"),
            threshold=0,
            comparison=GT,
            evaluation_periods=3,
            datapoints_to_alarm=2,
            description="Neptune answers server errors",
        )

    # ------------------------------------------------------------------ DynamoDB

    def _tables(self, tables: Tables) -> None:
        for name in REQUESTS:
            table: dynamodb.Table = getattr(tables, name)
            indexes = [i["IndexName"] for i in REQUESTS[name](name).get("GlobalSecondaryIndexes", [])]
            for index in (None, *indexes):
                dimensions = {"TableName": table.table_name}
                if index is not None:
                    dimensions["GlobalSecondaryIndexName"] = index
                where = f"the {name} table" + (f" index {index}" if index else "")
                for kind in ("Read", "Write"):
                    suffix = "".join(p.capitalize() for p in (index or "").replace("-", "_").split("_"))
                    self._add(
                        f"{name.capitalize()}{suffix}{kind}Throttles",
                        cloudwatch.Metric(
                            namespace="AWS/DynamoDB",
                            metric_name=f"{kind}ThrottleEvents",
                            dimensions_map=dimensions,
                            period=FIVE_MINUTES,
                            statistic="Sum",
                        ),
                        threshold=1,
                        evaluation_periods=3,
                        datapoints_to_alarm=2,
                        description=f"DynamoDB throttles {kind.lower()}s on {where}",
                    )

    # ------------------------------------------------------------------ plumbing

    def _add(
        self,
        id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        comparison: cloudwatch.ComparisonOperator = GTE,
        evaluation_periods: int = 1,
        datapoints_to_alarm: int | None = None,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            comparison_operator=comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"agentmem {self.config.name}: {description}",
        )
        alarm.add_alarm_action(self._action)
        self.alarms.append(alarm)


def _lambda_metric(name: str, dimensions: dict[str, str]) -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace="AWS/Lambda",
        metric_name=name,
        dimensions_map=dimensions,
        period=FIVE_MINUTES,
        statistic="Sum",
    )
