"""The HTTP API as a Powertools ``APIGatewayRestResolver``: the same routes API Gateway serves
and the local server drives (it turns each request into an API Gateway proxy event).

Who is calling comes only from ``requestContext.authorizer`` (:mod:`agentmem.api.auth`); the
routes live in :mod:`agentmem.api.routes`, one router per resource; errors become answers in
:mod:`agentmem.api.errors`. :func:`resolve` is the entry point: it gates size, content type,
JSON shape (depth, number literals, NaN: :func:`agentmem.api.request.check_json_body`) and query
parameters the route does not declare before the resolver — each a 4xx with a reason — and runs
the request against the container it is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Route, Router
from aws_lambda_powertools.shared.json_encoder import Encoder

from agentmem import __version__
from agentmem.api import errors
from agentmem.api.request import BodyRefused, RequestContext, check_json_body, unknown_query_parameters
from agentmem.api.routes import audit, conflicts, history, mcp, memories, operator, read, sessions, turns, ui
from agentmem.api.schemas import ErrorOut, HealthOut, responses
from agentmem.messages import MAX_BODY_BYTES

if TYPE_CHECKING:  # importing the API imports no service (nor numpy): each request brings its container
    from agentmem.bootstrap import Container

app = APIGatewayRestResolver(
    enable_validation=True,
    serializer=partial(json.dumps, separators=(",", ":"), cls=Encoder, ensure_ascii=False),
)
errors.register(app)

meta = Router()
_req = RequestContext(meta)


@meta.get(
    "/v1/health",
    summary="Liveness, the configured backend and embedder",
    responses=responses(200, HealthOut, "The service is up", auth=False),
)
def health() -> HealthOut:
    c = _req.container()
    return HealthOut(status="ok", backend=c.settings.backend, embedder=c.embedder.model_id)


@meta.get(
    "/v1/openapi.json",
    summary="This API's OpenAPI document",
    responses={**responses(200, None, "OpenAPI 3 document", auth=False)},
)
def openapi() -> Response[Any]:
    return Response(status_code=200, content_type="application/json", body=openapi_json())


for _router in (
    turns.router,
    read.router,
    memories.router,
    history.router,  # a memory's supersede chain
    conflicts.router,  # pending conflicts with permanent/pinned memories (seed 003)
    sessions.router,
    mcp.router,
    audit.router,
    operator.router,  # turn status, dead letters, export / import
    meta,
    ui.router,  # the inspector's static files (not in the OpenAPI document)
):
    app.include_router(_router)


def openapi_json() -> str:
    return app.get_openapi_json_schema(title="agentmem", version=__version__, description=__doc__)


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
    return _DeclaredQueryParameters([*app._static_routes, *app._dynamic_routes])


def _refusal(status: int, error: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": ErrorOut(error=error, message=message).model_dump_json(),
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
            return _refusal(400, "invalid_request", str(exc))
    query = event.get("multiValueQueryStringParameters") or event.get("queryStringParameters") or {}
    unknown = unknown_query_parameters(
        declared_query_parameters(), str(event.get("httpMethod", "")), str(event.get("path", "")), query
    )
    if unknown:
        return _refusal(400, "invalid_request", "unknown query parameters: " + ", ".join(unknown)[:200])
    app.context["container"] = container  # routing context: cleared by the resolver when it ends
    return app.resolve(event, context)
