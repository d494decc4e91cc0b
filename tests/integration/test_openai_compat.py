"""The OpenAI-compatible provider against a real local HTTP server that speaks the OpenAI API shape
(:mod:`support.fakes.fake_openai`), through the project's own provider code: chat with and without
JSON mode, embeddings in batches, 429 with ``Retry-After``, timeouts, an unreachable server. The
official ``openai`` SDK drives the same server first, so the fake cannot drift from the protocol.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import numpy as np
import openai
import pytest

from agentmem.adapters.openai_compat import (
    OpenAICompatEmbedder,
    OpenAICompatLLM,
    ProviderUnavailable,
    Transport,
)
from agentmem.adapters.openai_compat.transport import retry_after_seconds
from agentmem.errors import EmbedderUnavailable
from support.fakes.fake_openai import FakeOpenAI, fake_openai_server

FACTS = {
    "facts": [
        {"content": "The user drinks oolong tea", "key": "tea", "value": "oolong", "category": "preference"}
    ]
}


def llm(server: FakeOpenAI, **kw: Any) -> OpenAICompatLLM:
    transport_kw = {k: kw.pop(k) for k in ("timeout_s", "retry_after_max_s", "sleep", "api_key") if k in kw}
    return OpenAICompatLLM(Transport(server.url, **transport_kw), model="fake-chat", **kw)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ----------------------------------------------------------------- the fake is the protocol


def test_the_official_sdk_reads_the_fakes_chat_answers() -> None:
    with fake_openai_server(chat=lambda body: json.dumps(FACTS), api_key="sk-test") as server:
        client = openai.OpenAI(base_url=server.url, api_key="sk-test", max_retries=0)
        plain = client.chat.completions.create(
            model="fake-chat", messages=[{"role": "user", "content": "hello"}], temperature=0
        )
        structured = client.chat.completions.create(
            model="fake-chat",
            messages=[{"role": "system", "content": "json"}, {"role": "user", "content": "你好"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "agentmem_extract", "schema": {"type": "object"}, "strict": True},
            },
        )
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=server.url, api_key="wrong", max_retries=0).models.list()
        with pytest.raises(openai.BadRequestError) as bad:
            client.chat.completions.create(model="fake-chat", messages=[])
    assert plain.object == "chat.completion" and plain.choices[0].finish_reason == "stop"
    assert json.loads(structured.choices[0].message.content or "") == FACTS
    assert structured.usage is not None and structured.usage.prompt_tokens > 0
    assert bad.value.status_code == 400
    assert server.requests[1].body["response_format"]["type"] == "json_schema"


def test_the_official_sdk_reads_the_fakes_embeddings_in_both_encodings() -> None:
    with fake_openai_server() as server:
        client = openai.OpenAI(base_url=server.url, api_key="k", max_retries=0)
        texts = ["I drink oolong tea", "我喜欢喝乌龙茶", "the cat sat"]
        by_default = client.embeddings.create(model="fake-embed", input=texts)  # the SDK asks for base64
        as_floats = client.embeddings.create(
            model="fake-embed", input=texts, encoding_format="float", dimensions=32
        )
    assert server.requests[0].body.get("encoding_format") == "base64"
    assert [d.index for d in by_default.data] == [0, 1, 2]
    expected = np.vstack([server.vector(t, 64) for t in texts])
    np.testing.assert_allclose(np.asarray([d.embedding for d in by_default.data]), expected, atol=1e-6)
    assert len(as_floats.data[0].embedding) == 32
    assert by_default.usage.prompt_tokens > 0


def test_the_official_sdk_sees_the_fakes_429_with_retry_after() -> None:
    with fake_openai_server(failures=[(429, {"Retry-After": "7"})]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="fake-chat", messages=[{"role": "user", "content": "x"}])
    assert limited.value.response.headers["retry-after"] == "7"


# ----------------------------------------------------------------- chat through the provider


def test_extraction_with_a_json_schema_reply_is_read_and_anchored_on_the_question() -> None:
    reply = {
        "facts": [
            {
                "content": "The user drinks oolong tea",
                "key": "tea",
                "value": "oolong",
                "category": "preference",
            },
            {"content": "The sky is blue", "key": "sky", "value": None, "category": "general"},
        ]
    }
    with fake_openai_server(chat=lambda body: json.dumps(reply)) as server:
        model = llm(server)
        facts = model.extract("What tea do I like?", "You like oolong tea.", "en")
    assert facts is not None and [f.content for f in facts] == ["The user drinks oolong tea"]
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["temperature"] == 0 and body["max_tokens"] == 600
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert model.usage.calls == 1 and model.usage.input_tokens > 0 and model.usage.output_tokens > 0


def test_chinese_turns_are_asked_in_chinese() -> None:
    reply = {"facts": [{"content": "用户喜欢乌龙茶", "key": "茶", "value": "乌龙", "category": "preference"}]}
    with fake_openai_server(chat=lambda body: json.dumps(reply, ensure_ascii=False)) as server:
        facts = llm(server).extract("我喜欢什么茶？", "你喜欢乌龙茶。", "zh")
    assert facts is not None and facts[0].content == "用户喜欢乌龙茶"
    assert "只输出 JSON" in server.requests[0].body["messages"][0]["content"]


def test_a_server_without_json_schema_steps_down_to_json_mode_and_remembers() -> None:
    with fake_openai_server(chat=lambda body: '{"conflict": true}', json_schema=False) as server:
        model = llm(server)
        assert model.judge_conflict("I live in Paris", "I moved to Lyon") is True
        assert model.judge_conflict("I live in Paris", "I moved to Rome") is True
    kinds = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert model.json_mode == "json_object"


def test_a_server_without_any_json_mode_is_asked_plainly_and_read_strictly() -> None:
    replies = iter(['Sure! Here it is:\n```json\n{"conflict": false}\n```'])
    with fake_openai_server(chat=lambda body: next(replies), json_schema=False, json_object=False) as server:
        model = llm(server)
        assert model.judge_conflict("a", "b") is False
    assert [r.body.get("response_format", {}).get("type") for r in server.requests] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert model.json_mode == "off"


def test_a_reply_that_does_not_read_is_asked_again_once_then_given_up() -> None:
    replies = iter(["I think it does not conflict", '{"conflict": false}'])
    with fake_openai_server(chat=lambda body: next(replies)) as server:
        model = llm(server, json_mode="off")
        assert model.judge_conflict("a", "b") is False
        retry = server.requests[1].body["messages"]
        assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
        assert "malformed_verdict" in retry[-1]["content"]
    with fake_openai_server(chat=lambda body: "not json") as server:
        model = llm(server, json_mode="off")
        assert model.judge_conflict("a", "b") is None
        assert len(server.requests) == 2  # bounded: one re-ask
    assert model.usage.failure_reasons == {"malformed_verdict": 1}


def test_an_invalid_fact_makes_the_whole_extraction_unusable() -> None:
    bad = {"facts": [{"content": "", "key": "tea", "value": None, "category": "preference"}]}
    with fake_openai_server(chat=lambda body: json.dumps(bad)) as server:
        model = llm(server, parse_retries=0)
        assert model.extract("What tea?", "Oolong tea.", "en") is None
    assert model.usage.failure_reasons == {"malformed_extraction": 1}


def test_a_truncated_or_empty_reply_is_no_answer() -> None:
    with fake_openai_server(chat=lambda body: '{"facts": [', finish_reason="length") as server:
        model = llm(server)
        assert model.extract("What tea?", "Oolong.", "en") is None
        assert len(server.requests) == 1
    with fake_openai_server(chat=lambda body: "  ") as server:
        model2 = llm(server)
        assert model2.summarise(["The user likes tea."]) is None
    assert model.usage.failure_reasons == {"truncated": 1} and model2.usage.failure_reasons == {"empty": 1}


def test_classify_and_summarise_use_plain_replies() -> None:
    with fake_openai_server(chat=lambda body: "Preference.") as server:
        assert llm(server).classify("I like tea") == "preference"
    assert "response_format" not in server.requests[0].body
    with fake_openai_server(chat=lambda body: " The user likes tea. ") as server:
        assert llm(server).summarise(["likes tea"], "en") == "The user likes tea."


# ----------------------------------------------------------------- failures fall back


def test_a_429_with_a_short_retry_after_is_waited_for_once() -> None:
    waits: list[float] = []
    with fake_openai_server(chat=lambda body: "preference", failures=[(429, {"Retry-After": "1"})]) as server:
        model = llm(server, sleep=waits.append)
        assert model.classify("I like tea") == "preference"
    assert waits == [1.0] and len(server.requests) == 2


def test_a_429_with_a_long_retry_after_falls_back_at_once() -> None:
    waits: list[float] = []
    with fake_openai_server(
        chat=lambda body: "preference", failures=[(429, {"Retry-After": "30"})]
    ) as server:
        model = llm(server, sleep=waits.append)
        assert model.classify("I like tea") is None
    assert waits == [] and len(server.requests) == 1
    assert model.usage.failure_reasons == {"rate_limited": 1}


def test_a_429_twice_is_not_retried_forever() -> None:
    waits: list[float] = []
    failures = [(429, {"Retry-After": "0"}), (429, {"Retry-After": "0"}), (429, {"Retry-After": "0"})]
    with fake_openai_server(failures=failures) as server:
        assert llm(server, sleep=waits.append).classify("x") is None
    assert len(server.requests) == 2


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_a_slow_server_times_out_and_falls_back() -> None:
    with fake_openai_server(chat=lambda body: "preference", delay_s=1.5) as server:
        model = llm(server, timeout_s=0.3)
        started = time.monotonic()
        assert model.classify("I like tea") is None
        elapsed = time.monotonic() - started
    assert elapsed < 1.2
    assert model.usage.failure_reasons == {"timeout": 1}


def test_an_unreachable_server_falls_back() -> None:
    model = OpenAICompatLLM(Transport(closed_port_url(), timeout_s=1), model="m")
    assert model.extract("What tea?", "Oolong.", "en") is None
    assert model.usage.failure_reasons == {"unreachable": 1}
    assert model.usage.recent_failure(60) == "unreachable"


def test_a_server_error_is_retried_only_behind_a_gateway() -> None:
    with fake_openai_server(chat=lambda body: "preference", failures=[(502, {})]) as server:
        assert llm(server).classify("x") == "preference"
    with fake_openai_server(chat=lambda body: "preference", failures=[(500, {})]) as server:
        model = llm(server)
        assert model.classify("x") is None
    assert model.usage.failure_reasons == {"http_500": 1}


def test_the_key_goes_in_the_header_the_server_asks_for() -> None:
    with fake_openai_server(chat=lambda body: "preference", api_key="sk-1") as server:
        assert llm(server, api_key=lambda: "sk-1").classify("x") == "preference"
        azure = OpenAICompatLLM(Transport(server.url, api_key=lambda: "sk-1", auth="api-key"), model="m")
        assert azure.classify("x") == "preference"
        assert llm(server, api_key=lambda: "wrong").classify("x") is None
    assert server.requests[0].headers["authorization"] == "Bearer sk-1"
    assert (
        server.requests[1].headers["api-key"] == "sk-1" and "authorization" not in server.requests[1].headers
    )


# ----------------------------------------------------------------- embeddings


def test_embeddings_go_in_batches_and_come_back_in_order() -> None:
    texts = ["I drink oolong tea", "我喜欢喝乌龙茶", "", "the cat sat", "猫坐着"]
    with fake_openai_server(shuffle=True) as server:
        embedder = OpenAICompatEmbedder(Transport(server.url), model="fake-embed", batch=2)
        vectors = embedder.embed_documents(texts)
    assert [len(r.body["input"]) for r in server.requests] == [2, 2]  # the blank text is not sent
    assert embedder.dimension == 64 and vectors.shape == (5, 64) and vectors.dtype == np.float32
    for i in (0, 1, 3, 4):
        np.testing.assert_allclose(vectors[i], server.vector(texts[i], 64), atol=1e-6)
    assert not vectors[2].any()
    assert embedder.model_id == "openai-compatible/fake-embed"
    assert embedder.usage.calls == 2 and embedder.usage.input_tokens > 0


def test_the_configured_dimension_is_asked_for_and_checked() -> None:
    with fake_openai_server() as server:
        embedder = OpenAICompatEmbedder(Transport(server.url), model="fake-embed", dimension=16)
        assert embedder.embed_query("tea").shape == (16,)
        assert server.requests[0].body["dimensions"] == 16
        assert embedder.model_id == "openai-compatible/fake-embed/16"
    with fake_openai_server(dimensions_param=False) as server, pytest.raises(EmbedderUnavailable):
        OpenAICompatEmbedder(Transport(server.url), model="fake-embed", dimension=16).embed_query("tea")


def test_a_change_of_dimension_midway_is_refused() -> None:
    with fake_openai_server() as server:
        embedder = OpenAICompatEmbedder(Transport(server.url), model="fake-embed")
        embedder.embed_query("tea")
        server.native_dimension = 32
        with pytest.raises(EmbedderUnavailable, match="wrong shape"):
            embedder.embed_query("coffee")


def test_embedding_failures_are_embedder_unavailable() -> None:
    with fake_openai_server(failures=[(429, {"Retry-After": "60"})]) as server:
        embedder = OpenAICompatEmbedder(Transport(server.url), model="fake-embed")
        with pytest.raises(EmbedderUnavailable) as limited:
            embedder.embed_documents(["tea"])
    assert limited.value.details["reason"] == "rate_limited"
    with fake_openai_server(delay_s=1.5) as server, pytest.raises(EmbedderUnavailable) as slow:
        OpenAICompatEmbedder(Transport(server.url, timeout_s=0.3), model="fake-embed").embed_documents(["x"])
    assert slow.value.details["reason"] == "timeout"
    with pytest.raises(EmbedderUnavailable) as down:
        OpenAICompatEmbedder(Transport(closed_port_url()), model="fake-embed").embed_query("x")
    assert down.value.details["reason"] == "unreachable"


def test_a_malformed_body_is_a_provider_failure() -> None:
    with fake_openai_server() as server:
        transport = Transport(server.url)
        with pytest.raises(ProviderUnavailable) as missing:
            transport.post("nothing-here", {})
    assert missing.value.status == 404
