"""Invalid Unicode and wrong JSON types at the edge (issue 37): a lone surrogate in any field of
any route is refused before a route runs (400; a JSON-RPC parse error on ``/v1/mcp``), and a
tool name that is not a string is a JSON-RPC invalid-params error — never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest

LONE = '"\\ud800"'  # how a client's JSON encoder writes a lone surrogate
LOW = '"x\\udc00"'


def bad(template: str) -> str:
    """``template`` with ``@LONE@`` / ``@LOW@`` replaced by the lone surrogates above."""
    return template.replace("@LONE@", LONE).replace("@LOW@", LOW)


@pytest.mark.parametrize(
    ("method", "path", "raw"),
    [
        ("PUT", "/v1/sessions/s1/state", '{"plan": {"params": {"city": @LONE@}}}'),
        ("PUT", "/v1/sessions/s1/state", '{"plan": {"params": {@LOW@: "x"}}}'),
        (
            "PUT",
            "/v1/sessions/s1/state",
            '{"tool_state": {"recent_calls": [{"tool": "a", "status": @LONE@}]}}',
        ),
        ("POST", "/v1/memories", '{"content": "I like tea", "tags": [@LONE@]}'),
        ("POST", "/v1/memories", '{"content": @LOW@}'),
        ("PATCH", "/v1/memories/m1", '{"tags": [@LONE@]}'),
        ("POST", "/v1/import", '{"memories": [{"content": "x", "tags": [@LONE@]}]}'),
        ("POST", "/v1/turns", '{"session_id": "s", "message_id": "m", "user": "hi", "speaker": @LONE@}'),
        ("POST", "/v1/context", '{"query": @LOW@}'),
    ],
)
def test_a_lone_surrogate_in_a_rest_field_is_a_400(api: Any, method: str, path: str, raw: str) -> None:
    status, body = api(method, path, raw=bad(raw))
    assert status == 400, body
    assert body["error"] == "invalid_request" and "Unicode" in body["message"]


def _rpc(api: Any, raw: str) -> tuple[int, Any]:
    return api("POST", "/v1/mcp", raw=raw)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "raw",
    [
        '{"jsonrpc": "2.0", "id": @LONE@, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
        ' "params": {"name": "memory_write", "arguments": {"content": @LONE@}}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
        ' "params": {"name": "memory_search", "arguments": {"query": @LOW@}}}',
        '[{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": @LONE@}}]',
    ],
)
def test_a_lone_surrogate_on_mcp_is_a_json_rpc_parse_error(api: Any, raw: str) -> None:
    status, body = _rpc(api, bad(raw))
    assert status == 400
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32700


def test_bounded_input_refusals_on_mcp_are_json_rpc_too(api: Any) -> None:
    status, body = _rpc(api, '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}')
    assert status == 400 and body["error"]["code"] == -32700


@pytest.mark.parametrize("name", [5, ["memory_write"], {"tool": "memory_write"}, None, True])
def test_a_tool_name_that_is_not_a_string_is_invalid_params(api: Any, name: Any) -> None:
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": {}}}
    status, body = _rpc(api, json.dumps(call))
    assert status == 200
    assert body["id"] == 7 and body["error"]["code"] == -32602 and "name" in body["error"]["message"]


def test_surrogate_pairs_are_text_and_pass(api: Any) -> None:
    status, body = api("POST", "/v1/memories", raw='{"content": "I love \\ud83c\\udf75 tea"}')
    assert status == 201 and body["memory"]["content"] == "I love 🍵 tea"
