"""The reindex function in the template (``-c agentmem:reindexTo=...``, docs/aws.md "Changing the
embedding model"): made only while a reindex is configured, invoked by the operator (no schedule,
no event source), with the new model's embedder and its own index while every other function keeps
the serving ones; Bedrock granted on the new model; a reindex that would share the serving index
(or its template's pattern) refused at synth. Its table grants are checked against the calls it
makes in test_infra_grants_cover_calls.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REINDEX_TO
from infra_helpers import Synth

from agentmem_infra.config import load_config
from agentmem_infra.index_setup import index_spec

pytestmark = pytest.mark.xdist_group("cdk")


def function(s: Synth, name: str) -> tuple[str, dict[str, Any]]:
    found = [
        (k, v)
        for k, v in s.of_type("AWS::Lambda::Function").items()
        if str(v["Properties"].get("Description", "")).startswith(f"agentmem {name}:")
    ]
    assert len(found) == 1, name
    return found[0]


def test_the_reindex_function_runs_the_new_model_on_its_own_index(reindexing: Synth) -> None:
    logical, fn = function(reindexing, "reindex")
    env = fn["Properties"]["Environment"]["Variables"]
    assert env["AGENTMEM_OPENSEARCH_INDEX"] == "agentmem-titan-512"
    assert env["AGENTMEM_BEDROCK_EMBED_DIMENSION"] == "512"
    assert env["AGENTMEM_OPENSEARCH_CREATE_INDEX"] == "true"  # it makes the new index itself
    assert fn["Properties"]["Timeout"] == 900
    for name in ("ingest", "api", "projector", "consolidate", "reconcile"):
        other = function(reindexing, name)[1]["Properties"]["Environment"]["Variables"]
        assert other["AGENTMEM_OPENSEARCH_INDEX"] == "agentmem-memories"
        assert other["AGENTMEM_BEDROCK_EMBED_DIMENSION"] == "1024"
    triggers = json.dumps(
        {**reindexing.of_type("AWS::Lambda::EventSourceMapping"), **reindexing.of_type("AWS::Events::Rule")}
    )
    assert logical not in triggers  # invoked by the operator only


def test_the_reindex_role_may_call_the_new_model(reindexing: Synth) -> None:
    _, fn = function(reindexing, "reindex")
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    statements = [
        st
        for policy in reindexing.of_type("AWS::IAM::Policy").values()
        if any(r.get("Ref") == role for r in policy["Properties"]["Roles"])
        for st in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    bedrock = [st for st in statements if st["Action"] == "bedrock:InvokeModel"]
    assert bedrock and "amazon.titan-embed-text-v2:0" in json.dumps(bedrock)
    assert not [st for st in statements if "neptune-db" in json.dumps(st["Action"])]


def test_a_stack_without_a_reindex_has_no_reindex_function(synth: Any) -> None:
    s: Synth = synth("dev")
    assert not [
        v
        for v in s.of_type("AWS::Lambda::Function").values()
        if str(v["Properties"].get("Description", "")).startswith("agentmem reindex:")
    ]


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ({"AGENTMEM_EMBEDDER": "bedrock"}, "AGENTMEM_OPENSEARCH_INDEX"),
        ({"AGENTMEM_OPENSEARCH_INDEX": "agentmem-memories"}, "a new index"),
        ({"AGENTMEM_OPENSEARCH_INDEX": "agentmem-memories-v2"}, "a new index"),
        ({**REINDEX_TO, "AGENTMEM_QUEUE_URL": "https://x"}, "embedder settings and the index only"),
        ({**REINDEX_TO, "AGENTMEM_OPENAI_API_KEY": "sk-1"}, "must not be in the template"),
        ({**REINDEX_TO, "AGENTMEM_BEDROCK_EMBED_DIMENSION": "300"}, "Titan's dimension"),
        ({**REINDEX_TO, "AGENTMEM_EMBEDDER": "openai-compatible"}, "AGENTMEM_OPENAI_BASE_URL"),
        (
            {
                **REINDEX_TO,
                "AGENTMEM_EMBEDDER": "openai-compatible",
                "AGENTMEM_OPENAI_BASE_URL": "https://models.example.com/v1",
                "AGENTMEM_OPENAI_EMBED_MODEL": "bge-m3",
            },
            "OPENAI_EMBED_DIMENSION",
        ),
    ],
)
def test_a_reindex_that_would_not_leave_the_serving_index_alone_is_refused(
    target: dict[str, str], why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        load_config("dev", {"agentmem:reindexTo": json.dumps(target)})


def test_the_switch_deploy_names_the_new_index_and_dimension() -> None:
    config = load_config(
        "dev", {"agentmem:opensearchIndex": "agentmem-titan-512", "agentmem:bedrockEmbedDimension": "512"}
    )
    spec = index_spec(config)
    assert (spec.index, spec.dimension) == ("agentmem-titan-512", 512)
