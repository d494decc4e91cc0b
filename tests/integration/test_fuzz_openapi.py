"""Fuzz every route of the OpenAPI document with schemathesis: whatever a client sends, the
answer is never a 5xx and never a stack trace (issue 4: bad input gets a 4xx with a reason), and
it is the answer the document promises (issue 13): a status code the route declares, the declared
content type, a body that validates against the response schema of that status.

The api λ is driven through a tiny WSGI shim that turns each request into the same API Gateway
proxy event the local server builds, with a fixed authorizer context so the fuzzer reaches the
code behind authentication."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from agentmem.adapters.embedders import HashEmbedder
from agentmem.api.app import openapi_json, resolve
from agentmem.bootstrap import Container, bootstrap
from agentmem.settings import load_settings
from agentmem_dev.emulator import events
from agentmem_dev.emulator.lambdas import LambdaContext

AUTH = {"tenant_id": "t-fuzz", "user_id": "u-fuzz", "permissions": "memory:read,memory:write"}
_CONTAINER: list[Container] = []  # the module fixture's, for the WSGI app schemathesis calls


def wsgi_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    try:
        body = raw.decode("utf-8") if raw else None
    except UnicodeDecodeError:
        start_response("400 Bad Request", [("Content-Type", "application/json")])
        return [b'{"error":"invalid_request","message":"not UTF-8"}']
    event = events.api_gateway_event(
        environ["REQUEST_METHOD"],
        environ.get("PATH_INFO") or "/",
        query=parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True),
        headers=headers,
        body=body,
        authorizer=AUTH,
    )
    result = resolve(event, LambdaContext(function_name="api"), _CONTAINER[0])
    status = int(result["statusCode"])
    response_headers = [(k, v) for k, v in (result.get("headers") or {}).items()]
    for key, values in (result.get("multiValueHeaders") or {}).items():
        response_headers.extend((key, v) for v in values)
    start_response(f"{status} X", response_headers)
    return [(result.get("body") or "").encode("utf-8")]


schema = schemathesis.openapi.from_dict(json.loads(openapi_json()))
schema.app = wsgi_app  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def fuzz_container(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    data: Path = tmp_path_factory.mktemp("fuzz")
    _CONTAINER.append(
        bootstrap(
            load_settings(data_dir=data, embedder="hash", queue_capacity=100_000), embedder=HashEmbedder()
        )
    )
    yield
    _CONTAINER.clear()


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_every_answer_as_documented(case: Any, fuzz_container: None) -> None:
    response = case.call(app=wsgi_app)
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        payload = response.json()
        if isinstance(payload.get("error"), dict):  # JSON-RPC error envelope (/v1/mcp)
            assert payload["jsonrpc"] == "2.0" and payload["error"]["message"], payload
        else:
            assert payload.get("error") and payload.get("message"), payload
        assert "Traceback (most recent call last)" not in response.text


def _with_lone_surrogate(body: Any, pick: random.Random) -> tuple[Any, bool]:
    """``body`` with one of its strings (a key or a value, chosen by ``pick``) carrying a lone
    surrogate; False when the body holds no string."""
    paths: list[tuple[Any, Any, bool]] = []  # (container, key or index, is the key itself)
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                paths.append((item, key, True))
                if isinstance(value, str):
                    paths.append((item, key, False))
                stack.append(value)
        elif isinstance(item, list):
            for index, value in enumerate(item):
                if isinstance(value, str):
                    paths.append((item, index, False))
                stack.append(value)
    if not paths:
        return body, False
    container, key, is_key = pick.choice(paths)
    bad = pick.choice(["\ud800", "\udfff", "x\udc00y", "\ud83d"])  # lone high or low halves
    if is_key:
        container[f"{key}{bad}"] = container.pop(key)
    else:
        container[key] = f"{container[key]}{bad}"
    return body, True


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_invalid_unicode_in_any_field_is_refused_never_a_server_error(
    case: Any, fuzz_container: None
) -> None:
    """The schema's bodies with a lone surrogate in one key or value (issue 37): refused at the
    edge with a 4xx — a JSON-RPC error object on ``/v1/mcp`` — never a 5xx."""
    if not isinstance(case.body, dict | list):
        return
    body, changed = _with_lone_surrogate(copy.deepcopy(case.body), random.Random(repr(case.body)))
    if not changed:
        return
    event = events.api_gateway_event(  # the body as a client's JSON encoder writes it: \\ud800
        case.method.upper(),
        case.formatted_path,
        query={k: v if isinstance(v, list) else [str(v)] for k, v in (case.query or {}).items()},
        headers={"Content-Type": "application/json"},
        body=json.dumps(body),
        authorizer=AUTH,
    )
    result = resolve(event, LambdaContext(function_name="api"), _CONTAINER[0])
    status, payload = int(result["statusCode"]), json.loads(result["body"])
    assert 400 <= status < 500, (status, payload)
    if case.path == "/v1/mcp":
        assert payload["jsonrpc"] == "2.0" and payload["error"]["code"] == -32700, payload
    elif status == 400:
        assert payload["error"] and payload["message"], payload
