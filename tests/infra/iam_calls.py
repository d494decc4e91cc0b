"""Grants checked against what the code calls, not against a list kept beside the template.

* :class:`CallRecorder` wraps botocore's one funnel for every SDK call
  (``BaseClient._make_api_call``) and the emulator's ``lambdas.invoke``, so each call is recorded
  with the function whose invocation made it.
* :func:`requests_of` turns one SDK call into the IAM requests it needs, as AWS authorises them:
  ``TransactWriteItems`` is authorised per contained action (``ConditionCheck`` needs
  ``dynamodb:ConditionCheckItem``), batch operations per table, ``SendMessageBatch`` by
  ``sqs:SendMessage``, ``Converse`` by ``bedrock:InvokeModel``. A service or operation this module
  does not know fails the check instead of passing unseen.
* :class:`TemplatePolicies` resolves a function role's statements in the synthesized template to
  concrete ARNs. The physical names come from the function's own environment in the template
  (``AGENTMEM_TABLE_MEMORY: {"Ref": <table>}``) bound to the values the run used, so a grant on
  the wrong table or a variable the template forgets shows up too. Whatever cannot be resolved
  becomes a value no request matches (fail closed).
* The decision is moto's IAM evaluator (``moto.iam.access_control.IAMPolicy``: Allow/Deny,
  ``Action``/``NotAction``, wildcards), the one moto applies when it enforces IAM. Its condition
  support is basic, so a statement with a ``Condition`` counts only when the call names no
  action it covers (the KMS statements, conditioned on ``kms:ViaService``, cover no SDK call
  the functions make themselves).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

ACCOUNT = "123456789012"  # moto's default account
PARTITION = "aws"

# dynamodb operations that name one table (and maybe an index) and are authorised by their own name
_DDB_SINGLE = {
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "DescribeTable",
    "DescribeTimeToLive",
    "UpdateTimeToLive",
    "DescribeContinuousBackups",
    "CreateTable",
    "DeleteTable",
    "UpdateTable",
}
_TRANSACT_WRITE = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
_SQS_BATCH = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
_SQS_BY_URL = {
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "PurgeQueue",
    *_SQS_BATCH,
}
_BEDROCK = {
    "InvokeModel": "bedrock:InvokeModel",
    "Converse": "bedrock:InvokeModel",
    "InvokeModelWithResponseStream": "bedrock:InvokeModelWithResponseStream",
    "ConverseStream": "bedrock:InvokeModelWithResponseStream",
}


class UnknownCall(AssertionError):
    """An SDK call this module cannot map to IAM requests: extend :func:`requests_of`."""


@dataclass(frozen=True)
class Call:
    function: str
    service: str  # botocore's service name: dynamodb, sqs, bedrock-runtime...
    operation: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Request:
    """One IAM authorisation: an action on a resource ARN."""

    action: str
    resource: str


def table_arn(region: str, table: str, index: str | None = None) -> str:
    arn = f"arn:{PARTITION}:dynamodb:{region}:{ACCOUNT}:table/{table}"
    return f"{arn}/index/{index}" if index else arn


def queue_arn(region: str, queue_url: str) -> str:
    name = urlparse(queue_url).path.rstrip("/").rsplit("/", 1)[-1]
    return f"arn:{PARTITION}:sqs:{region}:{ACCOUNT}:{name}"


def model_arn(region: str, model_id: str) -> str:
    if model_id.startswith("arn:"):
        return model_id
    prefix, _, base = model_id.partition(".")
    if prefix in ("us", "eu", "apac", "global", "us-gov", "ca", "jp", "au") and "." in base:
        return f"arn:{PARTITION}:bedrock:{region}:{ACCOUNT}:inference-profile/{model_id}"
    return f"arn:{PARTITION}:bedrock:{region}::foundation-model/{model_id}"


def event_bus_arn(region: str, name: str) -> str:
    return name if name.startswith("arn:") else f"arn:{PARTITION}:events:{region}:{ACCOUNT}:event-bus/{name}"


def _events_requests(op: str, params: Mapping[str, Any], region: str) -> list[Request]:
    """EventBridge: PutEvents per bus; the webhook registry's calls on its rule, connection and
    API destination (ListRules has no resource-level permission: ``*``)."""
    base = f"arn:{PARTITION}:events:{region}:{ACCOUNT}"
    if op == "PutEvents":
        buses = {str(e.get("EventBusName") or "default") for e in params["Entries"]}
        return [Request("events:PutEvents", event_bus_arn(region, b)) for b in sorted(buses)]
    if op == "ListRules":
        return [Request("events:ListRules", "*")]
    if op in ("PutRule", "DescribeRule", "DeleteRule"):
        return [Request(f"events:{op}", f"{base}:rule/{params['EventBusName']}/{params['Name']}")]
    if op in ("PutTargets", "RemoveTargets"):
        found = [Request(f"events:{op}", f"{base}:rule/{params['EventBusName']}/{params['Rule']}")]
        roles = {t["RoleArn"] for t in params.get("Targets", []) if t.get("RoleArn")}
        return found + [Request("iam:PassRole", r) for r in sorted(roles)]
    if op in ("CreateConnection", "DescribeConnection", "DeleteConnection"):
        return [Request(f"events:{op}", f"{base}:connection/{params['Name']}")]
    if op in ("CreateApiDestination", "DescribeApiDestination", "DeleteApiDestination"):
        return [Request(f"events:{op}", f"{base}:api-destination/{params['Name']}")]
    raise UnknownCall(f"no IAM mapping for events:{op}")


def requests_of(call: Call, region: str) -> list[Request]:
    """The IAM requests one SDK call needs (AWS's authorisation model, per service)."""
    op, params = call.operation, call.params
    if call.service == "dynamodb":
        if op in _DDB_SINGLE:
            return [
                Request(f"dynamodb:{op}", table_arn(region, params["TableName"], params.get("IndexName")))
            ]
        if op in ("BatchGetItem", "BatchWriteItem"):
            return [Request(f"dynamodb:{op}", table_arn(region, t)) for t in params["RequestItems"]]
        if op == "TransactWriteItems":
            found = []
            for item in params["TransactItems"]:
                ((kind, body),) = item.items()
                found.append(
                    Request(f"dynamodb:{_TRANSACT_WRITE[kind]}", table_arn(region, body["TableName"]))
                )
            return found
        if op == "TransactGetItems":
            return [
                Request("dynamodb:GetItem", table_arn(region, i["Get"]["TableName"]))
                for i in params["TransactItems"]
            ]
    if call.service == "sqs":
        if op in _SQS_BY_URL:
            return [Request(f"sqs:{_SQS_BATCH.get(op, op)}", queue_arn(region, params["QueueUrl"]))]
        if op == "GetQueueUrl":
            return [
                Request("sqs:GetQueueUrl", f"arn:{PARTITION}:sqs:{region}:{ACCOUNT}:{params['QueueName']}")
            ]
    if call.service == "secretsmanager" and op == "GetSecretValue":  # the model server's key, by ARN
        return [Request("secretsmanager:GetSecretValue", params["SecretId"])]
    if call.service == "events":
        return _events_requests(op, params, region)
    if call.service == "bedrock-runtime" and op in _BEDROCK:
        return [Request(_BEDROCK[op], model_arn(region, params["modelId"]))]
    raise UnknownCall(f"{call.function}: no IAM mapping for {call.service}:{op}")


class CallRecorder:
    """Records every SDK call made while a function is being invoked through the emulator."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.current: str | None = None

    @contextlib.contextmanager
    def recording(self, lambdas_module: Any) -> Iterator[CallRecorder]:
        from botocore.client import BaseClient

        original_call = BaseClient._make_api_call
        original_invoke = lambdas_module.invoke
        recorder = self

        def make_api_call(client: Any, operation: str, params: Mapping[str, Any]) -> Any:
            if recorder.current is not None:
                service = client.meta.service_model.service_name
                recorder.calls.append(Call(recorder.current, service, operation, dict(params)))
            return original_call(client, operation, params)

        def invoke(name: str, *args: Any, **kwargs: Any) -> Any:
            previous, recorder.current = recorder.current, name
            try:
                return original_invoke(name, *args, **kwargs)
            finally:
                recorder.current = previous

        BaseClient._make_api_call = make_api_call  # type: ignore[method-assign]
        lambdas_module.invoke = invoke
        try:
            yield self
        finally:
            BaseClient._make_api_call = original_call  # type: ignore[method-assign]
            lambdas_module.invoke = original_invoke

    def requests(self, region: str) -> dict[str, set[Request]]:
        """Every function's IAM requests, deduplicated."""
        found: dict[str, set[Request]] = {}
        for call in self.calls:
            found.setdefault(call.function, set()).update(requests_of(call, region))
        return found

    def operations(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for call in self.calls:
            found.setdefault(call.function, set()).add(f"{call.service}:{call.operation}")
        return found


_UNRESOLVED = "unresolved:{}"  # matches no ARN a request names


@dataclass
class TemplatePolicies:
    """The synthesized template's role policies, resolved for a run whose settings are known."""

    template: Mapping[str, Any]
    region: str
    settings: Any  # agentmem.settings.Settings of the run
    names: dict[str, str] = field(default_factory=dict)  # logical id -> Ref value
    arns: dict[str, str] = field(default_factory=dict)  # logical id -> its ARN, where a variable holds it

    @property
    def resources(self) -> Mapping[str, Any]:
        return self.template["Resources"]

    def function_id(self, description_prefix: str) -> str:
        found = [
            k
            for k, v in self.resources.items()
            if v["Type"] == "AWS::Lambda::Function"
            and str(v["Properties"].get("Description", "")).startswith(description_prefix)
        ]
        assert len(found) == 1, f"{description_prefix!r}: {found}"
        return found[0]

    def bind(self, function_id: str) -> None:
        """Name the resources the function's environment refers to with the run's values."""
        variables = self.resources[function_id]["Properties"]["Environment"]["Variables"]
        for variable, value in variables.items():
            if not (isinstance(value, dict) and variable.startswith("AGENTMEM_")):
                continue
            concrete = getattr(self.settings, variable.removeprefix("AGENTMEM_").lower(), None)
            if concrete and set(value) == {"Ref"}:
                self.names[value["Ref"]] = str(concrete)
            elif concrete and set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][1] == "Arn":
                self.arns[value["Fn::GetAtt"][0]] = str(concrete)  # a variable that holds an ARN

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict) or len(value) != 1:
            return _UNRESOLVED.format(value)
        ((fn, arg),) = value.items()
        if fn == "Ref":
            return self._ref(arg)
        if fn == "Fn::GetAtt":
            logical, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
            return self._get_att(logical, attribute)
        if fn == "Fn::Join":
            separator, parts = arg
            return separator.join(str(self.resolve(p)) for p in parts)
        if fn == "Fn::Sub":
            text, variables = (arg, {}) if isinstance(arg, str) else arg
            return re.sub(r"\$\{([^}]+)\}", lambda m: str(self._sub(m.group(1), variables)), text)
        return _UNRESOLVED.format(value)

    def _sub(self, name: str, variables: Mapping[str, Any]) -> Any:
        if name in variables:
            return self.resolve(variables[name])
        if "." in name:
            logical, attribute = name.split(".", 1)
            return self._get_att(logical, attribute)
        return self._ref(name)

    def _ref(self, name: str) -> str:
        pseudo = {
            "AWS::Region": self.region,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": PARTITION,
            "AWS::URLSuffix": "amazonaws.com",
        }
        if name in pseudo:
            return pseudo[name]
        return self.names.get(name, _UNRESOLVED.format(name))

    def _get_att(self, logical: str, attribute: str) -> str:
        if attribute == "Arn" and logical in self.arns:
            return self.arns[logical]
        resource = self.resources.get(logical, {})
        kind, name = resource.get("Type"), self.names.get(logical)
        if name is None or attribute != "Arn":
            return _UNRESOLVED.format(f"{logical}.{attribute}")
        if kind == "AWS::DynamoDB::Table":
            return table_arn(self.region, name)
        if kind == "AWS::SQS::Queue":
            return queue_arn(self.region, name)
        if kind == "AWS::Events::EventBus":
            return event_bus_arn(self.region, name)
        return _UNRESOLVED.format(f"{logical}.{attribute}")

    def statements(self, function_id: str) -> list[dict[str, Any]]:
        """The function role's statements (inline and attached ``AWS::IAM::Policy``), resolved."""
        role = self.resources[function_id]["Properties"]["Role"]["Fn::GetAtt"][0]
        found: list[dict[str, Any]] = []
        for resource in self.resources.values():
            if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"].get(
                "Roles", []
            ):
                found += resource["Properties"]["PolicyDocument"]["Statement"]
        for inline in self.resources[role]["Properties"].get("Policies", []):
            found += inline["PolicyDocument"]["Statement"]
        resolved = []
        for statement in found:
            copy = dict(statement)
            if "Resource" in copy:
                resources = copy["Resource"] if isinstance(copy["Resource"], list) else [copy["Resource"]]
                copy["Resource"] = [str(self.resolve(r)) for r in resources]
            resolved.append(copy)
        return resolved


def denied(statements: list[dict[str, Any]], requests: set[Request]) -> list[Request]:
    """The requests the statements do not allow, by moto's IAM evaluator."""
    import json

    from moto.iam.access_control import IAMPolicy, PermissionResult

    policy = IAMPolicy(json.dumps({"Version": "2012-10-17", "Statement": statements}))
    return sorted(
        (
            r
            for r in requests
            if policy.is_action_permitted(r.action, r.resource) != PermissionResult.PERMITTED
        ),
        key=lambda r: (r.action, r.resource),
    )
