"""Cognito user pool, the Lambda TOKEN authorizer, the REST API and (staging/prod) its WAF.

How the caller reaches the api function (``agentmem.api.app._principal``):

1. The client signs in to the user pool and sends ``Authorization: Bearer <ID token>``.
2. API Gateway rejects headers that are not ``Bearer <jwt>`` (validation regex), else calls the
   authorizer (``lambdas/authorizer/handler.py``), caching its answer per token for 5 minutes.
3. The authorizer verifies the token and returns an Allow policy for ``/v1/*`` with the context
   ``tenant_id`` (``custom:tenant_id``), ``user_id`` (``sub``), ``permissions``
   (``custom:permissions``, omitted when unset) and ``principal_id`` (``cognito:username``).
4. API Gateway passes that context to the proxy integration as ``requestContext.authorizer``.

``custom:tenant_id`` and ``custom:permissions`` are not writable by the app client, so only an
administrator (``AdminUpdateUserAttributes``) sets them; ``tenant_id`` is immutable once set.
"""

from __future__ import annotations

import json

from aws_cdk import Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from agentmem_infra import INFRA_DIR
from agentmem_infra.bundling import ARCHITECTURE, RUNTIME, python_code
from agentmem_infra.config import EnvConfig
from agentmem_infra.layer_contents import read_requirements

# One JSON line per request; no bodies, no tokens. principal/tenant come from the authorizer.
ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "ip": "$context.identity.sourceIp",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "path": "$context.path",
    "resourcePath": "$context.resourcePath",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
    "integrationLatency": "$context.integrationLatency",
    "principal": "$context.authorizer.principalId",
    "tenant": "$context.authorizer.tenant_id",
    "authorizerError": "$context.authorizer.error",
    "wafStatus": "$context.waf.status",
}
TOKEN_REGEX = r"^Bearer [-_A-Za-z0-9]+\.[-_A-Za-z0-9]+\.[-_A-Za-z0-9]+$"
AUTHORIZER_CACHE = Duration.minutes(5)
# Bodies are chat turns (up to 256 KiB, may quote code, HTML or paths): the common rule set's body
# rules would block legitimate conversations, so they only count; URI, header and query rules block.
BODY_RULES_COUNT_ONLY = (
    "SizeRestrictions_BODY",
    "CrossSiteScripting_BODY",
    "GenericLFI_BODY",
    "GenericRFI_BODY",
    "EC2MetaDataSSRF_BODY",
)


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        handler: lambda_.IFunction,
        skip_bundling: bool,
    ) -> None:
        super().__init__(scope, id)
        self.config = config
        retain = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.user_pool = cognito.UserPool(
            self,
            "UserPool",
            self_sign_up_enabled=False,  # a tenant administrator creates users and sets their tenant
            sign_in_aliases=cognito.SignInAliases(email=True, username=True),
            custom_attributes={
                "tenant_id": cognito.StringAttribute(min_len=1, max_len=128, mutable=False),
                "permissions": cognito.StringAttribute(min_len=0, max_len=512, mutable=True),
            },
            password_policy=cognito.PasswordPolicy(
                min_length=12,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=Duration.days(3),
            ),
            mfa=cognito.Mfa.REQUIRED if config.mfa_required else cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            feature_plan=cognito.FeaturePlan.PLUS if config.cognito_plus else cognito.FeaturePlan.ESSENTIALS,
            standard_threat_protection_mode=(
                cognito.StandardThreatProtectionMode.FULL_FUNCTION if config.cognito_plus else None
            ),
            deletion_protection=config.deletion_protection,
            removal_policy=retain,
        )
        self.client = self.user_pool.add_client(
            "ApiClient",
            # SRP for callers; ADMIN_USER_PASSWORD_AUTH only for a holder of IAM credentials with
            # cognito-idp:AdminInitiateAuth (the first-deploy runbook's curl, an operator's test)
            auth_flows=cognito.AuthFlow(user_srp=True, admin_user_password=True),
            generate_secret=False,
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
            id_token_validity=Duration.hours(1),
            access_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(30),
            read_attributes=cognito.ClientAttributes()
            .with_standard_attributes(email=True, email_verified=True, fullname=True)
            .with_custom_attributes("tenant_id", "permissions"),
            write_attributes=cognito.ClientAttributes().with_standard_attributes(email=True, fullname=True),
        )
        issuer = f"https://cognito-idp.{Stack.of(self).region}.amazonaws.com/{self.user_pool.user_pool_id}"

        authorizer_logs = logs.LogGroup(
            self, "AuthorizerLogs", retention=config.log_retention, removal_policy=retain
        )
        authorizer_role = iam.Role(
            self,
            "AuthorizerRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="agentmem API authorizer: writes its own logs, nothing else",
        )
        authorizer_logs.grant_write(authorizer_role)
        source = INFRA_DIR / "lambdas" / "authorizer"
        self.authorizer_function = lambda_.Function(
            self,
            "AuthorizerFunction",
            description="agentmem API authorizer: Cognito ID token -> tenant_id, user_id, permissions",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.handler",
            code=python_code(
                source, requirements=read_requirements(source / "requirements.txt"), skip=skip_bundling
            ),
            role=authorizer_role,
            memory_size=256,
            timeout=Duration.seconds(10),
            tracing=lambda_.Tracing.ACTIVE,
            log_group=authorizer_logs,
            environment={
                "AUTH_ISSUER": issuer,
                "AUTH_CLIENT_IDS": self.client.user_pool_client_id,
                "LOG_LEVEL": "INFO",
            },
        )
        self.authorizer = apigw.TokenAuthorizer(
            self,
            "TokenAuthorizer",
            handler=self.authorizer_function,
            identity_source=apigw.IdentitySource.header("Authorization"),
            validation_regex=TOKEN_REGEX,
            results_cache_ttl=AUTHORIZER_CACHE,
        )

        access_logs = logs.LogGroup(self, "AccessLogs", retention=config.log_retention, removal_policy=retain)
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"agentmem-{config.name}",
            description="agentmem memory API (/v1/*)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=config.name,
                throttling_rate_limit=config.api_rate_limit,
                throttling_burst_limit=config.api_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # request bodies carry user text: never log them
                metrics_enabled=True,
                tracing_enabled=True,
            ),
            default_method_options=apigw.MethodOptions(
                authorizer=self.authorizer, authorization_type=apigw.AuthorizationType.CUSTOM
            ),
        )
        # The execution log group API Gateway would otherwise create itself, with no retention.
        stage = self.rest_api.deployment_stage
        execution_logs = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=Fn.join(
                "", ["API-Gateway-Execution-Logs_", self.rest_api.rest_api_id, f"/{config.name}"]
            ),
            retention=config.log_retention,
            removal_policy=retain,
        )
        stage.node.add_dependency(execution_logs)
        # Header/parameter validation at the edge; the api function validates bodies (pydantic).
        validator = self.rest_api.add_request_validator(
            "ParamsValidator", validate_request_parameters=True, validate_request_body=False
        )
        integration = apigw.LambdaIntegration(handler, proxy=True, timeout=Duration.seconds(29))
        v1 = self.rest_api.root.add_resource("v1")
        proxy = v1.add_resource("{proxy+}")
        proxy.add_method(
            "ANY",
            integration,
            request_parameters={"method.request.header.Authorization": True},
            request_validator=validator,
        )
        self.proxy = proxy
        # The memory inspector's static page (agentmem.api.routes.ui): three files shipped in the
        # layer, no data in them, so no authorizer; every /v1 call the page makes carries the token.
        ui = self.rest_api.root.add_resource("ui")
        for resource in (ui, ui.add_resource("{asset}")):
            resource.add_method("GET", integration, authorization_type=apigw.AuthorizationType.NONE)
        self.ui = ui
        if config.waf:
            self.web_acl = self._waf()

    def _waf(self) -> wafv2.CfnWebACL:
        def managed(name: str, priority: int, count_only: tuple[str, ...]) -> wafv2.CfnWebACL.RuleProperty:
            return wafv2.CfnWebACL.RuleProperty(
                name=name,
                priority=priority,
                override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
                statement=wafv2.CfnWebACL.StatementProperty(
                    managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                        vendor_name="AWS",
                        name=name,
                        rule_action_overrides=[
                            wafv2.CfnWebACL.RuleActionOverrideProperty(
                                name=rule, action_to_use=wafv2.CfnWebACL.RuleActionProperty(count={})
                            )
                            for rule in count_only
                        ]
                        or None,
                    )
                ),
                visibility_config=_visibility(name),
            )

        acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility(f"agentmem-{self.config.name}"),
            rules=[
                managed("AWSManagedRulesCommonRuleSet", 1, BODY_RULES_COUNT_ONLY),
                managed("AWSManagedRulesKnownBadInputsRuleSet", 2, ()),
                wafv2.CfnWebACL.RuleProperty(
                    name="PerIpRateLimit",
                    priority=3,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            aggregate_key_type="IP", limit=max(100, int(self.config.api_rate_limit * 60))
                        )
                    ),
                    visibility_config=_visibility("PerIpRateLimit"),
                ),
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.rest_api.deployment_stage.stage_arn,
            web_acl_arn=acl.attr_arn,
        )
        return acl


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
    )
