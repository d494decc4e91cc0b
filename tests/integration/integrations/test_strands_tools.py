"""The Strands memory tools against a live ``agentmem serve``: they are Strands tools (names and
specs the agent loop reads), remember stores, recall finds it (with its id), forget deletes it,
and a refusal comes back as a sentence."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("strands")

from agentmem_client import AgentMemClient
from agentmem_client.integrations.strands import memory_tools


def test_remember_recall_forget(served: str) -> None:
    with AgentMemClient(served, tenant_id="acme", user_id="zhao") as client:
        recall, remember, forget = memory_tools(client)
        assert [t.tool_name for t in (recall, remember, forget)] == ["recall", "remember", "forget"]
        assert "query" in recall.tool_spec["inputSchema"]["json"]["properties"]

        stored = remember(content="我对花生过敏。", category="fact")
        assert stored.startswith("Remembered [")
        memory_id = stored.split("[", 1)[1].split("]", 1)[0]
        deadline = time.monotonic() + 15
        found = recall(query="花生过敏")
        while memory_id not in found and time.monotonic() < deadline:
            time.sleep(0.2)
            found = recall(query="花生过敏")
        assert f"[{memory_id}] 我对花生过敏" in found

        assert forget(memory_id=memory_id) == "Forgotten."
        assert forget(memory_id=memory_id).startswith("Nothing to forget")
        assert forget(memory_id="no-such-id").startswith("Nothing to forget")
        assert memory_id not in recall(query="花生过敏")
        assert remember(content="x", category="not-a-category").startswith("not stored:")
