"""The VPC the OpenSearch domain, the Neptune cluster and the functions that reach them share."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
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

    def security_group(
        self, id: str, description: str, *, allow_all_outbound: bool = True
    ) -> ec2.SecurityGroup:
        return ec2.SecurityGroup(
            self, id, vpc=self.vpc, description=description, allow_all_outbound=allow_all_outbound
        )
