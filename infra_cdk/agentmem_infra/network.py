"""The VPC the OpenSearch domain, the Neptune cluster and the functions that reach them share."""

from __future__ import annotations

from typing import cast

from aws_cdk import CfnResource, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from agentmem_infra.config import EnvConfig


class Network(Construct):
    """Two AZs; private subnets with NAT egress (Bedrock, SQS, X-Ray, Cognito are public AWS
    endpoints) and a free DynamoDB gateway endpoint; flow logs to CloudWatch Logs."""

    def __init__(self, scope: Construct, id: str, *, config: EnvConfig) -> None:
        super().__init__(scope, id)
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=config.nat_gateways,
            restrict_default_security_group=True,  # strips the default SG rules (custom resource)
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24),
                ec2.SubnetConfiguration(
                    name="private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS, cidr_mask=22
                ),
            ],
            gateway_endpoints={
                "DynamoDb": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.DYNAMODB)
            },
        )
        flow_logs = logs.LogGroup(
            self,
            "FlowLogs",
            retention=config.log_retention,
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        self.vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        self.private = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self._provider_logs(config)

    def _provider_logs(self, config: EnvConfig) -> None:
        """The log group of CDK's provider function that strips the default security group: Lambda
        would create it on the first run with no retention, so it is declared first."""
        stack = Stack.of(self)
        provider = stack.node.try_find_child("Custom::VpcRestrictDefaultSGCustomResourceProvider")
        handler = provider.node.try_find_child("Handler") if provider is not None else None
        custom = self.vpc.node.try_find_child("RestrictDefaultSecurityGroupCustomResource")
        if handler is None or custom is None:  # another CDK release: the synthesis test says so
            return
        group = logs.LogGroup(
            self,
            "RestrictDefaultSgLogs",
            log_group_name=Fn.join("", ["/aws/lambda/", cast(CfnResource, handler).ref]),
            retention=config.log_retention,
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        custom.node.add_dependency(group)

    def security_group(
        self, id: str, description: str, *, allow_all_outbound: bool = True
    ) -> ec2.SecurityGroup:
        return ec2.SecurityGroup(
            self, id, vpc=self.vpc, description=description, allow_all_outbound=allow_all_outbound
        )
