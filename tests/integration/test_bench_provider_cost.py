"""The cost bench's measured provider counts (:mod:`agentmem_dev.bench.provider_cost`): per turn
and per context request, the LLM and embedding calls and the tokens the server reported, read from
the providers themselves while a few synthetic turns and context requests run against the local
server that speaks the OpenAI API. (The whole bench is not run here.)"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from agentmem.adapters.openai_compat import OpenAICompatEmbedder, Transport
from agentmem.domain.context import Mode
from agentmem.domain.similarity import Calibration
from agentmem.messages import TurnMessage
from agentmem_dev.bench.common import TimedEmbedder, local_container, synthetic_queries, synthetic_turns
from agentmem_dev.bench.provider_cost import ProviderMeter
from agentmem_dev.emulator.runner import LocalRunner
from support.fakes.fake_openai import fake_openai_server


def chat(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if '"facts"' in system:
        return json.dumps({"facts": []})
    if '"conflict"' in system:
        return '{"conflict": false}'
    return "general"


def test_the_meter_counts_what_the_server_saw_per_turn_and_per_context_request() -> None:
    with fake_openai_server(chat=chat) as server:
        inner = OpenAICompatEmbedder(Transport(server.url), model="fake-embed")
        inner.with_calibration(Calibration("openai-compatible/fake-embed", 0.1, 0.8, 0.05, 0.7))
        timed = TimedEmbedder(inner)
        sessions = synthetic_turns(6)
        turns = sum(len(s) for s in sessions)
        with local_container(
            timed, llm="openai-compatible", openai_base_url=server.url, openai_llm_model="fake-chat"
        ) as (container, clock):
            meter = ProviderMeter(container.llm, timed)
            runner = LocalRunner(container)
            for session in sessions:
                for turn in session:
                    clock.set(turn.at)
                    container.queue.send([TurnMessage.from_turn(turn)])
                runner.drain()
            chats_in_ingest = server.paths().count("/v1/chat/completions")
            embeds_in_ingest = server.paths().count("/v1/embeddings")
            per_turn = meter.phase(turns)
            scopes = sorted({t.scope for s in sessions for t in s}, key=lambda s: s.user_id)
            now = max(t.at for s in sessions for t in s) + timedelta(hours=1)
            clock.set(now)
            for number, query in enumerate(synthetic_queries(2, seed=23)):
                container.context.build(scopes[number % len(scopes)], query, mode=Mode.CHAT, now=now)
            per_context = meter.phase(2)
    llm, embedder = per_turn["llm"], per_turn["embedder"]
    assert (
        llm["provider"] == "openai-compatible/fake-chat"
        and embedder["provider"] == "openai-compatible/fake-embed"
    )
    assert chats_in_ingest >= turns  # one extraction per turn at least
    assert (
        llm["calls"] == round(chats_in_ingest / turns, 3)
        and llm["input_tokens"] > 0
        and llm["output_tokens"] > 0
    )
    assert embedder["calls"] == round(embeds_in_ingest / turns, 3) and embedder["input_tokens"] > 0
    assert per_context["llm"]["calls"] == 0  # the read path asks no model
    assert per_context["embedder"]["calls"] >= 1  # the query's embedding
