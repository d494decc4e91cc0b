"""The OpenAPI document is complete (issue 13): security schemes for both the local server and
the API Gateway authorizer, applied to every route but the open ones; an example on every request
body and main response, each valid against its model; the success status each route declares is
the one it answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentmem.api.app import OPEN, SECURITY, SECURITY_SCHEMES, openapi_json
from agentmem.wire import conflicts, history, models, operator, webhooks
from agentmem.wire.examples import EXAMPLES

DOC = json.loads(openapi_json())
OPERATIONS = [(m.upper(), p, op) for p, ops in DOC["paths"].items() for m, op in ops.items()]
MODEL_MODULES = (models, conflicts, history, operator, webhooks)
OPEN_ROUTES = {("GET", "/v1/health"), ("GET", "/v1/openapi.json")}


def test_the_local_and_the_aws_security_schemes_are_declared() -> None:
    declared = DOC["components"]["securitySchemes"]
    assert declared.keys() == SECURITY_SCHEMES.keys()
    assert declared["localBearer"] == {**declared["localBearer"], "type": "http", "scheme": "bearer"}
    assert declared["cognitoAuthorizer"]["bearerFormat"] == "JWT"
    assert {declared[n]["name"] for n in ("localScopeTenant", "localScopeUser")} == {
        "X-Tenant-Id",
        "X-User-Id",
    }
    assert DOC["security"] == SECURITY
    for requirement in SECURITY:  # every requirement names declared schemes only
        assert requirement.keys() <= declared.keys()


@pytest.mark.parametrize(("method", "path", "op"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_route_but_the_open_ones_needs_a_caller(method: str, path: str, op: dict[str, Any]) -> None:
    if (method, path) in OPEN_ROUTES:
        assert op["security"] == OPEN and "401" not in op["responses"]
    else:
        assert "security" not in op  # the document-wide requirement applies
        assert {"401", "403", "429"} <= op["responses"].keys()
    assert {"400", "413", "415", "422", "500"} <= op["responses"].keys()  # resolve()'s gates, anywhere
    for code, response in op["responses"].items():
        if (method, path, code) == ("POST", "/v1/mcp", "400"):  # a JSON-RPC error, or a gate's ErrorOut
            assert {"$ref": "#/components/schemas/ErrorOut"} in response["content"]["application/json"][
                "schema"
            ]["anyOf"]
        elif int(code) >= 400:
            assert response["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorOut"
            }


@pytest.mark.parametrize(("method", "path", "op"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_request_body_and_typed_answer_has_an_example(
    method: str, path: str, op: dict[str, Any]
) -> None:
    for ref in _refs(op):
        schema = DOC["components"]["schemas"][ref]
        assert schema.get("examples"), f"{ref} ({method} {path}) has no example"


def _refs(op: dict[str, Any]) -> list[str]:
    """The component schemas of the request body and of the success answer."""
    found: list[str] = []
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    for code, response in op["responses"].items():
        if int(code) < 300:
            body_or_answer = response.get("content", {}).get("application/json", {}).get("schema", {})
            for part in [body, body_or_answer]:
                for one in [part, *part.get("anyOf", [])]:
                    if "$ref" in one:
                        found.append(one["$ref"].rsplit("/", 1)[1])
    return found


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_is_valid_against_its_model(name: str) -> None:
    model: type[BaseModel] = next(getattr(m, name) for m in MODEL_MODULES if hasattr(m, name))
    assert EXAMPLES[name]
    for example in EXAMPLES[name]:
        model.model_validate(example)
    # and the document carries them as written
    assert DOC["components"]["schemas"][name]["examples"] == json.loads(json.dumps(EXAMPLES[name]))


def test_the_examples_come_in_english_and_chinese() -> None:
    text = json.dumps(EXAMPLES, ensure_ascii=False)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text)
    for name in ("TurnIn", "ContextIn", "RecallIn", "MemoryIn", "SessionStateIn"):
        rendered = [json.dumps(e, ensure_ascii=False) for e in EXAMPLES[name]]
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in r) for r in rendered), name
        assert any(r.isascii() or "—" in r for r in rendered), name


def _success(op: dict[str, Any]) -> int:
    return min(int(code) for code in op["responses"] if int(code) < 300)


def test_each_route_answers_the_success_status_it_declares(api: Any) -> None:
    declared = {(m, p): _success(op) for m, p, op in OPERATIONS if (m, p) != ("GET", "/v1/mcp")}
    status, created = api("POST", "/v1/memories", EXAMPLES["MemoryIn"][0])
    memory_id = created["memory"]["id"]
    calls: dict[tuple[str, str], tuple[str, str, Any]] = {
        ("POST", "/v1/memories"): ("POST", "/v1/memories", EXAMPLES["MemoryIn"][1]),
        ("GET", "/v1/memories"): ("GET", "/v1/memories", None),
        ("GET", "/v1/memories/{memory_id}"): ("GET", f"/v1/memories/{memory_id}", None),
        ("PATCH", "/v1/memories/{memory_id}"): ("PATCH", f"/v1/memories/{memory_id}", {"pinned": True}),
        ("POST", "/v1/turns"): ("POST", "/v1/turns", EXAMPLES["TurnsIn"][0]),
        ("POST", "/v1/context"): ("POST", "/v1/context", EXAMPLES["ContextIn"][1]),
        ("POST", "/v1/recall"): ("POST", "/v1/recall", EXAMPLES["RecallIn"][0]),
        ("PUT", "/v1/sessions/{session_id}/state"): (
            "PUT",
            "/v1/sessions/s-42/state",
            EXAMPLES["SessionStateIn"][0],
        ),
        ("GET", "/v1/sessions/{session_id}/state"): ("GET", "/v1/sessions/s-42/state", None),
        ("GET", "/v1/audit"): ("GET", "/v1/audit", None),
        ("GET", "/v1/health"): ("GET", "/v1/health", None),
        ("GET", "/v1/openapi.json"): ("GET", "/v1/openapi.json", None),
        ("POST", "/v1/mcp"): ("POST", "/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("DELETE", "/v1/memories/{memory_id}"): ("DELETE", f"/v1/memories/{memory_id}", None),
        ("DELETE", "/v1/users/{user_id}"): ("DELETE", "/v1/users/u1", None),
    }
    assert status == declared[("POST", "/v1/memories")]
    answered = {}
    for key, (method, path, body) in calls.items():
        if key in declared:  # routes other helpers add are covered by their own tests
            answered[key] = api(method, path, body)[0]
    assert answered == {key: declared[key] for key in answered}
    assert len(answered) >= 15


def test_the_mcp_endpoint_offers_no_event_stream(api: Any) -> None:
    """MCP Streamable HTTP clients open GET for server events; 405 tells them to POST only."""
    op = DOC["paths"]["/v1/mcp"]["get"]
    assert "405" in op["responses"] and not [c for c in op["responses"] if int(c) < 300]
    assert api("GET", "/v1/mcp") == (
        405,
        {
            "error": "method_not_allowed",
            "message": "POST JSON-RPC requests; no SSE stream is offered",
            "details": None,
        },
    )
