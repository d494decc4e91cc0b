"""Every cdk-nag (AwsSolutions) acknowledgement of the stack, each scoped as narrowly as the finding
allows and each with its reason. Anything not acknowledged here fails ``cdk synth``.

cdk-nag 3 names IAM5 findings by the flattened resource string (``Resource::<Logical.Arn>/*``);
:func:`flatten` reproduces its ``flattenCfnReference`` so the acknowledgements follow logical ids
and concrete account/region values instead of hard-coding them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_cdk import Stack
from constructs import IConstruct

from agentmem_infra.compute import bedrock_model_arns
from agentmem_infra.config import ACCESS
from agentmem_infra.nag import acknowledge

if TYPE_CHECKING:
    from agentmem_infra.stack import AgentMemStack

L1 = (
    "Python 3.12 is pinned on purpose: the layer's wheels are built for cp312 and the project is "
    "tested on it. Moving to a newer runtime is a deliberate upgrade (layer-requirements + tests)."
)
STAR_VPC_XRAY = (
    "Resource '*' only for actions that have no resource-level permissions: the Lambda VPC ENI "
    "actions (ec2:CreateNetworkInterface/Describe*/DeleteNetworkInterface/Assign|Unassign"
    "PrivateIpAddresses, what AWSLambdaVPCAccessExecutionRole grants) and X-Ray "
    "PutTraceSegments/PutTelemetryRecords (active tracing)."
)
STAR_XRAY = "Resource '*' only for X-Ray PutTraceSegments/PutTelemetryRecords, which have no resource-level permissions."
INDEXES = (
    "Query on this table's own secondary indexes (table-ARN/index/*): the adapters query the LSIs/GSIs "
    "declared in dynamodb_schema.py; the wildcard is bounded to this one table."
)
OPENSEARCH = (
    "es:ESHttp* on the paths of this one domain (domain/<name>/*): HTTP paths are the only resource "
    "granularity OpenSearch IAM offers; index-level restriction is enforced by fine-grained access "
    "control (the agentmem_app security role, limited to the agentmem index pattern)."
)
NEPTUNE = (
    "neptune-db data actions on this one cluster (cluster-resource-id/*): Neptune IAM auth has no finer "
    "resource than the cluster; the actions are limited to connect/read (and write/delete where needed)."
)
BEDROCK_PROFILE = (
    "A cross-region inference profile routes to the foundation model in several regions; Bedrock "
    "requires InvokeModel on the model in each of them, so the region is '*' for this one model id."
)


def flatten(stack: Stack, value: Any) -> str:
    """cdk-nag's flattenCfnReference over a resolved CDK value."""

    def visit(node: Any) -> str:
        if node is None:
            return ""
        if isinstance(node, str):
            return node.replace("${", "<").replace("}", ">")
        if isinstance(node, dict):
            if "Fn::Join" in node:
                delimiter, items = node["Fn::Join"]
                return str(delimiter).join(visit(i) for i in items)
            if "Fn::Sub" in node:
                return visit(node["Fn::Sub"])
            if "Fn::GetAtt" in node:
                resource, attribute = node["Fn::GetAtt"]
                return f"<{visit(resource)}.{visit(attribute)}>"
            if "Fn::ImportValue" in node:
                return visit(node["Fn::ImportValue"])
            if "Ref" in node:
                return f"<{visit(node['Ref'])}>"
        return json.dumps(node, separators=(",", ":"))

    return str(visit(stack.resolve(value)))


def _resource(stack: Stack, scope: IConstruct, value: Any, reason: str) -> None:
    acknowledge(scope, f"AwsSolutions-IAM5[Resource::{flatten(stack, value)}]", reason)


def acknowledge_findings(stack: AgentMemStack) -> None:
    config = stack.config
    tables, compute, search, graph, api = stack.tables, stack.compute, stack.search, stack.graph, stack.api

    # --- the five functions: runtime pin, '*' for ENI + X-Ray, then what each one was granted.
    for name, fn in compute.functions.items():
        access = ACCESS[name]
        role = compute.roles[name]
        acknowledge(fn, "AwsSolutions-L1", L1)
        acknowledge(role, "AwsSolutions-IAM5[Resource::*]", STAR_VPC_XRAY)
        if "dynamodb:Query" in access.memory:
            _resource(stack, role, f"{tables.memory.table_arn}/index/*", INDEXES)
        if "dynamodb:Query" in access.session:
            _resource(stack, role, f"{tables.session.table_arn}/index/*", INDEXES)
        if access.audit:
            _resource(stack, role, f"{tables.audit.table_arn}/index/*", INDEXES)
        if access.opensearch:
            _resource(stack, role, search.index_arn, OPENSEARCH)
        if access.neptune:
            _resource(stack, role, graph.data_arn, NEPTUNE)
        models = []
        if access.bedrock_embed:
            models.append(config.bedrock_embed_model)
        if access.bedrock_llm and config.bedrock_llm_enabled:
            models.append(config.bedrock_llm_model)
        for model in models:
            for arn in bedrock_model_arns(model):
                if "*" in flatten(stack, arn):
                    _resource(stack, role, arn, BEDROCK_PROFILE)

    # --- OpenSearch: the role-mapping custom resource and the domain itself.
    acknowledge(search.node.find_child("AccessFunction"), "AwsSolutions-L1", L1)
    acknowledge(search.admin_role, "AwsSolutions-IAM5[Resource::*]", STAR_VPC_XRAY)
    _resource(stack, search.admin_role, search.index_arn, OPENSEARCH)
    acknowledge(
        search.domain,
        "AwsSolutions-OS3",
        "The domain has no public endpoint: it lives in private subnets, its security group admits "
        "HTTPS only from the functions' security groups, its resource policy names their IAM roles, "
        "and fine-grained access control maps those roles. Callers have no fixed IPs to allowlist.",
    )
    if not config.opensearch_master_nodes:
        acknowledge(
            search.domain,
            "AwsSolutions-OS4",
            f"{config.name}: a single small data node; dedicated masters are used in staging/prod. "
            "The index is a projection that the reconciler rebuilds from DynamoDB.",
        )
    if not config.opensearch_zone_awareness:
        acknowledge(
            search.domain,
            "AwsSolutions-OS7",
            f"{config.name}: one AZ to keep the environment cheap; staging/prod use zone awareness over "
            "2 AZs. The index is a projection rebuilt from DynamoDB by the reconciler.",
        )

    # --- the deploy-time index setup (custom resource + its provider framework).
    setup = stack.index_setup
    acknowledge(setup.function, "AwsSolutions-L1", L1)
    acknowledge(setup.role, "AwsSolutions-IAM5[Resource::*]", STAR_VPC_XRAY)
    _resource(stack, setup.role, search.index_arn, OPENSEARCH)
    _resource(
        stack,
        setup.provider_role,
        f"{setup.function.function_arn}:*",
        "The CDK Provider framework may invoke the setup function's versions (function-ARN:*); the "
        "wildcard is bounded to that one function.",
    )

    # --- queues that are themselves dead-letter destinations.
    for queue, what in (
        (
            stack.queues.projector_failures,
            "the projector stream event source mapping's on-failure destination",
        ),
        (stack.queues.schedule_dlq, "the EventBridge schedule targets' dead-letter queue"),
        (stack.event_bus.dlq, "the webhook rules' targets' dead-letter queue (docs/events.md)"),
    ):
        acknowledge(
            queue,
            "AwsSolutions-SQS3",
            f"This queue is {what}: a dead-letter queue itself (alarmed on depth in staging/prod). "
            "cdk-nag only recognises SQS redrive policies as DLQ usage.",
        )

    # --- the webhook rules' delivery role (docs/events.md).
    acknowledge(
        stack.event_bus.delivery_role.node.find_child("DefaultPolicy"),
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:"
        "api-destination/agentmem-*/*]",
        "Webhooks are registered at run time, each an API destination named agentmem-<webhook>; the "
        "role may invoke those of this account and region only, and only rules on the stack's bus use it.",
    )

    for wildcard in stack.event_bus.registry_wildcards:  # ListRules' '*' is the role's above
        _resource(
            stack,
            compute.roles["api"],
            wildcard,
            "Webhooks are created at run time (POST /v1/webhooks), each named agentmem-<tenant digest>-"
            "<id>; the api manages those names only, on the stack's bus (docs/events.md).",
        )

    # --- API + Cognito.
    acknowledge(api.authorizer_function, "AwsSolutions-L1", L1)
    acknowledge(api.node.find_child("AuthorizerRole"), "AwsSolutions-IAM5[Resource::*]", STAR_XRAY)
    acknowledge(
        api.ui,
        "AwsSolutions-APIG4",
        "GET /ui and /ui/{asset} serve the memory inspector's three static files shipped in the layer "
        "(no data, no user input reaches a store); every /v1 call the page makes goes through the "
        "token authorizer.",
    )
    acknowledge(
        api.rest_api,
        "AwsSolutions-COG4",
        "The methods use a Lambda TOKEN authorizer that verifies Cognito user pool ID tokens (signature, "
        "issuer, audience, expiry) itself, so that tenant_id, user_id and permissions reach the api "
        "function as flat requestContext.authorizer keys; a Cognito authorizer can only pass raw claims.",
    )
    acknowledge(
        api.rest_api,
        "AwsSolutions-APIG2",
        "Request parameters (the Authorization header) are validated by API Gateway; bodies are validated "
        "by the api function against its pydantic models (415/422 with reasons), the single source of the "
        "OpenAPI schema. Copying them into API Gateway models would drift.",
    )
    acknowledge(
        api.rest_api,
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
        "The account-level API Gateway CloudWatch role must use this AWS managed policy (it is what "
        "API Gateway expects for execution logging); it grants nothing to the application.",
    )
    if not config.waf:
        acknowledge(
            api.rest_api,
            "AwsSolutions-APIG3",
            f"{config.name}: no WAF (cost); staging/prod associate a WAFv2 web ACL with AWS managed rules "
            "and a per-IP rate limit. Stage throttling and the token authorizer still apply.",
        )
    if not config.mfa_required:
        acknowledge(
            api.user_pool,
            "AwsSolutions-COG2",
            f"{config.name}: MFA is optional for test users; staging/prod require TOTP MFA.",
        )
    if not config.cognito_plus:
        acknowledge(
            api.user_pool,
            "AwsSolutions-COG8",
            f"{config.name}: Essentials feature plan (Plus is billed per MAU); prod uses Plus with threat "
            "protection in full-function mode. Sign-up is admin-only and passwords are strong.",
        )
