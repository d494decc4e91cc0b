"""What a deployment would hit, each checked on the synthesized template (``aws_cdk.assertions``):
alarms that see record failures and the engines' throttling in every environment, the index
template set up once per deploy by a custom resource, replicas that fit the domain, and a Neptune
audit log group that never blocks re-creating the stack."""

from __future__ import annotations

import json
from typing import Any

import pytest
from infra_helpers import Synth

pytestmark = pytest.mark.xdist_group("cdk")

ENVS = ("dev", "staging", "prod")


def alarms(s: Synth) -> list[dict[str, Any]]:
    return [a["Properties"] for a in s.of_type("AWS::CloudWatch::Alarm").values()]


def by_metric(s: Synth, name: str, namespace: str | None = None) -> list[dict[str, Any]]:
    return [a for a in alarms(s) if a.get("MetricName") == name and namespace in (None, a.get("Namespace"))]


def dimensions(alarm: dict[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in alarm["Dimensions"]}


def logical(value: Any) -> str:
    return json.dumps(value)


# ----------------------------------------------------------------------------- alarms


def test_every_environment_has_alarms_with_actions(each_env: Synth) -> None:
    found = alarms(each_env)
    assert len(found) > 30
    topic = each_env.logical_id(each_env.stack.alarms.topic)
    for alarm in found:
        assert alarm["AlarmActions"] == [{"Ref": topic}], alarm["AlarmDescription"]
        assert alarm["TreatMissingData"] == "notBreaching"
        assert alarm["AlarmDescription"].startswith(f"agentmem {each_env.env}: ")


def test_every_dead_letter_queue_is_alarmed_on_depth(each_env: Synth) -> None:
    """Every queue the template uses as a DLQ: SQS redrive targets, the stream's on-failure
    destination, the EventBridge targets' dead-letter queues (found in the template, not listed)."""
    s = each_env
    dlqs: set[str] = set()
    for queue in s.of_type("AWS::SQS::Queue").values():
        redrive = queue["Properties"].get("RedrivePolicy")
        if redrive:
            dlqs.add(redrive["deadLetterTargetArn"]["Fn::GetAtt"][0])
    for mapping in s.of_type("AWS::Lambda::EventSourceMapping").values():
        on_failure = mapping["Properties"].get("DestinationConfig", {}).get("OnFailure")
        if on_failure:
            dlqs.add(on_failure["Destination"]["Fn::GetAtt"][0])
    for rule in s.of_type("AWS::Events::Rule").values():
        for target in rule["Properties"]["Targets"]:
            if "DeadLetterConfig" in target:
                dlqs.add(target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0])
    assert len(dlqs) == 3
    depth = by_metric(s, "ApproximateNumberOfMessagesVisible", "AWS/SQS")
    alarmed = {dimensions(a)["QueueName"]["Fn::GetAtt"][0] for a in depth}
    assert dlqs <= alarmed
    for alarm in depth:
        assert alarm["ComparisonOperator"] == "GreaterThanThreshold" and alarm["Threshold"] == 0


def test_record_failures_are_alarmed_where_errors_cannot_see_them(each_env: Synth) -> None:
    """Partial batch responses: each event source mapping emits EventCount metrics and its
    FailedInvokeEventCount is alarmed on its own UUID (the Ref of the mapping)."""
    s = each_env
    mappings = s.of_type("AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 2
    failed = {
        logical(dimensions(a)["EventSourceMappingUUID"]) for a in by_metric(s, "FailedInvokeEventCount")
    }
    for logical_id, mapping in mappings.items():
        props = mapping["Properties"]
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        assert props["MetricsConfig"] == {"Metrics": ["EventCount"]}
        assert logical({"Ref": logical_id}) in failed
    dropped = by_metric(s, "DroppedEventCount", "AWS/Lambda")
    stream = next(k for k, m in mappings.items() if "StartingPosition" in m["Properties"])
    assert [logical(dimensions(a)["EventSourceMappingUUID"]) for a in dropped] == [logical({"Ref": stream})]
    age = by_metric(s, "ApproximateAgeOfOldestMessage", "AWS/SQS")
    assert [dimensions(a)["QueueName"]["Fn::GetAtt"][0] for a in age] == [s.logical_id(s.stack.queues.ingest)]


def test_opensearch_health_and_rejections_are_alarmed(each_env: Synth) -> None:
    s = each_env
    domain = s.logical_id(s.stack.search.domain)
    names = {a["MetricName"]: a for a in alarms(s) if a.get("Namespace") == "AWS/ES"}
    for metric in (
        "ClusterStatus.red",
        "ClusterStatus.yellow",
        "ClusterIndexWritesBlocked",
        "ThreadpoolWriteRejected",
        "ThreadpoolSearchRejected",
        "5xx",
        "FreeStorageSpace",
        "JVMMemoryPressure",
    ):
        assert metric in names, metric
        assert domain in logical(dimensions(names[metric])["DomainName"])
        assert "ClientId" in dimensions(names[metric])
    assert names["FreeStorageSpace"]["ComparisonOperator"] == "LessThanOrEqualToThreshold"
    assert names["FreeStorageSpace"]["Threshold"] == s.stack.config.opensearch_volume_gib * 1024 * 0.25
    assert ("MasterJVMMemoryPressure" in names) == bool(s.stack.config.opensearch_master_nodes)


def test_neptune_saturation_is_alarmed(each_env: Synth) -> None:
    s = each_env
    cluster = {"Ref": s.stack.get_logical_id(s.stack.graph.cluster)}
    names = {a["MetricName"]: a for a in alarms(s) if a.get("Namespace") == "AWS/Neptune"}
    assert set(names) == {
        "CPUUtilization",
        "BufferCacheHitRatio",
        "MainRequestQueuePendingRequests",
        "TotalServerErrorsPerSec",
    }
    for alarm in names.values():
        assert dimensions(alarm) == {"DBClusterIdentifier": cluster}
    assert names["BufferCacheHitRatio"]["ComparisonOperator"] == "LessThanThreshold"


def test_dynamodb_throttles_are_alarmed_on_each_table_and_index(each_env: Synth) -> None:
    s = each_env
    expected: set[tuple[str, str | None, str]] = set()
    for name in ("memory", "session", "audit"):
        table = s.resources[s.logical_id(getattr(s.stack.tables, name))]["Properties"]
        for index in (None, *(g["IndexName"] for g in table.get("GlobalSecondaryIndexes", []))):
            for kind in ("ReadThrottleEvents", "WriteThrottleEvents"):
                expected.add((s.logical_id(getattr(s.stack.tables, name)), index, kind))
    found = set()
    for alarm in alarms(s):
        if alarm.get("Namespace") == "AWS/DynamoDB":
            dims = dimensions(alarm)
            found.add((dims["TableName"]["Ref"], dims.get("GlobalSecondaryIndexName"), alarm["MetricName"]))
    assert found == expected
    assert any(index is not None for _, index, _ in expected)  # the memory table's GSIs are covered


def test_whole_invocation_errors_are_still_alarmed(each_env: Synth) -> None:
    s = each_env
    errored = {logical(dimensions(a)) for a in by_metric(s, "Errors", "AWS/Lambda")}
    for fn in (*s.stack.compute.functions.values(), s.stack.api.authorizer_function):
        assert any(s.logical_id(fn) in d for d in errored)
    assert by_metric(s, "5XXError", "AWS/ApiGateway")


# ----------------------------------------------------------------------------- index setup


def test_the_index_is_set_up_by_a_custom_resource_at_deploy(each_env: Synth) -> None:
    from aws_cdk.assertions import Match

    from agentmem.adapters.aws.opensearch_setup import IndexSpec, template_hash

    s = each_env
    config = s.stack.config
    spec = IndexSpec(config.opensearch_index, config.bedrock_embed_dimension, config.opensearch_replicas)
    template = s.assertions()
    template.resource_count_is("Custom::AgentMemIndex", 1)
    template.has_resource_properties(
        "Custom::AgentMemIndex",
        {
            "ServiceToken": Match.any_value(),
            "Index": config.opensearch_index,
            "Dimension": str(config.bedrock_embed_dimension),
            "Replicas": str(config.opensearch_replicas),
            "TemplateHash": template_hash(spec),
        },
    )
    setup = s.stack.index_setup
    resource_id = s.logical_id(setup.resource)
    resource = s.resources[resource_id]
    assert s.logical_id(s.stack.search.role_mapping) in resource["DependsOn"]  # FGAC mapped first
    # the service token is the Provider framework's function, which invokes the setup function
    framework = resource["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    assert s.logical_id(setup.function) in logical(s.resources[framework]["Properties"]["Environment"])
    fn = s.resources[s.logical_id(setup.function)]["Properties"]
    assert fn["Handler"] == "handler.handler" and fn["Layers"] == [
        {"Ref": s.logical_id(s.stack.compute.layer)}
    ]
    assert fn["VpcConfig"]["SubnetIds"] and fn["TracingConfig"] == {"Mode": "Active"}
    # every application function (and so its event source) is created after the index
    for name, app_fn in s.stack.compute.functions.items():
        assert resource_id in s.resources[s.logical_id(app_fn)]["DependsOn"], name


def test_functions_no_longer_create_the_index_and_get_the_replicas(each_env: Synth) -> None:
    from agentmem.settings import Settings

    s = each_env
    for name, fn in s.stack.compute.functions.items():
        env = s.resources[s.logical_id(fn)]["Properties"]["Environment"]["Variables"]
        assert env["AGENTMEM_OPENSEARCH_CREATE_INDEX"] == "false", name
        assert env["AGENTMEM_OPENSEARCH_REPLICAS"] == str(s.stack.config.opensearch_replicas)
    setup_env = s.resources[s.logical_id(s.stack.index_setup.function)]["Properties"]["Environment"]
    for variable in setup_env["Variables"]:
        if variable.startswith("AGENTMEM_"):
            assert variable.removeprefix("AGENTMEM_").lower() in Settings.model_fields, variable


def test_the_setup_function_may_reach_the_index_and_nothing_else(each_env: Synth) -> None:
    s = each_env
    setup = s.stack.index_setup
    role = s.logical_id(setup.role)
    statements = [
        st
        for policy in s.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for st in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    actions = {
        a for st in statements for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
    }
    assert not [a for a in actions if a.startswith(("dynamodb:", "neptune-db:", "bedrock:", "sqs:"))]
    assert "es:ESHttpPut" in actions
    ingress = [
        r["Properties"]
        for r in s.of_type("AWS::EC2::SecurityGroupIngress").values()
        if r["Properties"].get("SourceSecurityGroupId")
        == {"Fn::GetAtt": [s.logical_id(setup.security_group), "GroupId"]}
    ]
    assert [(r["FromPort"], r["GroupId"]["Fn::GetAtt"][0]) for r in ingress] == [
        (443, s.logical_id(s.stack.search.security_group))
    ]
    mapping = next(iter(s.of_type("Custom::OpenSearchRoleMapping").values()))["Properties"]
    assert {"Fn::GetAtt": [role, "Arn"]} in mapping["BackendRoles"]


# ----------------------------------------------------------------------------- replicas


def test_replicas_fit_the_domain(each_env: Synth) -> None:
    config = each_env.stack.config
    assert 0 <= config.opensearch_replicas < config.opensearch_data_nodes
    if config.opensearch_zone_awareness:
        assert config.opensearch_replicas >= 1
    if config.opensearch_data_nodes == 1:
        assert config.opensearch_replicas == 0  # dev: green, not yellow forever


def test_a_config_whose_replicas_cannot_be_placed_is_refused() -> None:
    from dataclasses import replace

    from agentmem_infra.config import CONFIGS

    with pytest.raises(ValueError, match="stay yellow"):
        replace(CONFIGS["dev"], opensearch_replicas=1)
    with pytest.raises(ValueError, match="survive an AZ"):
        replace(CONFIGS["prod"], opensearch_replicas=0)


# ----------------------------------------------------------------------------- Neptune audit log


def evaluate(value: Any, refs: dict[str, str]) -> Any:
    """The CloudFormation intrinsics the names use (Join, Select, Split, Ref) over ``refs``."""
    if isinstance(value, dict) and len(value) == 1:
        ((fn, arg),) = value.items()
        if fn == "Ref":
            return refs[arg]
        if fn == "Fn::Join":
            return arg[0].join(str(evaluate(v, refs)) for v in arg[1])
        if fn == "Fn::Split":
            return str(evaluate(arg[1], refs)).split(arg[0])
        if fn == "Fn::Select":
            return evaluate(arg[1], refs)[int(arg[0])]
    return value


def test_neptune_audit_log_group_follows_a_per_stack_cluster_name(each_env: Synth) -> None:
    s = each_env
    graph = s.stack.graph
    cluster = s.resources[s.stack.get_logical_id(graph.cluster)]
    group_id = s.logical_id(graph.audit_logs)
    group = s.resources[group_id]
    names = []
    for uuid in ("0a1b2c3d-1111-2222-3333-444455556666", "9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff"):
        stack_id = f"arn:aws:cloudformation:eu-west-1:123456789012:stack/agentmem-{s.env}/{uuid}"
        refs = {"AWS::StackId": stack_id}
        identifier = evaluate(cluster["Properties"]["DBClusterIdentifier"], refs)
        assert identifier == f"agentmem-{s.env}-{uuid.rsplit('-', 1)[1]}"
        assert len(identifier) <= 63
        assert evaluate(group["Properties"]["LogGroupName"], refs) == f"/aws/neptune/{identifier}/audit"
        names.append(identifier)
    assert names[0] != names[1]  # a re-created stack never meets the group its predecessor retained
    assert group_id in cluster["DependsOn"]  # the group exists before Neptune can write to it
    assert group["DeletionPolicy"] == ("Retain" if s.env == "prod" else "Delete")  # prod keeps its trail
    assert group["Properties"]["RetentionInDays"] == {"dev": 7, "staging": 30, "prod": 365}[s.env]


# ----------------------------------------------------------------------------- reconcile segments


def test_the_reconcile_schedule_has_one_target_per_segment(each_env: Synth) -> None:
    from agentmem_infra.config import CONFIGS

    segments = CONFIGS[each_env.env].reconcile_segments
    rule = next(
        r["Properties"]
        for r in each_env.of_type("AWS::Events::Rule").values()
        if "reconcile" in r["Properties"].get("Description", "")
    )
    targets = rule["Targets"]
    assert len(targets) == segments
    if segments > 1:
        inputs = sorted(json.loads(t["Input"])["segment"] for t in targets)
        assert inputs == list(range(segments))
        assert {json.loads(t["Input"])["segments"] for t in targets} == {segments}


def test_reserved_reconcile_concurrency_must_cover_the_segments() -> None:
    from dataclasses import replace

    from agentmem_infra.config import CONFIGS, FunctionSpec

    prod = CONFIGS["prod"]
    functions = {**prod.functions, "reconcile": FunctionSpec(1024, 900, reserved_concurrency=1)}
    with pytest.raises(ValueError, match="reconcile_segments"):
        replace(prod, functions=functions)


def test_the_opensearch_domain_is_named_per_stack_creation(each_env: Synth) -> None:
    s = each_env
    domain = s.resources[s.logical_id(s.stack.search.domain)]
    names = []
    for uuid in ("0a1b2c3d-1111-2222-3333-444455556666", "9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff"):
        refs = {
            "AWS::StackId": f"arn:aws:cloudformation:eu-west-1:123456789012:stack/agentmem-{s.env}/{uuid}"
        }
        name = evaluate(domain["Properties"]["DomainName"], refs)
        assert name == f"agentmem-{s.env}-{uuid.split('-', 1)[0]}"
        assert 3 <= len(name) <= 28 and name[0].isalpha()  # OpenSearch's domain name rules
        names.append(name)
    assert names[0] != names[1]  # a re-created stack never meets the domain prod retained


def test_the_domain_waits_for_its_log_publishing_policy(each_env: Synth) -> None:
    """CreateDomain checks that CloudWatch Logs lets the service publish: the resource policy is
    created first, or the two race (cloudformation-coverage-roadmap#1769)."""
    s = each_env
    (domain_id,) = s.of_type("AWS::OpenSearchService::Domain")
    (policy_id,) = s.of_type("AWS::Logs::ResourcePolicy")
    depends = s.resources[domain_id].get("DependsOn", [])
    assert policy_id in ([depends] if isinstance(depends, str) else depends)


def test_no_log_group_is_left_for_aws_to_create_without_retention(each_env: Synth) -> None:
    """Every group a function or the API stage writes to is declared with the environment's
    retention, found from the template: a function names its group (LoggingConfig) or one is
    declared as /aws/lambda/<function>; a stage that logs executions has
    API-Gateway-Execution-Logs_<api>/<stage>. Implicit groups never expire."""
    s = each_env
    groups = s.of_type("AWS::Logs::LogGroup")
    assert all("RetentionInDays" in g["Properties"] for g in groups.values())
    names = {json.dumps(g["Properties"].get("LogGroupName")) for g in groups.values()}
    for fn_id, fn in s.of_type("AWS::Lambda::Function").items():
        named = fn["Properties"].get("LoggingConfig", {}).get("LogGroup")
        if named is not None:
            assert named["Ref"] in groups, fn_id
            continue
        assert json.dumps({"Fn::Join": ["", ["/aws/lambda/", {"Ref": fn_id}]]}) in names, fn_id
    for stage_id, stage in s.of_type("AWS::ApiGateway::Stage").items():
        if any(m.get("LoggingLevel") for m in stage["Properties"].get("MethodSettings", [])):
            api = stage["Properties"]["RestApiId"]
            want = {
                "Fn::Join": ["", ["API-Gateway-Execution-Logs_", api, f"/{stage['Properties']['StageName']}"]]
            }
            assert json.dumps(want) in names, stage_id
