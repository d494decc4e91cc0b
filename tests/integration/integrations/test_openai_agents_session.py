"""The OpenAI Agents SDK session against a live ``agentmem serve``: a finished exchange becomes a
turn that memory learns from, and a new process over the same session starts from agentmem's
context (the session window and the memory) instead of nothing; pop and clear behave as the
SDK's protocol says."""

from __future__ import annotations

import asyncio
import time

import pytest

pytest.importorskip("agents")

from agents.memory.session import SessionABC

from agentmem_client import AsyncAgentMemClient
from agentmem_client.integrations.openai_agents import CONTEXT_MARK, AgentMemSession


def test_a_new_process_continues_from_the_window_and_the_memory(served: str) -> None:
    async def run() -> None:
        async with AsyncAgentMemClient(served, tenant_id="acme", user_id="wang") as client:
            first = AgentMemSession("chat-1", client)
            assert isinstance(first, SessionABC)
            await first.add_items(
                [{"role": "user", "content": "My name is Wang Fang and I live in Chengdu."}]
            )
            await first.add_items(
                [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Nice to meet you, Wang Fang."}],
                    }
                ]
            )
            assert [i.get("role") for i in await first.get_items(limit=2)][-2:] == ["user", "assistant"]

            later = AgentMemSession("chat-1", client)  # another process: nothing local
            deadline = time.monotonic() + 15
            items = await later.get_items()
            while "Chengdu" not in str(items) and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                items = await later.get_items()
            assert items and items[0]["role"] == "system" and CONTEXT_MARK in items[0]["content"]
            assert "Chengdu" in items[0]["content"]

            await later.add_items([{"role": "user", "content": "Where do I live?"}])
            popped = await later.pop_item()
            assert popped == {"role": "user", "content": "Where do I live?"}
            assert await later.pop_item() is None
            await first.clear_session()
            assert [i for i in await first.get_items() if i.get("role") != "system"] == []

    asyncio.run(run())
