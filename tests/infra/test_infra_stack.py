"""Synthesis tests of the CDK stack (``infra_cdk/``), one synthesis per environment.

The DynamoDB expectations are not restated here: they come from
``agentmem.adapters.aws.dynamodb_schema`` (the ``CreateTable`` requests and ``create_tables``),
the same definitions the adapters' moto tests run on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from infra_helpers import REPO, Synth, require_cdk, synthesize

from agentmem.adapters.aws import dynamodb_schema as schema
from agentmem.adapters.codec import RECORD_ATTRIBUTES

# One worker synthesizes the stacks (jsii + Node are heavy): run with `pytest -n auto --dist loadgroup`.
pytestmark = pytest.mark.xdist_group("cdk")

FUNCTIONS = ("ingest", "api", "projector", "consolidate", "reconcile")
ENVS = ("dev", "staging", "prod")


# ----------------------------------------------------------------------------- helpers


def ref(value: Any) -> str:
    """Logical id behind ``{"Ref": X}`` / ``{"Fn::GetAtt": [X, attr]}``."""
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return str(value["Fn::GetAtt"][0])
    raise AssertionError(f"not a reference: {value!r}")


def fn_id(s: Synth, name: str) -> str:
    return s.logical_id(s.stack.compute.functions[name])


def role_statements(s: Synth, role_id: str) -> list[dict[str, Any]]:
    statements = []
    for policy in s.of_type("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"].get("Roles", []):
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    role = s.resources[role_id]["Properties"]
    for inline in role.get("Policies", []):
        statements += inline["PolicyDocument"]["Statement"]
    return statements


def fn_statements(s: Synth, name: str) -> list[dict[str, Any]]:
    role_id = ref(s.resources[fn_id(s, name)]["Properties"]["Role"])
    return role_statements(s, role_id)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def actions_on(statements: list[dict[str, Any]], logical_id: str) -> set[str]:
    """Actions any Allow statement grants on a resource derived from ``logical_id``."""
    found: set[str] = set()
    for st in statements:
        if st.get("Effect") != "Allow":
            continue
        if any(logical_id in json.dumps(r) for r in as_list(st["Resource"])):
            found.update(as_list(st["Action"]))
    return found


def table(s: Synth, name: str) -> dict[str, Any]:
    construct = getattr(s.stack.tables, name)
    return s.resources[s.logical_id(construct)]


def _normalise_index(index: dict[str, Any]) -> dict[str, Any]:
    projection = dict(index.get("Projection", {}))
    if "NonKeyAttributes" in projection:
        projection["NonKeyAttributes"] = sorted(projection["NonKeyAttributes"])
    return {"IndexName": index["IndexName"], "KeySchema": index["KeySchema"], "Projection": projection}


def _indexes(props: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return sorted((_normalise_index(i) for i in props.get(key) or []), key=lambda i: i["IndexName"])


class RecordingClient:
    """Stands in for a boto3 DynamoDB client to capture what ``create_tables`` does."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        self.ttl: dict[str, str] = {}
        self.active: set[str] = set()

    def create_table(self, **request: Any) -> dict[str, Any]:
        self.tables[request["TableName"]] = request
        return {"TableDescription": {"LatestStreamArn": "arn:stream"}}

    def update_time_to_live(self, *, TableName: str, TimeToLiveSpecification: dict[str, Any]) -> None:
        assert TableName in self.active, "TTL on a table that may still be CREATING"
        if TimeToLiveSpecification.get("Enabled"):
            self.ttl[TableName] = TimeToLiveSpecification["AttributeName"]

    def get_waiter(self, name: str) -> Any:
        assert name == "table_exists"
        client = self

        class Waiter:
            def wait(self, *, TableName: str, **_: Any) -> None:
                client.active.add(TableName)

        return Waiter()


# ----------------------------------------------------------------------------- DynamoDB


@pytest.mark.parametrize("name", ["memory", "session", "audit"])
def test_tables_match_dynamodb_schema(each_env: Synth, name: str) -> None:
    client = RecordingClient()
    schema.create_tables(client, memory="memory", session="session", audit="audit")
    expected = client.tables[name]
    props = table(each_env, name)["Properties"]

    assert props["KeySchema"] == expected["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
        expected["AttributeDefinitions"], key=lambda a: a["AttributeName"]
    )
    assert _indexes(props, "LocalSecondaryIndexes") == _indexes(expected, "LocalSecondaryIndexes")
    assert _indexes(props, "GlobalSecondaryIndexes") == _indexes(expected, "GlobalSecondaryIndexes")
    assert props["BillingMode"] == expected["BillingMode"] == "PAY_PER_REQUEST"
    stream = expected.get("StreamSpecification")
    if stream and stream.get("StreamEnabled"):
        assert props["StreamSpecification"] == {"StreamViewType": stream["StreamViewType"]}
    else:
        assert "StreamSpecification" not in props
    if name in client.ttl:
        assert props["TimeToLiveSpecification"] == {"AttributeName": client.ttl[name], "Enabled": True}
    else:
        assert "TimeToLiveSpecification" not in props


def test_memory_table_stream_and_ttl_literally(synth: Any) -> None:
    props = table(synth("dev"), "memory")["Properties"]
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    gsis = {i["IndexName"]: i for i in props["GlobalSecondaryIndexes"]}
    assert set(gsis) == {"dirty_users", "scopes", "slot_lists"}
    # the context slots' sparse index, keyed by scope + category, newest first by memory id
    assert [k["AttributeName"] for k in gsis["slot_lists"]["KeySchema"]] == ["slot_pk", "slot_sk"]
    # every record attribute but the vector: a listing reads small entries, not whole items
    projection = gsis["slot_lists"]["Projection"]
    assert projection["ProjectionType"] == "INCLUDE"
    assert set(projection["NonKeyAttributes"]) == set(RECORD_ATTRIBUTES)
    assert not {"embedding", "embedding_f16"} & set(projection["NonKeyAttributes"])
    [by_key] = props["LocalSecondaryIndexes"]
    assert by_key["IndexName"] == "by_key"
    # keys and status only: a keyed write does not copy the record (and its embedding) again
    assert by_key["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]}


def test_tables_pitr_and_encryption(each_env: Synth) -> None:
    for name in ("memory", "session", "audit"):
        props = table(each_env, name)["Properties"]
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["SSESpecification"]["SSEEnabled"] is True
        if each_env.env == "dev":
            assert "KMSMasterKeyId" not in props["SSESpecification"]  # AWS managed key
        else:
            assert ref(props["SSESpecification"]["KMSMasterKeyId"]) == each_env.logical_id(each_env.stack.key)


# ----------------------------------------------------------------------------- removal / protection


def test_prod_retains_and_protects(synth: Any) -> None:
    s = synth("prod")
    for name in ("memory", "session", "audit"):
        res = table(s, name)
        assert res["DeletionPolicy"] == "Retain" and res["UpdateReplacePolicy"] == "Retain"
        assert res["Properties"]["DeletionProtectionEnabled"] is True
    cluster = s.resources[s.stack.get_logical_id(s.stack.graph.cluster)]
    assert cluster["Properties"]["DeletionProtection"] is True
    assert cluster["DeletionPolicy"] == "Snapshot"
    domain = s.resources[s.logical_id(s.stack.search.domain)]
    assert domain["DeletionPolicy"] == "Retain"
    key = s.resources[s.logical_id(s.stack.key)]
    assert key["Properties"]["EnableKeyRotation"] is True and key["DeletionPolicy"] == "Retain"
    assert s.stack.termination_protection is True
    pool = s.resources[s.logical_id(s.stack.api.user_pool)]
    assert pool["DeletionPolicy"] == "Retain"
    assert pool["Properties"]["DeletionProtection"] == "ACTIVE"
    for group in s.of_type("AWS::Logs::LogGroup").values():
        assert group["DeletionPolicy"] == "Retain"


def test_dev_is_disposable(synth: Any) -> None:
    s = synth("dev")
    for name in ("memory", "session", "audit"):
        res = table(s, name)
        assert res["DeletionPolicy"] == "Delete"
        assert res["Properties"].get("DeletionProtectionEnabled") in (None, False)
    assert s.stack.key is None
    assert s.stack.termination_protection is False
    cluster = s.resources[s.stack.get_logical_id(s.stack.graph.cluster)]
    assert cluster["DeletionPolicy"] == "Delete" and cluster["Properties"]["DeletionProtection"] is False


def test_log_retention_per_env(each_env: Synth) -> None:
    expected = {"dev": 7, "staging": 30, "prod": 365}[each_env.env]
    groups = each_env.of_type("AWS::Logs::LogGroup")
    assert groups
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == expected


# ----------------------------------------------------------------------------- SQS


def test_ingest_queue_has_dlq_and_long_visibility(each_env: Synth) -> None:
    s = each_env
    queues = s.stack.queues
    ingest = s.resources[s.logical_id(queues.ingest)]["Properties"]
    dlq_id = s.logical_id(queues.ingest_dlq)
    assert ingest["RedrivePolicy"]["maxReceiveCount"] == 5
    assert ref(ingest["RedrivePolicy"]["deadLetterTargetArn"]) == dlq_id
    timeout = s.resources[fn_id(s, "ingest")]["Properties"]["Timeout"]
    assert ingest["VisibilityTimeout"] >= 6 * timeout
    for queue in s.of_type("AWS::SQS::Queue").values():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
    # every queue refuses non-TLS requests
    denies = [
        st
        for policy in s.of_type("AWS::SQS::QueuePolicy").values()
        for st in policy["Properties"]["PolicyDocument"]["Statement"]
        if st["Effect"] == "Deny"
        and st.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
    ]
    assert len(denies) == len(s.of_type("AWS::SQS::Queue"))


# ----------------------------------------------------------------------------- event sources / schedules


def test_sqs_event_source_reports_batch_item_failures(each_env: Synth) -> None:
    s = each_env
    mappings = [
        m["Properties"]
        for m in s.of_type("AWS::Lambda::EventSourceMapping").values()
        if ref(m["Properties"]["EventSourceArn"]) == s.logical_id(s.stack.queues.ingest)
    ]
    assert len(mappings) == 1
    sqs_map = mappings[0]
    assert ref(sqs_map["FunctionName"]) == fn_id(s, "ingest")
    assert sqs_map["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert sqs_map["BatchSize"] <= 10
    assert sqs_map["ScalingConfig"]["MaximumConcurrency"] >= 2


def test_stream_event_source(each_env: Synth) -> None:
    s = each_env
    memory_id = s.logical_id(s.stack.tables.memory)
    mappings = [
        m["Properties"]
        for m in s.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["EventSourceArn"] == {"Fn::GetAtt": [memory_id, "StreamArn"]}
    ]
    assert len(mappings) == 1
    stream = mappings[0]
    assert ref(stream["FunctionName"]) == fn_id(s, "projector")
    assert stream["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert stream["BisectBatchOnFunctionError"] is True
    assert 0 < stream["MaximumRetryAttempts"] <= 10
    assert stream["StartingPosition"] == "TRIM_HORIZON"
    destination = stream["DestinationConfig"]["OnFailure"]["Destination"]
    assert ref(destination) == s.logical_id(s.stack.queues.projector_failures)
    pattern = json.loads(stream["FilterCriteria"]["Filters"][0]["Pattern"])
    assert pattern == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MEM#"}]}}}}


def test_stream_filter_is_the_codec_prefix() -> None:
    """The filter keeps exactly the items the projector's codec handles (sk ``MEM#...``)."""
    require_cdk()
    from agentmem.adapters import codec
    from agentmem.adapters.aws import dynamodb_bookkeeping
    from agentmem_infra.compute import MEMORY_SK_PREFIX

    assert MEMORY_SK_PREFIX == codec.SORT_KEY_PREFIX
    for sk in (dynamodb_bookkeeping.PENDING_SK, dynamodb_bookkeeping.SCOPE_SK):
        assert not sk.startswith(MEMORY_SK_PREFIX)
        record = {
            "eventName": "MODIFY",
            "dynamodb": {"Keys": {"pk": {"S": "TENANT#t#USER#u"}, "sk": {"S": sk}}},
        }
        assert codec.change_from_stream_record(record) is None


@pytest.mark.parametrize(
    ("name", "expression"), [("consolidate", "rate(15 minutes)"), ("reconcile", "rate(1 hour)")]
)
def test_schedules(each_env: Synth, name: str, expression: str) -> None:
    s = each_env
    rules = [
        r["Properties"]
        for r in s.of_type("AWS::Events::Rule").values()
        if any(ref(t["Arn"]) == fn_id(s, name) for t in r["Properties"]["Targets"])
    ]
    assert len(rules) == 1
    rule = rules[0]
    assert rule["ScheduleExpression"] == expression
    target = rule["Targets"][0]
    assert ref(target["DeadLetterConfig"]["Arn"]) == s.logical_id(s.stack.queues.schedule_dlq)
    assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1


# ----------------------------------------------------------------------------- functions


def test_functions_runtime_layer_tracing_vpc(each_env: Synth) -> None:
    s = each_env
    layer_id = s.logical_id(s.stack.compute.layer)
    for name in FUNCTIONS:
        props = s.resources[fn_id(s, name)]["Properties"]
        assert props["Runtime"] == "python3.12"
        assert props["Architectures"] == ["arm64"]
        assert props["Handler"] == "handler.handler"
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["Layers"] == [{"Ref": layer_id}]
        assert props["VpcConfig"]["SubnetIds"], name
        env = props["Environment"]["Variables"]
        assert env["POWERTOOLS_SERVICE_NAME"] == f"agentmem-{name}"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "agentmem"
    layer = s.resources[layer_id]["Properties"]
    assert layer["CompatibleRuntimes"] == ["python3.12"]
    assert layer["CompatibleArchitectures"] == ["arm64"]


def test_every_lambda_is_traced(each_env: Synth) -> None:
    python = [
        p["Properties"]
        for p in each_env.of_type("AWS::Lambda::Function").values()
        if str(p["Properties"].get("Runtime", "")).startswith("python")
    ]
    assert len(python) == 8  # five functions, the authorizer, the OpenSearch role mapping and index setup
    for props in python:
        assert props["TracingConfig"] == {"Mode": "Active"}
    stage = next(iter(each_env.of_type("AWS::ApiGateway::Stage").values()))["Properties"]
    assert stage["TracingEnabled"] is True


def test_function_code_is_the_handler_folder(each_env: Synth) -> None:
    """Each function's asset is its own ``functions/<name>`` folder (staged in the cloud assembly)."""
    s = each_env
    for name in FUNCTIONS:
        key = s.resources[fn_id(s, name)]["Properties"]["Code"]["S3Key"]
        staged = s.outdir / f"asset.{key.removesuffix('.zip')}" / "handler.py"
        assert staged.read_text(encoding="utf-8") == (REPO / "functions" / name / "handler.py").read_text(
            encoding="utf-8"
        )


def test_the_layer_ships_the_library_without_development_tooling(each_env: Synth) -> None:
    """The layer asset holds ``agentmem`` only: no emulator, CLI, eval, benchmarks or test fakes."""
    s = each_env
    (layer,) = s.of_type("AWS::Lambda::LayerVersion").values()
    key = layer["Properties"]["Content"]["S3Key"]
    staged = s.outdir / f"asset.{key.removesuffix('.zip')}"
    assert (staged / "agentmem" / "bootstrap.py").is_file()  # skip-bundling: layers/ as is
    assert not (staged / "agentmem_dev").exists()
    shipped = {p.relative_to(staged).parts[1] for p in staged.glob("agentmem/*")}
    assert not shipped & {"local", "cli.py", "demo.py", "bench", "eval", "testing"}
    assert not list(staged.rglob("testing")) and not list(staged.rglob("smoke*.py"))


def _settings_env(env: dict[str, Any]) -> dict[str, str]:
    """The AGENTMEM_* variables with CloudFormation references replaced by plausible values."""
    placeholders = {
        "AGENTMEM_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/ingest",
        "AGENTMEM_NEPTUNE_PORT": "8182",
        "AGENTMEM_AWS_REGION": "eu-west-1",
    }
    out = {}
    for key, value in env.items():
        if not key.startswith("AGENTMEM_"):
            continue
        out[key] = value if isinstance(value, str) else placeholders.get(key, f"resolved-{key.lower()}")
    return out


def test_function_settings_are_valid_agentmem_settings(
    each_env: Synth, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.adapters.aws.neptune_graph import NeptuneGraphStore
    from agentmem.adapters.aws.opensearch_index import OpenSearchIndex
    from agentmem.bootstrap import bootstrap
    from agentmem.settings import Settings

    fields = {f"AGENTMEM_{name.upper()}" for name in Settings.model_fields}
    for name in FUNCTIONS:
        env = each_env.resources[fn_id(each_env, name)]["Properties"]["Environment"]["Variables"]
        values = _settings_env(env)
        assert set(values) <= fields, set(values) - fields  # no misspelt variable
        for key in (
            "AGENTMEM_TABLE_MEMORY",
            "AGENTMEM_TABLE_SESSION",
            "AGENTMEM_TABLE_AUDIT",
            "AGENTMEM_QUEUE_URL",
        ):
            assert not isinstance(env[key], str), f"{key} must reference the resource, not a fixed name"
        for key in list(fields):
            monkeypatch.delenv(key, raising=False)
        for key, value in values.items():
            monkeypatch.setenv(key, value)
        settings = Settings()
        assert settings.backend == "aws" and settings.embedder == "bedrock"
        assert settings.search_backend == "opensearch" and settings.graph_backend == "neptune"
        # The composition root accepts them (it builds lazily: no network here).
        container = bootstrap(settings)
        assert isinstance(container.index, OpenSearchIndex) and isinstance(container.graph, NeptuneGraphStore)


def test_reserved_concurrency(synth: Any) -> None:
    from agentmem_infra.config import PROD_RECONCILE_SEGMENTS

    for env in ENVS:
        s = synth(env)
        for name, prod in (("consolidate", 1), ("reconcile", PROD_RECONCILE_SEGMENTS)):  # one per segment
            value = s.resources[fn_id(s, name)]["Properties"].get("ReservedConcurrentExecutions")
            assert value == (None if env == "dev" else prod)


# ----------------------------------------------------------------------------- IAM


def test_audit_table_is_append_only(each_env: Synth) -> None:
    s = each_env
    audit_id = s.logical_id(s.stack.tables.audit)
    granted_somewhere = False
    for policy in s.of_type("AWS::IAM::Policy").values():
        actions = actions_on(policy["Properties"]["PolicyDocument"]["Statement"], audit_id)
        if actions:
            granted_somewhere = True
            assert actions <= {"dynamodb:PutItem", "dynamodb:Query"}, actions
    assert granted_somewhere
    for name in FUNCTIONS:
        assert actions_on(fn_statements(s, name), audit_id) == {"dynamodb:PutItem", "dynamodb:Query"}


def test_least_privilege_matrix(synth: Any) -> None:
    s = synth("staging")
    memory = s.logical_id(s.stack.tables.memory)
    session = s.logical_id(s.stack.tables.session)
    write = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    projector = fn_statements(s, "projector")
    assert not actions_on(projector, memory) & write  # the projector only reads the source of truth
    assert actions_on(projector, session) == set()
    assert actions_on(fn_statements(s, "consolidate"), session) == set()
    assert actions_on(fn_statements(s, "reconcile"), session) == set()
    assert "dynamodb:BatchWriteItem" in actions_on(fn_statements(s, "api"), memory)  # GDPR erase
    every = [a for name in FUNCTIONS for st in fn_statements(s, name) for a in as_list(st["Action"])]
    assert not [a for a in every if a.endswith(":*") or a == "*"]
    # only the api enqueues turns
    for name in FUNCTIONS:
        sends = [st for st in fn_statements(s, name) if "sqs:SendMessage" in as_list(st["Action"])]
        ingest_queue = s.logical_id(s.stack.queues.ingest)
        targets = {json.dumps(r) for st in sends for r in as_list(st["Resource"])}
        assert (any(ingest_queue in t for t in targets)) == (name == "api"), name


def _bedrock(statements: list[dict[str, Any]]) -> list[str]:
    return [
        json.dumps(r)
        for st in statements
        if any(a.startswith("bedrock:") for a in as_list(st["Action"]))
        for r in as_list(st["Resource"])
    ]


def test_bedrock_permissions(synth: Any) -> None:
    s = synth("prod")
    for name in FUNCTIONS:
        resources = _bedrock(fn_statements(s, name))
        if name in ("ingest", "api"):
            assert len(resources) == 1 and "foundation-model/amazon.titan-embed-text-v2:0" in resources[0]
        else:
            assert resources == [], name
        for st in fn_statements(s, name):
            assert not {a for a in as_list(st["Action"]) if a.startswith("bedrock:")} - {
                "bedrock:InvokeModel"
            }


def test_llm_flag_adds_converse_model(tmp_path: Path) -> None:
    require_cdk()
    s = synthesize("dev", tmp_path, **{"agentmem:bedrockLlmEnabled": "true"})
    for name in ("ingest", "api"):
        resources = _bedrock(fn_statements(s, name))
        assert any("foundation-model/amazon.nova-lite-v1:0" in r for r in resources), resources
        env = s.resources[fn_id(s, name)]["Properties"]["Environment"]["Variables"]
        assert env["AGENTMEM_BEDROCK_LLM_ENABLED"] == "true"


def test_bedrock_inference_profile_arns() -> None:
    require_cdk()
    from agentmem_infra.compute import bedrock_model_arns

    assert len(bedrock_model_arns("amazon.titan-embed-text-v2:0")) == 1
    profile = bedrock_model_arns("eu.amazon.nova-lite-v1:0")
    assert "inference-profile/eu.amazon.nova-lite-v1:0" in profile[0]
    assert profile[1].endswith(":bedrock:*::foundation-model/amazon.nova-lite-v1:0")


# ----------------------------------------------------------------------------- OpenSearch / Neptune


def test_opensearch_domain(each_env: Synth) -> None:
    s = each_env
    props = s.resources[s.logical_id(s.stack.search.domain)]["Properties"]
    assert props["VPCOptions"]["SubnetIds"]
    assert props["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert props["EncryptionAtRestOptions"]["Enabled"] is True
    assert props["DomainEndpointOptions"]["EnforceHTTPS"] is True
    security = props["AdvancedSecurityOptions"]
    assert security["Enabled"] is True and security["InternalUserDatabaseEnabled"] is False
    assert ref(security["MasterUserOptions"]["MasterUserARN"]) == s.logical_id(s.stack.search.admin_role)
    cluster = props["ClusterConfig"]
    if s.env == "prod":
        assert cluster["ZoneAwarenessEnabled"] is True
        assert cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 2}
        assert len(props["VPCOptions"]["SubnetIds"]) == 2
        assert cluster["DedicatedMasterEnabled"] is True
        assert ref(props["EncryptionAtRestOptions"]["KmsKeyId"]) == s.logical_id(s.stack.key)
    principals = {
        ref(p) for st in props["AccessPolicies"]["Statement"] for p in as_list(st["Principal"]["AWS"])
    }
    expected = {s.logical_id(s.stack.compute.roles[n]) for n in ("ingest", "api", "projector", "reconcile")}
    expected.add(s.logical_id(s.stack.index_setup.role))  # puts the template and creates the index
    assert principals == expected | {s.logical_id(s.stack.search.admin_role)}
    mapping = next(iter(s.of_type("Custom::OpenSearchRoleMapping").values()))["Properties"]
    assert {ref(r) for r in mapping["BackendRoles"]} == expected
    assert mapping["IndexPattern"] == "agentmem-memories*"


def test_neptune_cluster(each_env: Synth) -> None:
    s = each_env
    graph = s.stack.graph
    props = s.resources[s.stack.get_logical_id(graph.cluster)]["Properties"]
    assert props["IamAuthEnabled"] is True and props["StorageEncrypted"] is True
    assert props["BackupRetentionPeriod"] >= 7
    subnet_group = s.resources[ref(props["DBSubnetGroupName"])]["Properties"]
    private = {s.stack.get_logical_id(sn.node.default_child) for sn in s.stack.network.vpc.private_subnets}
    assert {ref(x) for x in subnet_group["SubnetIds"]} == private  # same VPC as the functions
    instances = s.of_type("AWS::Neptune::DBInstance")
    assert len(instances) == (2 if s.env != "dev" else 1)
    # Gremlin port only from the functions that use the graph
    sg = s.logical_id(graph.security_group)
    sources = {
        ref(r["Properties"]["SourceSecurityGroupId"])
        for r in s.of_type("AWS::EC2::SecurityGroupIngress").values()
        if ref(r["Properties"]["GroupId"]) == sg
    }
    assert sources == {
        s.logical_id(s.stack.compute.security_groups[n])
        for n in ("api", "projector", "consolidate", "reconcile")
    }
    env = s.resources[fn_id(s, "projector")]["Properties"]["Environment"]["Variables"]
    assert env["AGENTMEM_NEPTUNE_ENDPOINT"] == {
        "Fn::GetAtt": [s.stack.get_logical_id(graph.cluster), "Endpoint"]
    }
    assert env["AGENTMEM_NEPTUNE_IAM_AUTH"] == "true"


# ----------------------------------------------------------------------------- API


def test_api_proxy_authorizer_throttling_logging(each_env: Synth) -> None:
    s = each_env
    methods = [m["Properties"] for m in s.of_type("AWS::ApiGateway::Method").values()]
    assert len(methods) == 3
    (method,) = [m for m in methods if m["HttpMethod"] == "ANY"]
    ui_methods = [m for m in methods if m is not method]
    # the inspector's static files: GET only, no authorizer, the same api function
    assert {m["HttpMethod"] for m in ui_methods} == {"GET"}
    assert {m["AuthorizationType"] for m in ui_methods} == {"NONE"}
    assert all(fn_id(s, "api") in json.dumps(m["Integration"]["Uri"]) for m in ui_methods)
    assert method["HttpMethod"] == "ANY" and method["AuthorizationType"] == "CUSTOM"
    assert method["Integration"]["Type"] == "AWS_PROXY"
    assert fn_id(s, "api") in json.dumps(method["Integration"]["Uri"])
    resources = {r["Properties"]["PathPart"] for r in s.of_type("AWS::ApiGateway::Resource").values()}
    assert resources == {"v1", "{proxy+}", "ui", "{asset}"}
    authorizer = next(iter(s.of_type("AWS::ApiGateway::Authorizer").values()))["Properties"]
    assert authorizer["Type"] == "TOKEN"
    assert authorizer["IdentitySource"] == "method.request.header.Authorization"
    assert authorizer["AuthorizerResultTtlInSeconds"] == 300
    assert re.match(authorizer["IdentityValidationExpression"], "Bearer aaa.bbb.ccc")
    assert not re.match(authorizer["IdentityValidationExpression"], "Basic dXNlcjpwYXNz")
    stage = next(iter(s.of_type("AWS::ApiGateway::Stage").values()))["Properties"]
    assert stage["StageName"] == s.env
    settings = stage["MethodSettings"][0]
    assert settings["ThrottlingRateLimit"] > 0 and settings["ThrottlingBurstLimit"] > 0
    assert settings["DataTraceEnabled"] is False
    log_format = json.loads(stage["AccessLogSetting"]["Format"])
    assert log_format["principal"] == "$context.authorizer.principalId"
    assert len(s.of_type("AWS::WAFv2::WebACLAssociation")) == (0 if s.env == "dev" else 1)


def test_user_pool_attributes_are_admin_only(synth: Any) -> None:
    s = synth("prod")
    client = next(iter(s.of_type("AWS::Cognito::UserPoolClient").values()))["Properties"]
    assert "custom:tenant_id" in client["ReadAttributes"] and "custom:permissions" in client["ReadAttributes"]
    assert not [a for a in client["WriteAttributes"] if a.startswith("custom:")]
    pool = s.resources[s.logical_id(s.stack.api.user_pool)]["Properties"]
    assert pool["MfaConfiguration"] == "ON"
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    tenant = next(a for a in pool["Schema"] if a["Name"] == "tenant_id")
    assert tenant["Mutable"] is False


# ----------------------------------------------------------------------------- alarms


def test_alarms_in_staging_and_prod(synth: Any) -> None:
    for env in ("staging", "prod"):
        s = synth(env)
        alarms = [a["Properties"] for a in s.of_type("AWS::CloudWatch::Alarm").values()]
        by_metric: dict[str, list[dict[str, Any]]] = {}
        for alarm in alarms:
            by_metric.setdefault(alarm["MetricName"], []).append(alarm)
            assert alarm["AlarmActions"], "every alarm notifies the topic"
        dlq_queues = {
            json.dumps(d["Value"])
            for a in by_metric["ApproximateNumberOfMessagesVisible"]
            for d in a["Dimensions"]
        }
        for queue in (
            s.stack.queues.ingest_dlq,
            s.stack.queues.projector_failures,
            s.stack.queues.schedule_dlq,
        ):
            assert any(s.logical_id(queue) in q for q in dlq_queues)
        age = by_metric["IteratorAge"]
        assert len(age) == 1 and fn_id(s, "projector") in json.dumps(age[0]["Dimensions"])
        errored = {json.dumps(a["Dimensions"]) for a in by_metric["Errors"]}
        for name in FUNCTIONS:
            assert any(fn_id(s, name) in d for d in errored), name
        assert by_metric["5XXError"]


# ----------------------------------------------------------------------------- cdk-nag


def test_nag_clean(each_env: Synth) -> None:
    """The fixture synthesized with the AwsSolutions pack: any unacknowledged finding would have
    raised. The validation report in the assembly must hold no plugin findings either."""
    report = json.loads((each_env.outdir / "validation-report.json").read_text(encoding="utf-8"))
    assert report.get("pluginReports", []) == []


def test_nag_clean_with_concrete_account_and_region(tmp_path: Path) -> None:
    """Acknowledgements follow concrete ARNs too (account/region known at synth time)."""
    require_cdk()
    s = synthesize("prod", tmp_path, account="123456789012", region="eu-west-1")
    assert s.stack.region == "eu-west-1"


def test_nag_is_active(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the acknowledgements the same stack fails synthesis on AwsSolutions findings."""
    require_cdk()
    import agentmem_infra.stack as stack_module

    monkeypatch.setattr(stack_module, "acknowledge_findings", lambda stack: None)
    with pytest.raises(Exception, match=r"ValidationFailed|Validation failed"):
        synthesize("dev", tmp_path)
    report = json.loads((tmp_path / "validation-report.json").read_text(encoding="utf-8"))
    rules = {v["ruleName"] for plugin in report["pluginReports"] for v in plugin["violations"]}
    assert {"AwsSolutions-L1", "AwsSolutions-COG4"} <= {r.split("[")[0] for r in rules}


def test_every_acknowledgement_has_a_reason() -> None:
    require_cdk()
    from agentmem_infra.nag import acknowledge

    with pytest.raises(ValueError, match="real reason"):
        acknowledge(object(), "AwsSolutions-L1", "because")  # type: ignore[arg-type]


def test_alarm_topic_key_lets_cloudwatch_publish(synth: Any) -> None:
    s = synth("prod")
    alarms = s.stack.alarms
    assert alarms is not None
    topic = s.resources[s.logical_id(alarms.topic)]["Properties"]
    assert ref(topic["KmsMasterKeyId"]) == s.logical_id(alarms.key)
    policy = s.resources[s.logical_id(alarms.key)]["Properties"]["KeyPolicy"]["Statement"]
    assert any(st.get("Principal") == {"Service": "cloudwatch.amazonaws.com"} for st in policy)


def _references(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if "Ref" in node and isinstance(node["Ref"], str):
            found.add(node["Ref"])
        if "Fn::GetAtt" in node:
            found.add(str(node["Fn::GetAtt"][0]))
        for value in node.values():
            found |= _references(value)
    elif isinstance(node, list):
        for value in node:
            found |= _references(value)
    return found


def test_template_has_no_dependency_cycle(each_env: Synth) -> None:
    """CloudFormation rejects circular dependencies only at deploy time; check them here."""
    resources = each_env.resources
    edges = {
        name: (_references(res.get("Properties", {})) | set(as_list(res.get("DependsOn", []))))
        & set(resources)
        for name, res in resources.items()
    }
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in edges[node]:
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join([*path, node, nxt]))
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for name in resources:
        if name not in state:
            visit(name, [])


def test_service_linked_role_is_opt_in(synth: Any, tmp_path: Path) -> None:
    assert synth("dev").of_type("AWS::IAM::ServiceLinkedRole") == {}
    s = synthesize("dev", tmp_path, **{"agentmem:createServiceLinkedRole": "true"})
    roles = s.of_type("AWS::IAM::ServiceLinkedRole")
    assert [r["Properties"]["AWSServiceName"] for r in roles.values()] == ["opensearchservice.amazonaws.com"]
    domain = s.resources[s.logical_id(s.stack.search.domain)]
    assert set(roles) <= set(as_list(domain.get("DependsOn", [])))
