"""The Neptune cluster (GraphStore, Gremlin over WebSocket, IAM SigV4) in the VPC.

Declared with the L1 ``AWS::Neptune::*`` resources (the L2 construct is still an alpha package).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Aws, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_neptune as neptune
from constructs import Construct

from agentmem_infra.config import EnvConfig
from agentmem_infra.network import Network

PORT = 8182


class GraphCluster(Construct):
    def __init__(
        self, scope: Construct, id: str, *, config: EnvConfig, network: Network, key: kms.IKey | None
    ) -> None:
        super().__init__(scope, id)
        # agentmem-<env>-<the last 12 hex digits of this stack's id>: unique to each creation of
        # the stack, stable across its updates. Neptune writes the audit log to a group named
        # after the cluster, and prod retains that group when the stack goes: a fixed name would
        # make re-creating the stack fail on the group left behind.
        stack_uuid = Fn.select(2, Fn.split("/", Aws.STACK_ID))
        self.cluster_identifier = f"agentmem-{config.name}-{Fn.select(4, Fn.split('-', stack_uuid))}"
        self.security_group = network.security_group(
            "ClusterSg", "agentmem Neptune cluster: Gremlin (8182) from the functions that use the graph only"
        )
        subnets = network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        subnet_group = neptune.CfnDBSubnetGroup(
            self,
            "SubnetGroup",
            db_subnet_group_description=f"agentmem {config.name} Neptune (private subnets, 2 AZs)",
            subnet_ids=subnets.subnet_ids,
        )
        parameters = neptune.CfnDBClusterParameterGroup(
            self,
            "ClusterParameters",
            description=f"agentmem {config.name}: audit log on",
            family=config.neptune_parameter_family,
            parameters={"neptune_enable_audit_log": 1},
        )
        # Neptune writes the audit log to /aws/neptune/<cluster>/audit; declaring the group (before
        # the cluster, so before any instance can write) sets its retention.
        self.audit_logs = logs.LogGroup(
            self,
            "AuditLogs",
            log_group_name=f"/aws/neptune/{self.cluster_identifier}/audit",
            retention=config.log_retention,
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        self.cluster = neptune.CfnDBCluster(
            self,
            "Cluster",
            db_cluster_identifier=self.cluster_identifier,
            engine_version=config.neptune_engine_version,
            db_cluster_parameter_group_name=parameters.ref,
            db_subnet_group_name=subnet_group.ref,
            vpc_security_group_ids=[self.security_group.security_group_id],
            iam_auth_enabled=True,
            storage_encrypted=True,
            kms_key_id=key.key_arn if key else None,
            deletion_protection=config.deletion_protection,
            backup_retention_period=config.neptune_backup_days,
            preferred_backup_window="02:00-03:00",
            preferred_maintenance_window="sun:03:30-sun:04:30",
            enable_cloudwatch_logs_exports=["audit"],
            copy_tags_to_snapshot=True,
        )
        self.cluster.node.add_dependency(self.audit_logs)
        self.cluster.apply_removal_policy(
            RemovalPolicy.SNAPSHOT if config.retain_data else RemovalPolicy.DESTROY
        )
        self.instances = []
        for i in range(config.neptune_instances):
            instance = neptune.CfnDBInstance(
                self,
                f"Instance{i + 1}",
                db_cluster_identifier=self.cluster.ref,
                db_instance_class=config.neptune_instance_class,
                auto_minor_version_upgrade=True,
                availability_zone=subnets.subnets[i % len(subnets.subnets)].availability_zone,
            )
            instance.apply_removal_policy(RemovalPolicy.DESTROY)  # data lives in the cluster volume
            self.instances.append(instance)
        self.endpoint = self.cluster.attr_endpoint
        self.port = self.cluster.attr_port
        # neptune-db:* actions are authorised on the cluster *resource id*, not its identifier.
        self.data_arn = Stack.of(self).format_arn(
            service="neptune-db",
            resource=self.cluster.attr_cluster_resource_id,
            resource_name="*",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )

    def grant(
        self, name: str, role: iam.IRole, security_group: ec2.ISecurityGroup, actions: tuple[str, ...]
    ) -> None:
        role.add_to_principal_policy(iam.PolicyStatement(actions=list(actions), resources=[self.data_arn]))
        self.security_group.add_ingress_rule(
            security_group, ec2.Port.tcp(PORT), f"Gremlin from the {name} function"
        )
