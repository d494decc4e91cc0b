"""The OpenSearch index template and index, set up once per deploy (not on every cold start).

A ``Custom::AgentMemIndex`` resource (CDK Provider framework) runs ``infra_cdk/lambdas/index_setup`` with the
shared layer on Create and Update: it puts the index template and creates the index, or aligns the
live index's ``number_of_replicas`` (``agentmem.adapters.aws.opensearch_setup``). Its properties
are the index name, the embedding dimension, this environment's replicas and a hash of the
template the layer's code builds from them, so a deploy that changes any of these (a new mapping
field included) updates the index and a deploy that changes nothing does not run it. Delete keeps
the index (a projection of DynamoDB; the domain follows the stack's own removal policy).

The setup function is one more client of the domain (IAM + FGAC role mapping + port 443) and
runs after the role mapping; the application functions are created after it, so their event
sources never start on a missing index. They receive ``AGENTMEM_OPENSEARCH_CREATE_INDEX=false``.
"""

from __future__ import annotations

from aws_cdk import Aws, CustomResource, Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from agentmem.adapters.aws.opensearch_setup import IndexSpec, template_hash
from agentmem_infra import INFRA_DIR
from agentmem_infra.bundling import ARCHITECTURE, EXCLUDES, RUNTIME
from agentmem_infra.config import EnvConfig
from agentmem_infra.network import Network
from agentmem_infra.search import SearchDomain, vpc_access

RESOURCE_TYPE = "Custom::AgentMemIndex"


def embed_dimension(config: EnvConfig) -> int:
    """The vectors' dimension: the OpenAI-compatible embedder's when the stack uses one, else Titan's."""
    if config.openai_settings.get("AGENTMEM_EMBEDDER") == "openai-compatible":
        return int(config.openai_settings["AGENTMEM_OPENAI_EMBED_DIMENSION"])
    return config.bedrock_embed_dimension


def index_spec(config: EnvConfig) -> IndexSpec:
    """What the deploy asks of the index: the name and dimension the functions use, the replicas."""
    return IndexSpec(
        index=config.opensearch_index,
        dimension=embed_dimension(config),
        replicas=config.opensearch_replicas,
    )


class IndexSetup(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        network: Network,
        search: SearchDomain,
        layer: lambda_.ILayerVersion,
    ) -> None:
        super().__init__(scope, id)
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.spec = index_spec(config)
        log_group = logs.LogGroup(self, "Logs", retention=config.log_retention, removal_policy=removal)
        self.role = _role(self, "Role", "agentmem index setup custom resource (OpenSearch template + index)")
        log_group.grant_write(self.role)
        vpc_access(self.role)
        self.security_group = network.security_group(
            "IndexSetupSg", "agentmem index setup custom resource: HTTPS to the OpenSearch domain"
        )
        self.function = lambda_.Function(
            self,
            "Function",
            description="agentmem setup: OpenSearch index template + index, once per deploy",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.handler",
            code=lambda_.Code.from_asset(str(INFRA_DIR / "lambdas" / "index_setup"), exclude=EXCLUDES),
            layers=[layer],
            role=self.role,
            memory_size=512,
            timeout=Duration.minutes(5),  # bounded retries (opensearch_setup.ATTEMPTS) fit well inside
            environment={
                "AGENTMEM_AWS_REGION": Aws.REGION,
                "AGENTMEM_OPENSEARCH_ENDPOINT": f"https://{search.endpoint}",
                "AGENTMEM_OPENSEARCH_SERVICE": "es",
                "AGENTMEM_OPENSEARCH_INDEX": config.opensearch_index,
                "AGENTMEM_OPENSEARCH_REPLICAS": str(config.opensearch_replicas),
                "POWERTOOLS_SERVICE_NAME": "agentmem-setup",
                "POWERTOOLS_LOG_LEVEL": config.log_level,
            },
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            vpc=network.vpc,
            vpc_subnets=network.private,
            security_groups=[self.security_group],
        )
        search.grant("index setup", self.role, self.security_group)
        # The framework's own function gets an inline-only role too (its default is the AWS
        # managed AWSLambdaBasicExecutionRole); the Provider adds lambda:InvokeFunction on ours.
        provider_logs = logs.LogGroup(
            self, "ProviderLogs", retention=config.log_retention, removal_policy=removal
        )
        self.provider_role = _role(
            self, "ProviderRole", "agentmem index setup: CloudFormation provider framework"
        )
        provider_logs.grant_write(self.provider_role)
        self.provider = cr.Provider(
            self,
            "Provider",
            on_event_handler=self.function,
            log_group=provider_logs,
            framework_on_event_role=self.provider_role,
        )
        self.resource = CustomResource(
            self,
            "Index",
            service_token=self.provider.service_token,
            resource_type=RESOURCE_TYPE,
            properties={
                "Index": self.spec.index,
                "Dimension": str(self.spec.dimension),
                "Replicas": str(self.spec.replicas),
                "TemplateHash": template_hash(self.spec),
            },
        )

    def after(self, *dependencies: Construct) -> None:
        """Run the setup only once ``dependencies`` exist (the domain's FGAC role mapping)."""
        for dependency in dependencies:
            self.resource.node.add_dependency(dependency)


def _role(scope: Construct, id: str, description: str) -> iam.Role:
    return iam.Role(
        scope, id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"), description=description
    )
