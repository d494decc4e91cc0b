"""The official MCP Python client (``mcp`` on PyPI) against ``agentmem serve``'s ``/v1/mcp``, as
docs/mcp.md configures clients: Streamable HTTP, the scope in headers. It initializes, lists the
four memory tools, writes a memory, finds it by search, reads and deletes it."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HEADERS = {"X-Tenant-Id": "acme", "X-User-Id": "mcp-user"}


def _result(answer: Any) -> dict[str, Any]:
    structured = getattr(answer, "structured_content", None) or getattr(answer, "structuredContent", None)
    if structured is not None:  # the field's name differs between mcp 1.x and 2.x
        return dict(structured)
    return dict(json.loads(answer.content[0].text))


def test_the_official_client_uses_the_memory_tools(served: str) -> None:
    async def run() -> None:
        async with (
            create_mcp_http_client(headers=HEADERS) as http,
            streamable_http_client(f"{served}/v1/mcp", http_client=http, terminate_on_close=False) as (
                read,
                write,
                *_,
            ),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == {"memory_write", "memory_read", "memory_search", "memory_delete"}
            written = _result(
                await session.call_tool("memory_write", {"content": "我对花生过敏。", "category": "identity"})
            )
            assert written["written"] is True
            memory_id = written["memory"]["id"]
            deadline = time.monotonic() + 15
            found: list[Any] = []
            while not found and time.monotonic() < deadline:
                hits = _result(await session.call_tool("memory_search", {"query": "花生"}))["memories"]
                found = [m for m in hits if m["id"] == memory_id]
                await asyncio.sleep(0.2)
            assert found
            assert (
                _result(await session.call_tool("memory_read", {"id": memory_id}))["memory"]["id"]
                == memory_id
            )
            assert _result(await session.call_tool("memory_delete", {"id": memory_id})) == {"deleted": 1}
            refused = await session.call_tool("memory_read", {"id": "no-such-id"})
            assert getattr(refused, "is_error", None) or getattr(refused, "isError", None)

    asyncio.run(run())
