"""CloudWatch alarms (staging and prod): dead letters, projector lag, function errors, API 5xx.

Alarm actions go to one SNS topic (TLS-only, encrypted with its own CMK: CloudWatch cannot
publish to a topic under the AWS managed ``aws/sns`` key, whose policy it is not in);
``-c agentmem:alarmEmail=...`` subscribes an address to it.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from agentmem_infra.config import EnvConfig
from agentmem_infra.data import Queues

ITERATOR_AGE_MS = 5 * 60 * 1000  # the projections lag the source of truth by more than 5 minutes


class Alarms(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        queues: Queues,
        functions: dict[str, lambda_.IFunction],
        rest_api: apigw.RestApi,
    ) -> None:
        super().__init__(scope, id)
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
        action = actions.SnsAction(self.topic)
        self.alarms: list[cloudwatch.Alarm] = []

        for name, queue, what in (
            ("IngestDlq", queues.ingest_dlq, "turns dead-lettered after 5 receives"),
            ("ProjectorFailures", queues.projector_failures, "stream batches the projector gave up on"),
            ("ScheduleDlq", queues.schedule_dlq, "undelivered consolidate/reconcile schedules"),
        ):
            self._add(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(5), statistic="Maximum"
                ),
                threshold=1,
                description=f"{what}: inspect, fix, then redrive",
                action=action,
            )
        self._add(
            "ProjectorIteratorAge",
            functions["projector"].metric("IteratorAge", period=Duration.minutes(1), statistic="Maximum"),
            threshold=ITERATOR_AGE_MS,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            description="the search index and graph lag DynamoDB by more than 5 minutes",
            action=action,
        )
        for name, fn in functions.items():
            self._add(
                f"{name.capitalize()}Errors",
                fn.metric_errors(period=Duration.minutes(5), statistic="Sum"),
                threshold=1,
                description=f"the {name} function failed (whole invocations, not partial batch items)",
                action=action,
            )
            self._add(
                f"{name.capitalize()}Throttles",
                fn.metric_throttles(period=Duration.minutes(5), statistic="Sum"),
                threshold=5,
                description=f"the {name} function is being throttled",
                action=action,
            )
        self._add(
            "Api5xx",
            rest_api.metric_server_error(period=Duration.minutes(5), statistic="Sum"),
            threshold=5,
            description="the API answered 5xx (includes 503 degraded stores)",
            action=action,
        )

    def _add(
        self,
        id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        action: actions.SnsAction,
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
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(action)
        self.alarms.append(alarm)
