"""The OpenAI-compatible model server's key kept in Secrets Manager: the function that calls the
model reads it (recorded on moto, through the real ingest handler) and **its own role in the
synthesized template** allows exactly that read; a function that calls no model gets no grant."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from iam_calls import CallRecorder, Request, TemplatePolicies, denied
from infra_helpers import require_cdk, synthesize

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.emulator import events, lambdas
from support.aws import REGION, moto_tables
from support.fakes.fake_openai import fake_openai_server

pytestmark = pytest.mark.xdist_group("cdk")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PROVIDER = {
    "AGENTMEM_LLM": "openai-compatible",
    "AGENTMEM_OPENAI_BASE_URL": "https://models.example.com/v1",
    "AGENTMEM_OPENAI_LLM_MODEL": "qwen2.5-7b-instruct",
}


def test_the_model_servers_key_is_read_by_ingest_and_granted_to_it_alone(tmp_path: Path) -> None:
    require_cdk()
    with (
        moto_tables() as tables,
        fake_openai_server(chat=lambda body: '{"facts": []}', api_key="sk-1") as server,
    ):
        secrets = boto3.client("secretsmanager", region_name=REGION)
        arn = secrets.create_secret(Name="agentmem-openai", SecretString=json.dumps({"api_key": "sk-1"}))[
            "ARN"
        ]
        queue_url = tables.sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
        settings = load_settings(
            backend="aws",
            embedder="hash",
            search_backend="local",
            graph_backend="local",
            local_projection_dir=tmp_path / "projections",
            queue_url=queue_url,
            aws_region=REGION,
            llm="openai-compatible",
            openai_base_url=server.url,
            openai_llm_model="m",
            openai_api_key_secret_arn=arn,
        )
        container = bootstrap(settings, clock=ManualClock(T0), embedder=HashEmbedder())
        recorder = CallRecorder()
        with recorder.recording(lambdas):
            container.queue.send(
                [
                    TurnMessage.from_turn(
                        Turn(Scope("acme", "alice"), "s-1", "What tea do I like?", "Oolong.", T0, "m-1")
                    )
                ]
            )
            messages = tables.sqs.receive_message(
                QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]
            )["Messages"]
            assert lambdas.invoke("ingest", events.sqs_event_of(messages), container) == {
                "batchItemFailures": []
            }
    assert server.requests and server.requests[0].headers["authorization"] == "Bearer sk-1"
    read = Request("secretsmanager:GetSecretValue", arn)
    requests = recorder.requests(REGION)
    assert read in requests["ingest"]

    s = synthesize(
        "dev",
        tmp_path / "cdk",
        **{"agentmem:openai": json.dumps(PROVIDER), "agentmem:openaiKeySecretArn": arn},
    )
    policies = TemplatePolicies(s.template, REGION, container.settings)
    ingest = policies.function_id("agentmem ingest:")
    policies.bind(ingest)
    assert denied(policies.statements(ingest), requests["ingest"]) == []
    projector = policies.function_id("agentmem projector:")
    policies.bind(projector)
    assert denied(policies.statements(projector), {read}) == [read]
    environment = json.dumps(s.template["Resources"])
    assert "AGENTMEM_OPENAI_API_KEY_SECRET_ARN" in environment and "sk-1" not in environment


def test_the_provider_context_is_checked_at_synth() -> None:
    from agentmem_infra.config import load_config
    from agentmem_infra.index_setup import index_spec

    with pytest.raises(ValueError, match="must not be in the template"):
        load_config("dev", {"agentmem:openai": json.dumps({**PROVIDER, "AGENTMEM_OPENAI_API_KEY": "sk"})})
    with pytest.raises(ValueError, match="provider settings only"):
        load_config("dev", {"agentmem:openai": json.dumps({"AGENTMEM_BACKEND": "local"})})
    with pytest.raises(ValueError, match="unknown settings"):
        load_config("dev", {"agentmem:openai": json.dumps({"AGENTMEM_OPENAI_MODLE": "x"})})
    embedder = {
        "AGENTMEM_EMBEDDER": "openai-compatible",
        "AGENTMEM_OPENAI_BASE_URL": "https://models.example.com/v1",
        "AGENTMEM_OPENAI_EMBED_MODEL": "bge-m3",
    }
    with pytest.raises(ValueError, match="EMBED_DIMENSION"):
        load_config("dev", {"agentmem:openai": json.dumps(embedder)})
    embedder |= {
        "AGENTMEM_OPENAI_EMBED_DIMENSION": "1024",
        "AGENTMEM_OPENAI_EMBED_CALIBRATION": "0.3,0.9,0.2,0.8",
    }
    config = load_config("dev", {"agentmem:openai": json.dumps(embedder)})
    assert index_spec(config).dimension == 1024
    with pytest.raises(ValueError, match="ARN"):
        load_config("dev", {"agentmem:openaiKeySecretArn": "sk-not-an-arn"})
