"""``agentmem deploy check``: what an account needs before a first deploy, read from the template."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from infra_helpers import Synth

from agentmem_infra import preflight
from agentmem_infra.config import CONFIGS, FUNCTIONS

pytestmark = pytest.mark.xdist_group("cdk")


def test_staging_needs_a_concurrency_quota_of_105_and_says_why(synth: Any) -> None:
    s: Synth = synth("staging")
    specs = CONFIGS["staging"].functions  # the reindex function's is reserved only while it is made
    reserved = sum(specs[name].reserved_concurrency or 0 for name in FUNCTIONS)
    result = preflight.check(s.template, "staging", layer_bytes=150_000_000)
    (line,) = [p for p in result.prerequisites if "concurrency quota" in p]
    assert f"at least {reserved + 100}" in line and reserved + 100 == 105
    assert any("service-linked role" in p for p in result.prerequisites)
    assert any("amazon.titan-embed-text-v2:0" in p for p in result.prerequisites)
    assert result.problems == []


def test_the_floor_counts_what_the_environment_runs(each_env: Synth) -> None:
    config = CONFIGS[each_env.env]
    result = preflight.check(each_env.template, each_env.env, layer_bytes=150_000_000)
    lines = dict(result.costs)
    assert lines[f"OpenSearch data node {config.opensearch_instance_type} × {config.opensearch_data_nodes}"]
    assert lines[f"Neptune instance {config.neptune_instance_class} × {config.neptune_instances}"]
    assert lines[f"NAT gateway (hours; data processed is per use) × {config.nat_gateways}"]
    assert all(cost is not None for cost in lines.values()), "every resource of every env is priced"
    assert result.monthly_floor > 0


def test_an_unpriced_resource_or_an_oversized_asset_is_a_problem(synth: Any) -> None:
    template = copy.deepcopy(synth("dev").template)
    domain = next(v for v in template["Resources"].values() if v["Type"] == "AWS::OpenSearchService::Domain")
    domain["Properties"]["ClusterConfig"]["InstanceType"] = "x9.huge.search"
    result = preflight.check(template, "dev", layer_bytes=300_000_000)
    assert any("no price for 'OpenSearch data node x9.huge.search" in p for p in result.problems)
    assert any("over the limit of 262,144,000" in p for p in result.problems)


def test_a_stack_that_creates_the_service_linked_role_does_not_ask_for_it(synth: Any) -> None:
    template = copy.deepcopy(synth("dev").template)
    template["Resources"]["Slr"] = {
        "Type": "AWS::IAM::ServiceLinkedRole",
        "Properties": {"AWSServiceName": "opensearchservice.amazonaws.com"},
    }
    assert not any("service-linked role" in p for p in preflight.prerequisites(template))


def test_the_layer_estimate_is_within_the_limit_and_holds_the_guards_libraries() -> None:
    size = preflight.estimated_layer_bytes()
    assert 50_000_000 < size < preflight.LAMBDA_UNZIPPED_LIMIT


def test_agentmem_deploy_check_prints_the_report(
    synth: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from agentmem_dev.cli import main

    monkeypatch.setattr(preflight, "synthesize", lambda env, context=(): synth(env).template)
    assert main(["deploy", "check", "--env", "staging", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["env"] == "staging" and report["monthly_floor_usd"] > 0 and report["problems"] == []


def test_titan_anchors_travel_from_the_context_to_the_functions(synth: Any) -> None:
    from agentmem_infra.config import load_config

    assert any(
        "agentmem calibrate --embedder bedrock" in p for p in preflight.prerequisites(synth("dev").template)
    )
    config = load_config("dev", {"agentmem:embedCalibration": "0.1,0.8,0.05,0.7"})
    assert config.bedrock_embed_calibration == "0.1,0.8,0.05,0.7"
    with pytest.raises(ValueError, match="four numbers"):
        load_config("dev", {"agentmem:embedCalibration": "0.1,0.8"})
