"""Events on AWS (docs/events.md): the stack's event bus, which the ingest, api and projector
functions ``events:PutEvents`` onto; an archive of it (a replay is the redrive of a delivery that
was lost downstream); the dead-letter queue and the role that webhook rules use — each webhook is
one rule on this bus (``detail.tenant_id`` and the event types) targeting an EventBridge API
destination, whose connection holds the webhook's secret as an API-key header."""

from __future__ import annotations

from aws_cdk import Aws, CfnOutput, Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agentmem_infra.config import EnvConfig

PUBLISHERS = ("ingest", "api", "projector")  # turn outcomes and erases; memory changes (the stream)
SOURCE = "agentmem"


class EventBus(Construct):
    def __init__(
        self, scope: Construct, id: str, *, config: EnvConfig, functions: dict[str, lambda_.Function]
    ) -> None:
        super().__init__(scope, id)
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"agentmem-{config.name}-events")
        self.archive = self.bus.archive(
            "Archive",
            description="agentmem events, for replays (redrive) of deliveries lost downstream",
            event_pattern=events.EventPattern(source=[SOURCE]),
            retention=Duration.days(7),
        )
        self.dlq = sqs.Queue(
            self,
            "WebhookDlq",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            removal_policy=RemovalPolicy.DESTROY,
        )
        rules = f"arn:{Aws.PARTITION}:events:{Aws.REGION}:{Aws.ACCOUNT_ID}:rule/{self.bus.event_bus_name}/*"
        self.dlq.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("events.amazonaws.com")],
                actions=["sqs:SendMessage"],
                resources=[self.dlq.queue_arn],
                conditions={"ArnLike": {"aws:SourceArn": rules}},
            )
        )
        # The role webhook rules' targets name to invoke their API destination.
        self.delivery_role = iam.Role(
            self,
            "DeliveryRole",
            assumed_by=iam.ServicePrincipal("events.amazonaws.com"),
            description="agentmem webhooks: EventBridge invokes the webhooks' API destinations",
        )
        self.delivery_role.add_to_policy(
            iam.PolicyStatement(
                actions=["events:InvokeApiDestination"],
                resources=[
                    f"arn:{Aws.PARTITION}:events:{Aws.REGION}:{Aws.ACCOUNT_ID}:api-destination/agentmem-*/*"
                ],
            )
        )
        for name, fn in functions.items():
            fn.add_environment("AGENTMEM_EVENT_BUS_NAME", self.bus.event_bus_name)
            if name in PUBLISHERS and fn.role is not None:
                fn.role.add_to_principal_policy(
                    iam.PolicyStatement(actions=["events:PutEvents"], resources=[self.bus.event_bus_arn])
                )
        self._registry(functions["api"])
        self._outputs(scope)

    def _registry(self, api: lambda_.Function) -> None:
        """What ``/v1/webhooks`` needs (agentmem.adapters.aws.eventbridge_webhooks): the tenant's
        rules on this bus, the connections and API destinations named agentmem-*, passing the
        delivery role to targets; EventBridge stores a connection's key in Secrets Manager under
        ``events!connection/*`` with the caller's permissions."""
        api.add_environment("AGENTMEM_WEBHOOK_ROLE_ARN", self.delivery_role.role_arn)
        api.add_environment("AGENTMEM_WEBHOOK_DLQ_ARN", self.dlq.queue_arn)
        arn = f"arn:{Aws.PARTITION}:events:{Aws.REGION}:{Aws.ACCOUNT_ID}"
        bus = self.bus.event_bus_name
        role = api.role
        assert role is not None
        statements = [
            (
                [
                    "events:PutRule",
                    "events:PutTargets",
                    "events:RemoveTargets",
                    "events:DeleteRule",
                    "events:DescribeRule",
                ],
                [f"{arn}:rule/{bus}/agentmem-*"],
            ),
            (["events:ListRules"], ["*"]),  # no resource-level permission exists for it
            (
                ["events:CreateConnection", "events:DeleteConnection", "events:DescribeConnection"],
                [f"{arn}:connection/agentmem-*"],
            ),
            (
                [
                    "events:CreateApiDestination",
                    "events:DeleteApiDestination",
                    "events:DescribeApiDestination",
                ],
                [f"{arn}:api-destination/agentmem-*"],
            ),
            (["iam:PassRole"], [self.delivery_role.role_arn]),
            (
                [
                    "secretsmanager:CreateSecret",
                    "secretsmanager:PutSecretValue",
                    "secretsmanager:DeleteSecret",
                    "secretsmanager:DescribeSecret",
                    "secretsmanager:TagResource",
                ],
                [
                    f"arn:{Aws.PARTITION}:secretsmanager:{Aws.REGION}:{Aws.ACCOUNT_ID}:secret:events!connection/agentmem-*"
                ],
            ),
        ]
        self.registry_wildcards = [
            r for _, resources in statements for r in resources if r.endswith("*") and r != "*"
        ]
        for actions, resources in statements:
            role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=resources))

    def _outputs(self, scope: Construct) -> None:
        for output, (value, description) in {
            "EventBusName": (self.bus.event_bus_name, "AGENTMEM_EVENT_BUS_NAME: webhook rules go on it"),
            "WebhookDlqArn": (self.dlq.queue_arn, "the dead-letter queue webhook targets name"),
            "WebhookDeliveryRoleArn": (self.delivery_role.role_arn, "the RoleArn webhook targets name"),
        }.items():
            CfnOutput(scope, output, value=value, description=description)
