"""The HTTP API as a Powertools ``APIGatewayRestResolver``: the same routes API Gateway serves
and the local server drives (it turns each request into an API Gateway proxy event).

Who is calling comes only from ``requestContext.authorizer`` (:mod:`agentmem.api.auth`); the
routes live in :mod:`agentmem.api.routes`, one router per resource; errors become answers in
:mod:`agentmem.api.errors`. :func:`resolve` is the entry point: it gates size, content type,
JSON shape (depth, number literals, NaN: :func:`agentmem.api.request.check_json_body`) and query
parameters the route does not declare before the resolver — each a 4xx with a reason — and runs
the request against the container it is given. The routers are defined at import; the resolver
that includes them is built on its first use (:func:`resolver`), as the container is.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.api_gateway import APIGatewayRestResolver, Response, Route, Router
from aws_lambda_powertools.shared.json_encoder import Encoder

from agentmem import __version__
from agentmem.api import errors
from agentmem.api.openapi import responses
from agentmem.api.request import BodyRefused, RequestContext, check_json_body, unknown_query_parameters
from agentmem.api.routes import (
    audit,
    conflicts,
    history,
    mcp,
    memories,
    operator,
    read,
    sessions,
    turns,
    ui,
    webhooks,
)
from agentmem.messages import MAX_BODY_BYTES
from agentmem.wire.models import BacklogOut, ErrorOut, HealthOut

if TYPE_CHECKING:  # importing the API imports no service (nor numpy): each request brings its container
    from agentmem.bootstrap import Container

# How a caller authenticates. Locally (``agentmem serve``, agentmem_dev.emulator.server): a bearer
# token (AGENTMEM_API_TOKEN / AGENTMEM_OPERATOR_TOKEN), or without one the scope headers, accepted
# from loopback clients only. In AWS: the Cognito ID token the API Gateway TOKEN authorizer
# verifies (infra_cdk/agentmem_infra/api.py: identity source the Authorization header).
SECURITY_SCHEMES: dict[str, Any] = {
    "localBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "agentmem serve with AGENTMEM_API_TOKEN (or AGENTMEM_OPERATOR_TOKEN, which"
        " adds memory:policy): Authorization: Bearer <token>; AGENTMEM_TOKEN_TENANTS may map it to a"
        " tenant. Send X-Tenant-Id / X-User-Id along to name the scope.",
    },
    "localScopeTenant": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Tenant-Id",
        "description": "agentmem serve without a token: the caller's tenant, from loopback only.",
    },
    "localScopeUser": {
        "type": "apiKey",
        "in": "header",
        "name": "X-User-Id",
        "description": "agentmem serve without a token: the caller's user, from loopback only.",
    },
    "cognitoAuthorizer": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "AWS: a Cognito user pool ID token (Authorization: Bearer <ID token>), verified"
        " by the API Gateway TOKEN authorizer; tenant_id, user_id and permissions come from its claims"
        " (custom:tenant_id, sub, custom:permissions). Behind API Gateway every /v1 path needs it,"
        " /v1/health and /v1/openapi.json included.",
        "x-amazon-apigateway-authtype": "custom",
    },
}
# Any one of these (the two scope headers together) authenticates a route that needs a caller.
SECURITY: list[dict[str, list[str]]] = [
    {"localBearer": []},
    {"localScopeTenant": [], "localScopeUser": []},
    {"cognitoAuthorizer": []},
]
OPEN: list[dict[str, list[str]]] = [
    {}
]  # the routes a local caller reaches without credentials (health, this document)

meta = Router()
_req = RequestContext(meta)


@meta.get(
    "/v1/health",
    summary="Liveness and readiness: ok, or degraded with the reasons; the backend, embedder, backlogs",
    responses=responses(200, HealthOut, "The service is up (status says whether it is degraded)", auth=False),
    security=OPEN,
)
def health() -> HealthOut:
    c = _req.container()
    report = c.health.report(c.clock.now())
    return HealthOut(
        status="degraded" if report.reasons else "ok",
        backend=c.settings.backend,
        embedder=c.embedder.model_id,
        reasons=list(report.reasons),
        backlogs=[
            BacklogOut(name=b.name, waiting=b.waiting, oldest_age_s=b.oldest_age_s) for b in report.backlogs
        ],
    )


@meta.get(
    "/v1/openapi.json",
    summary="This API's OpenAPI document",
    responses={**responses(200, None, "OpenAPI 3 document", auth=False)},
    security=OPEN,
)
def openapi() -> Response[Any]:
    return Response(status_code=200, content_type="application/json", body=openapi_json())


ROUTERS: tuple[Router, ...] = (
    turns.router,
    read.router,
    memories.router,
    history.router,  # a memory's supersede chain
    conflicts.router,  # pending conflicts with permanent/pinned memories (docs/design.md)
    sessions.router,
    mcp.router,
    audit.router,
    operator.router,  # turn status, dead letters, export / import
    webhooks.router,  # webhooks and their dead-lettered deliveries (docs/events.md)
    meta,
    ui.router,  # the inspector's static files (not in the OpenAPI document)
)
_built: list[APIGatewayRestResolver] = []
_building = threading.Lock()


def resolver() -> APIGatewayRestResolver:
    """The Powertools resolver with every router included, built on the first call (the first
    request, or the OpenAPI document) and kept for the process. Built at import it cost the cold
    start its validation machinery (the resolver's validation middleware imports the pydantic
    bridge, which builds a model and so runs pydantic's plugin discovery) and a compiled regular
    expression per route; the routers and their routes are defined at import all the same."""
    if not _built:
        with _building:
            if not _built:
                app = APIGatewayRestResolver(
                    enable_validation=True,
                    serializer=partial(json.dumps, separators=(",", ":"), cls=Encoder, ensure_ascii=False),
                )
                errors.register(app)
                for router in ROUTERS:
                    app.include_router(router)
                _built.append(app)
    return _built[0]


def __getattr__(name: str) -> Any:
    """``app``: :func:`resolver` for code that reads the resolver as this module's attribute."""
    if name == "app":
        return resolver()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def openapi_json() -> str:
    """The OpenAPI 3.1 document, built once per process (it is ~0.4 s of work)."""
    from aws_lambda_powertools.event_handler.openapi.models import SecurityScheme
    from pydantic import TypeAdapter

    schemes = {
        name: TypeAdapter(SecurityScheme).validate_python(spec) for name, spec in SECURITY_SCHEMES.items()
    }
    document = resolver().get_openapi_json_schema(
        title="agentmem",
        version=__version__,
        description=__doc__,
        security_schemes=schemes,
        security=SECURITY,
    )
    return _with_json_rpc(json.loads(document))


def _with_json_rpc(document: dict[str, Any]) -> str:
    """``POST /v1/mcp`` reads its body raw (a malformed request is a JSON-RPC error, not a 422), so
    Powertools cannot see its shapes: they are added here from the documentation-only models."""
    from pydantic.json_schema import models_json_schema

    from agentmem.wire.models import JsonRpcRequest, JsonRpcResponse

    _, top = models_json_schema(
        [(JsonRpcRequest, "validation"), (JsonRpcResponse, "serialization")],
        ref_template="#/components/schemas/{model}",
    )
    document["components"]["schemas"].update(top.get("$defs", {}))

    def one_or_batch(name: str) -> dict[str, Any]:
        ref = {"$ref": f"#/components/schemas/{name}"}
        return {"anyOf": [ref, {"type": "array", "items": ref, "minItems": 1, "maxItems": 20}]}

    operation = document["paths"]["/v1/mcp"]["post"]
    operation["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": one_or_batch("JsonRpcRequest")}},
    }
    operation["responses"]["200"]["content"] = {
        "application/json": {"schema": one_or_batch("JsonRpcResponse")}
    }
    operation["responses"]["202"].pop("content", None)  # notifications only: an empty answer
    operation["responses"]["400"]["content"] = {
        "application/json": {
            "schema": {
                "anyOf": [
                    {"$ref": "#/components/schemas/ErrorOut"},
                    {"$ref": "#/components/schemas/JsonRpcResponse"},
                ]
            }
        }
    }
    return json.dumps(document, ensure_ascii=False)


class _DeclaredQueryParameters(Mapping[tuple[str, str], frozenset[str]]):
    """(method, path template) -> the query parameter names the route declares, each route's
    names read from its Powertools ``dependant`` (the signature analysis its validation runs
    anyway, and the source of the OpenAPI document's parameters) the first time a request asks
    for that route: a cold start no longer builds the whole OpenAPI document (~0.4 s) to answer
    its first request, and a new route's parameters are known without a second list."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self._routes = {(route.method.upper(), route.openapi_path): route for route in routes}
        self._names: dict[tuple[str, str], frozenset[str]] = {}

    def __getitem__(self, key: tuple[str, str]) -> frozenset[str]:
        names = self._names.get(key)
        if names is None:
            from aws_lambda_powertools.event_handler.openapi.params import get_flat_dependant

            dependant = get_flat_dependant(self._routes[key].dependant)
            names = self._names[key] = frozenset(field.alias for field in dependant.query_params)
        return names

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._routes)

    def __len__(self) -> int:
        return len(self._routes)


@cache
def declared_query_parameters() -> Mapping[tuple[str, str], frozenset[str]]:
    """(method, path template) -> the query parameter names the route declares (see
    :class:`_DeclaredQueryParameters`; ``{name}`` segments as in the OpenAPI document)."""
    # Powertools keeps its routes in these two lists (its OpenAPI generator reads them the same way).
    app = resolver()
    return _DeclaredQueryParameters([*app._static_routes, *app._dynamic_routes])


def _refusal(status: int, error: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": ErrorOut(error=error, message=message).model_dump_json(),
        "isBase64Encoded": False,
    }


_RPC_PARSE_ERROR = -32700  # JSON-RPC 2.0: invalid JSON was received


def _rpc_refusal(message: str) -> dict[str, Any]:
    """A body the gates refused on ``/v1/mcp``: a JSON-RPC parse error (400), as a malformed body
    of that endpoint is answered (the request's id cannot be trusted, so it is null)."""
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": _RPC_PARSE_ERROR, "message": message}}
    return {
        "statusCode": 400,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(error),
        "isBase64Encoded": False,
    }


def resolve(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    """Entry point for the Lambda handler and the local server: one request against ``container``."""
    body = event.get("body") or ""
    size = len(body.encode("utf-8")) if isinstance(body, str) else len(body)
    if size > MAX_BODY_BYTES:
        return _refusal(413, "payload_too_large", f"body exceeds {MAX_BODY_BYTES} bytes")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if body and content_type and content_type != "application/json" and not content_type.endswith("+json"):
        return _refusal(415, "unsupported_media_type", "send the body as application/json")
    if isinstance(body, str) and not event.get("isBase64Encoded"):
        try:
            check_json_body(body)
        except BodyRefused as exc:
            if str(event.get("path", "")).rstrip("/") == "/v1/mcp":  # a JSON-RPC client gets JSON-RPC
                return _rpc_refusal(str(exc))
            return _refusal(400, "invalid_request", str(exc))
    query = event.get("multiValueQueryStringParameters") or event.get("queryStringParameters") or {}
    unknown = unknown_query_parameters(
        declared_query_parameters(), str(event.get("httpMethod", "")), str(event.get("path", "")), query
    )
    if unknown:
        return _refusal(400, "invalid_request", "unknown query parameters: " + ", ".join(unknown)[:200])
    app = resolver()
    app.context["container"] = container  # routing context: cleared by the resolver when it ends
    return app.resolve(event, context)
