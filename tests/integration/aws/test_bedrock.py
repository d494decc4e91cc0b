"""Bedrock adapters on botocore Stubber (moto does not implement Converse): the requests sent to
Titan v2 and Converse, realistic responses, throttling and malformed model output."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import numpy as np
import pytest
from awshelpers import REGION
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from agentmem.adapters.aws.bedrock import PLACEHOLDER_CALIBRATION, BedrockEmbedder
from agentmem.adapters.aws.bedrock_llm import BedrockLLM
from agentmem.adapters.aws.errors import LazyClient
from agentmem.domain.llm_facts import LlmFact
from agentmem.errors import ConfigurationError, EmbedderUnavailable
from agentmem.ports import Embedder

MODEL = "amazon.titan-embed-text-v2:0"


def runtime() -> tuple[Any, Stubber]:
    client = boto3.client("bedrock-runtime", region_name=REGION)
    return client, Stubber(client)


def titan_response(vector: list[float], tokens: int = 7) -> dict[str, Any]:
    payload = json.dumps(
        {"embedding": vector, "embeddingsByType": {"float": vector}, "inputTextTokenCount": tokens}
    ).encode()
    return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}


def titan_request(text: str, dimension: int = 256) -> dict[str, Any]:
    body = json.dumps({"inputText": text, "dimensions": dimension, "normalize": True})
    return {"modelId": MODEL, "body": body, "contentType": "application/json", "accept": "application/json"}


def unit(dimension: int, hot: int) -> list[float]:
    v = [0.0] * dimension
    v[hot] = 1.0
    return v


def test_embedder_calls_titan_once_per_text_and_records_the_model() -> None:
    client, stub = runtime()
    embedder = BedrockEmbedder(LazyClient(lambda: client), dimension=256, workers=1)
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "bedrock/amazon.titan-embed-text-v2:0/256" and embedder.dimension == 256
    with stub:
        stub.add_response("invoke_model", titan_response(unit(256, 0)), titan_request("我住在杭州"))
        stub.add_response("invoke_model", titan_response([0.5] * 256), titan_request("I live in Glasgow"))
        vectors = embedder.embed_documents(["我住在杭州", "I live in Glasgow"])
        stub.assert_no_pending_responses()
    assert vectors.shape == (2, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert embedder.embed_documents([]).shape == (0, 256)


def test_embedder_batches_through_a_thread_pool() -> None:
    client, stub = runtime()
    embedder = BedrockEmbedder(LazyClient(lambda: client), dimension=256, workers=4)
    with stub:
        for _ in range(6):
            stub.add_response(
                "invoke_model",
                titan_response(unit(256, 3)),
                {
                    "modelId": MODEL,
                    "body": ANY,
                    "contentType": "application/json",
                    "accept": "application/json",
                },
            )
        vectors = embedder.embed_documents([f"fact {i}" for i in range(6)])
    assert vectors.shape == (6, 256) and np.allclose(vectors[:, 3], 1.0)


@pytest.mark.parametrize(
    ("stubbing", "code"),
    [
        ({"service_error_code": "ThrottlingException", "http_status_code": 429}, "ThrottlingException"),
        ({"service_error_code": "ModelTimeoutException", "http_status_code": 408}, "ModelTimeoutException"),
        ({"service_error_code": "AccessDeniedException", "http_status_code": 403}, "AccessDeniedException"),
    ],
)
def test_embedder_failures_raise_embedder_unavailable(stubbing: dict[str, Any], code: str) -> None:
    client, stub = runtime()
    embedder = BedrockEmbedder(LazyClient(lambda: client), dimension=256, workers=1)
    with stub:
        stub.add_client_error("invoke_model", **stubbing)
        with pytest.raises(EmbedderUnavailable) as caught:
            embedder.embed_query("hello")
    assert caught.value.details["code"] == code and caught.value.__cause__ is not None


def test_embedder_rejects_a_vector_of_the_wrong_shape() -> None:
    client, stub = runtime()
    embedder = BedrockEmbedder(LazyClient(lambda: client), dimension=512, workers=1)
    with stub:
        stub.add_response("invoke_model", titan_response(unit(256, 0)))
        with pytest.raises(EmbedderUnavailable, match="wrong shape"):
            embedder.embed_query("hello")


def test_embedder_settings_and_placeholder_calibration() -> None:
    with pytest.raises(ConfigurationError):
        BedrockEmbedder(dimension=300)
    calibration = BedrockEmbedder(dimension=1024).calibration
    assert calibration.model_id == "bedrock/amazon.titan-embed-text-v2:0/1024"
    assert (calibration.unrelated, calibration.paraphrase) == (
        PLACEHOLDER_CALIBRATION["unrelated"],
        PLACEHOLDER_CALIBRATION["paraphrase"],
    )
    assert BedrockEmbedder(dimension=256).embed_query("   ").tolist() == [0.0] * 256  # no call for empty text


# ------------------------------------------------------------------ Converse


def converse_response(text: str, stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": stop,
        "usage": {"inputTokens": 152, "outputTokens": 41, "totalTokens": 193},
        "metrics": {"latencyMs": 612},
    }


def llm() -> tuple[BedrockLLM, Stubber]:
    client, stub = runtime()
    return BedrockLLM(LazyClient(lambda: client), model="amazon.nova-lite-v1:0"), stub


def test_extract_sends_a_language_matched_prompt_and_validates_json() -> None:
    model, stub = llm()
    reply = (
        '```json\n{"facts": [{"content": "用户住在杭州西湖区", "key": "住在", "value": "杭州西湖区", "category": "identity"},'
        ' {"content": "用户喜欢潜水", "key": "爱好", "value": "潜水", "category": "preference"}]}\n```'
    )
    with stub:
        stub.add_response(
            "converse",
            converse_response(reply),
            {
                "modelId": "amazon.nova-lite-v1:0",
                "system": [{"text": ANY}],
                "messages": [
                    {
                        "role": "user",
                        "content": [{"text": "问题：我住在哪里？\n回答：你住在杭州西湖区，还喜欢潜水。"}],
                    }
                ],
                "inferenceConfig": {"maxTokens": 600, "temperature": 0.0},
            },
        )
        facts = model.extract("我住在哪里？", "你住在杭州西湖区，还喜欢潜水。", "zh")
    # only the fact anchored on the question survives
    assert facts == [LlmFact("用户住在杭州西湖区", key="住在", value="杭州西湖区", category="identity")]
    assert model.failures == 0 and model.calls == 1


def test_the_prompt_follows_the_language_of_the_turn() -> None:
    client, stub = runtime()
    model = BedrockLLM(LazyClient(lambda: client))
    seen: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse", lambda params, **_: seen.append(params)
    )
    with stub:
        stub.add_response("converse", converse_response('{"facts": []}'))
        stub.add_response("converse", converse_response('{"facts": []}'))
        assert model.extract("Where do I live?", "In Glasgow.", "en") == []
        assert model.extract("我住在哪里？", "杭州。", "zh") == []
    assert seen[0]["system"][0]["text"].startswith("You extract durable facts")
    assert seen[0]["messages"][0]["content"][0]["text"] == "Question: Where do I live?\nAnswer: In Glasgow."
    assert seen[1]["system"][0]["text"].startswith("你从一次对话中提取")
    assert model.failures == 0


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! Here are the facts: none.",
        '{"facts": [{"content": ""}]}',
        '{"facts": [{"content": "x", "category": "not-a-category"}]}',
        '{"facts": "many"}',
    ],
)
def test_malformed_model_output_falls_back_and_is_counted(reply: str) -> None:
    model, stub = llm()
    with stub:
        stub.add_response("converse", converse_response(reply))
        assert model.extract("Where do I live?", "In Glasgow.", "en") is None
    assert model.failures == 1 and model.failure_reasons["malformed_extraction"] == 1


def test_throttling_falls_back_and_is_counted() -> None:
    model, stub = llm()
    with stub:
        stub.add_client_error(
            "converse",
            service_error_code="ThrottlingException",
            service_message="Too many requests, please wait before trying again.",
            http_status_code=429,
        )
        stub.add_client_error(
            "converse", service_error_code="ServiceUnavailableException", http_status_code=503
        )
        assert model.classify("I like green tea") is None
        assert model.judge_conflict("I live in Paris", "I live in Lyon") is None
    assert model.failures == 2
    assert model.failure_reasons == {"ThrottlingException": 1, "ServiceUnavailableException": 1}


def test_classify_and_judge() -> None:
    model, stub = llm()
    with stub:
        stub.add_response("converse", converse_response("preference"))
        stub.add_response("converse", converse_response("Weather"))
        stub.add_response("converse", converse_response('{"conflict": true}'))
        stub.add_response("converse", converse_response('{"conflict": false}'))
        stub.add_response("converse", converse_response("maybe?"))
        stub.add_response("converse", converse_response('{"conflict": tr', stop="max_tokens"))
        assert model.classify("I like green tea") == "preference"
        assert model.classify("It rains") is None
        assert model.judge_conflict("I live in Paris", "I moved to Lyon") is True
        assert model.judge_conflict("I like tea", "I like coffee too") is False
        assert model.judge_conflict("a", "b") is None
        assert model.judge_conflict("a", "b") is None
    assert model.failure_reasons == {"unknown_category": 1, "malformed_verdict": 1, "truncated": 1}


def test_clients_use_adaptive_retries() -> None:
    from agentmem.adapters.aws.bedrock import bedrock_runtime_client

    client = bedrock_runtime_client(REGION)
    assert client.meta.config.retries["mode"] == "adaptive"


def test_summarise_sends_the_facts_in_the_sessions_language_and_falls_back_on_truncation() -> None:
    model, stub = llm()
    facts = ["我住在杭州。", "我养了一只猫。"]
    with stub:
        stub.add_response(
            "converse",
            converse_response("用户住在杭州，养了一只猫。"),
            {
                "modelId": "amazon.nova-lite-v1:0",
                "system": [{"text": ANY}],
                "messages": [{"role": "user", "content": [{"text": "- 我住在杭州。\n- 我养了一只猫。"}]}],
                "inferenceConfig": {"maxTokens": 200, "temperature": 0.0},
            },
        )
        stub.add_response("converse", converse_response("The user", stop="max_tokens"))
        assert model.summarise(facts, "zh") == "用户住在杭州，养了一只猫。"
        assert model.summarise(["I live in Leeds."], "en") is None
    assert model.summarise([], "en") is None  # nothing to summarise: no call
    assert model.calls == 2 and model.failure_reasons["truncated"] == 1
