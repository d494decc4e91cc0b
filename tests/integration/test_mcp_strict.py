"""MCP inputs are never silently ignored (issue 13): an argument a tool does not declare, or a
JSON-RPC id that is neither a string, a number nor null, is refused with a JSON-RPC error naming
it; a batch of notifications only is answered 202 with an empty body (and no content type)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentmem.services.mcp import INVALID_PARAMS, INVALID_REQUEST, PROTOCOL_VERSION, TOOLS
from agentmem_dev.emulator import events, lambdas


def _call(api: Any, payload: Any) -> tuple[int, Any, dict[str, str]]:
    event = events.api_gateway_event(
        "POST",
        "/v1/mcp",
        body=json.dumps(payload, ensure_ascii=False),
        authorizer=api.auth,
        headers={"Content-Type": "application/json"},
    )
    result = lambdas.invoke("api", event, api.container)
    body = result.get("body") or ""
    return result["statusCode"], json.loads(body) if body else None, result.get("headers") or {}


def _tool(name: str, arguments: dict[str, Any], rpc_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rpc_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


@pytest.mark.parametrize(
    ("name", "arguments", "unknown"),
    [
        ("memory_write", {"content": "I like tea", "tags": ["drinks"]}, "tags"),
        ("memory_write", {"content": "我喜欢喝茶", "标签": ["饮品"]}, "标签"),
        ("memory_search", {"query": "tea", "k": 3, "category": "preference"}, "category"),
        ("memory_search", {"query": "茶", "过滤": "饮品"}, "过滤"),
        ("memory_read", {"id": "01J", "version": 2}, "version"),
        ("memory_delete", {"id": "01J", "hard": True}, "hard"),
    ],
)
def test_an_undeclared_tool_argument_is_refused_naming_it(
    api: Any, name: str, arguments: dict[str, Any], unknown: str
) -> None:
    status, body, _ = _call(api, _tool(name, arguments))
    assert status == 200
    assert body["error"]["code"] == INVALID_PARAMS and unknown in body["error"]["message"]
    assert api("GET", "/v1/memories")[1]["memories"] == []  # nothing written


def test_every_declared_argument_is_accepted(api: Any) -> None:
    status, body, _ = _call(
        api, _tool("memory_write", {"content": "我喜欢喝乌龙茶", "category": "preference", "importance": 0.8})
    )
    assert status == 200 and body["result"]["structuredContent"]["written"] is True, body
    status, body, _ = _call(api, _tool("memory_search", {"query": "乌龙茶", "k": 3}))
    assert body["result"]["structuredContent"]["memories"], body
    declared = {t["name"]: set(t["inputSchema"]["properties"]) for t in TOOLS}
    assert declared["memory_write"] == {"content", "category", "importance"}


@pytest.mark.parametrize("rpc_id", [{}, [], {"a": 1}, True, False])
def test_an_id_that_is_not_a_string_number_or_null_is_an_invalid_request(api: Any, rpc_id: Any) -> None:
    status, body, _ = _call(api, {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/list"})
    assert status == 200
    assert body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": body["error"]["message"]},
    }
    assert "id" in body["error"]["message"]


@pytest.mark.parametrize("rpc_id", [{}, [1], True])
def test_a_bad_id_is_never_echoed_even_in_an_invalid_request(api: Any, rpc_id: Any) -> None:
    status, body, _ = _call(api, [{"jsonrpc": "1.0", "id": rpc_id, "method": 5}, {"id": rpc_id}])
    assert status == 200
    assert [reply["id"] for reply in body] == [None, None]
    assert {reply["error"]["code"] for reply in body} == {INVALID_REQUEST}


@pytest.mark.parametrize("rpc_id", [7, "请求-1", None, 2.5])
def test_a_valid_id_is_echoed(api: Any, rpc_id: Any) -> None:
    status, body, _ = _call(api, {"jsonrpc": "2.0", "id": rpc_id, "method": "initialize"})
    assert status == 200 and body["id"] == rpc_id
    assert body["result"]["protocolVersion"] == PROTOCOL_VERSION


def test_notifications_only_are_answered_202_without_a_body_or_content_type(api: Any) -> None:
    status, body, headers = _call(api, [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert status == 202 and body is None
    assert "content-type" not in {k.lower() for k in headers}
