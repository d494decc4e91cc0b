"""The OpenSearch domain (k-NN + BM25 projection) in the VPC, with fine-grained access control.

Access has two layers, both least privilege:

* IAM: the domain's resource policy lets only the roles of the functions that use the index (and
  the role-mapping function) call ``es:ESHttp*`` on ``domain/<name>/*``;
* FGAC: the master user is the role of the ``AccessFunction`` custom-resource handler, which maps the
  functions' roles (as backend roles) to an ``agentmem_app`` security role restricted to the
  ``<index>*`` indices (``lambdas/opensearch_access/handler.py``).
"""

from __future__ import annotations

from aws_cdk import Aws, CustomResource, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

from agentmem_infra import INFRA_DIR
from agentmem_infra.bundling import ARCHITECTURE, EXCLUDES, RUNTIME
from agentmem_infra.config import EnvConfig
from agentmem_infra.network import Network

HTTP_ACTIONS = ("es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete")
SECURITY_ROLE = "agentmem_app"


class SearchDomain(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        network: Network,
        key: kms.IKey | None,
        create_service_linked_role: bool = False,
    ) -> None:
        super().__init__(scope, id)
        self.config = config
        # agentmem-<env>-<the first 8 hex digits of this stack's id> (at most 28 characters):
        # prod retains the domain when the stack goes, so a fixed name would make re-creating
        # the stack fail on the domain left behind (as the Neptune audit log group did).
        stack_uuid = Fn.select(2, Fn.split("/", Aws.STACK_ID))
        self.domain_name = f"agentmem-{config.name}-{Fn.select(0, Fn.split('-', stack_uuid))}"
        self.security_group = network.security_group(
            "DomainSg", "agentmem OpenSearch domain: HTTPS from the functions that use the index only"
        )
        removal = config.removal_policy
        log_removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        log_groups = {
            name: logs.LogGroup(
                self, f"{name}Logs", retention=config.log_retention, removal_policy=log_removal
            )
            for name in ("SlowSearch", "SlowIndex", "App", "Audit")
        }
        # The master user of fine-grained access control; only the role-mapping function assumes it.
        self.admin_role = iam.Role(
            self,
            "AccessAdminRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="OpenSearch FGAC master user: maps the agentmem function roles to agentmem_app",
        )
        zone_count = 2 if config.opensearch_zone_awareness else 1
        subnets = network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS).subnets[
            :zone_count
        ]
        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=self.domain_name,
            version=getattr(opensearch.EngineVersion, config.opensearch_version),
            vpc=network.vpc,
            vpc_subnets=[ec2.SubnetSelection(subnets=subnets)],
            security_groups=[self.security_group],
            capacity=opensearch.CapacityConfig(
                data_nodes=config.opensearch_data_nodes,
                data_node_instance_type=config.opensearch_instance_type,
                master_nodes=config.opensearch_master_nodes or None,
                master_node_instance_type=(
                    config.opensearch_master_instance_type if config.opensearch_master_nodes else None
                ),
                multi_az_with_standby_enabled=False,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(
                enabled=config.opensearch_zone_awareness,
                availability_zone_count=2 if config.opensearch_zone_awareness else None,
            ),
            ebs=opensearch.EbsOptions(
                volume_size=config.opensearch_volume_gib, volume_type=ec2.EbsDeviceVolumeType.GP3
            ),
            node_to_node_encryption=True,
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True, kms_key=key),
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            fine_grained_access_control=opensearch.AdvancedSecurityOptions(
                master_user_arn=self.admin_role.role_arn
            ),
            logging=opensearch.LoggingOptions(
                slow_search_log_enabled=True,
                slow_search_log_group=log_groups["SlowSearch"],
                slow_index_log_enabled=True,
                slow_index_log_group=log_groups["SlowIndex"],
                app_log_enabled=True,
                app_log_group=log_groups["App"],
                audit_log_enabled=True,
                audit_log_group=log_groups["Audit"],
            ),
            # The CloudWatch Logs resource policy is declared below as a plain resource instead of
            # the construct's default custom resource (one Lambda fewer).
            suppress_logs_resource_policy=True,
            enable_auto_software_update=True,
            removal_policy=removal,
        )
        if create_service_linked_role:
            # A VPC domain needs AWSServiceRoleForAmazonOpenSearchService; it exists once per
            # account, so this is opt-in (-c agentmem:createServiceLinkedRole=true, first stack only).
            slr = iam.CfnServiceLinkedRole(
                self, "ServiceLinkedRole", aws_service_name="opensearchservice.amazonaws.com"
            )
            self.domain.node.add_dependency(slr)
        logs_policy = logs.CfnResourcePolicy(
            self,
            "LogsResourcePolicy",
            policy_name=f"agentmem-{config.name}-opensearch-logs",
            policy_document=Stack.of(self).to_json_string(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "es.amazonaws.com"},
                            "Action": ["logs:PutLogEvents", "logs:CreateLogStream"],
                            "Resource": [g.log_group_arn for g in log_groups.values()],
                            "Condition": {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
                        }
                    ],
                }
            ),
        )
        # CreateDomain validates log publishing when it is called: the policy must exist first
        # (CDK's own default path adds the same dependency; without it the two race).
        self.domain.node.add_dependency(logs_policy)
        self.endpoint = self.domain.domain_endpoint
        # ARN built from the fixed name (not the resource) so the access policy can sit on the
        # domain itself without a dependency cycle or the construct's custom resource.
        self.domain_arn = Stack.of(self).format_arn(
            service="es", resource="domain", resource_name=self.domain_name
        )
        self.index_arn = f"{self.domain_arn}/*"
        self._clients: list[iam.IRole] = [self.admin_role]
        self.admin_role.add_to_policy(
            iam.PolicyStatement(actions=list(HTTP_ACTIONS), resources=[self.index_arn])
        )
        self._access_function = self._mapper(network)

    def grant(self, name: str, role: iam.IRole, security_group: ec2.ISecurityGroup) -> None:
        """Let a function's role reach the index (IAM + FGAC mapping) and its SG reach port 443."""
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(HTTP_ACTIONS), resources=[self.index_arn])
        )
        self._clients.append(role)
        self.security_group.add_ingress_rule(
            security_group, ec2.Port.tcp(443), f"HTTPS from the {name} function"
        )

    def _mapper(self, network: Network) -> lambda_.Function:
        sg = network.security_group("AccessSg", "agentmem OpenSearch role-mapping custom resource")
        self.security_group.add_ingress_rule(sg, ec2.Port.tcp(443), "HTTPS from the role-mapping function")
        log_group = logs.LogGroup(
            self,
            "AccessLogs",
            retention=self.config.log_retention,
            removal_policy=RemovalPolicy.RETAIN if self.config.retain_data else RemovalPolicy.DESTROY,
        )
        log_group.grant_write(self.admin_role)
        vpc_access(self.admin_role)
        fn = lambda_.Function(
            self,
            "AccessFunction",
            description="Maps the agentmem function roles to the OpenSearch agentmem_app role (FGAC)",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.handler",
            code=lambda_.Code.from_asset(str(INFRA_DIR / "lambdas" / "opensearch_access"), exclude=EXCLUDES),
            role=self.admin_role,
            timeout=Duration.minutes(10),
            memory_size=256,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            vpc=network.vpc,
            vpc_subnets=network.private,
            security_groups=[sg],
        )
        return fn

    def finalize(self) -> None:
        """After every :meth:`grant`: the access policy and the FGAC role mapping."""
        principals = [iam.ArnPrincipal(r.role_arn) for r in self._clients]
        policy = iam.PolicyDocument(
            statements=[
                iam.PolicyStatement(
                    actions=list(HTTP_ACTIONS), principals=principals, resources=[self.index_arn]
                )
            ]
        )
        cfn = self.domain.node.default_child
        assert isinstance(cfn, opensearch.CfnDomain)
        cfn.access_policies = policy.to_json()
        self.role_mapping = mapping = CustomResource(
            self,
            "RoleMapping",
            service_token=self._access_function.function_arn,
            resource_type="Custom::OpenSearchRoleMapping",
            properties={
                "Endpoint": self.endpoint,
                "RoleName": SECURITY_ROLE,
                "IndexPattern": f"{self.config.opensearch_index}*",
                "BackendRoles": [r.role_arn for r in self._clients[1:]],
            },
        )
        mapping.node.add_dependency(self.domain)


def vpc_access(role: iam.Role) -> None:
    """The ENI permissions a VPC function's role needs (AWSLambdaVPCAccessExecutionRole, minus logs)."""
    role.add_to_policy(
        iam.PolicyStatement(
            actions=[
                "ec2:CreateNetworkInterface",
                "ec2:DescribeNetworkInterfaces",
                "ec2:DescribeSubnets",
                "ec2:DeleteNetworkInterface",
                "ec2:AssignPrivateIpAddresses",
                "ec2:UnassignPrivateIpAddresses",
            ],
            resources=["*"],
        )
    )
