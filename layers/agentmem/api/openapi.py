"""The OpenAPI side of the wire contract: the error answers every route can give, described once
(:data:`ERROR_DESCRIPTIONS`), and :func:`responses`, which states a route's success and its errors
with the models of :mod:`agentmem.wire` (every error with :class:`~agentmem.wire.models.ErrorOut`).
Powertools' types stay here, on the API's side: the wire package imports none of them."""

# No `from __future__ import annotations`: kept as the models' modules (annotations as objects).

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from agentmem.wire.models import ErrorOut

ERROR_DESCRIPTIONS = {
    400: "Malformed request (not JSON, too deep, an unknown query parameter, a bad cursor, a guard"
    " refused the content)",
    401: "No tenant and user in the authorizer context",
    403: "The caller may not do this, or the body names another tenant or user",
    404: "No such record (or route) in the caller's scope",
    409: "The record changed since expected_version",
    413: "Body larger than the limit",
    415: "Body is not application/json",
    422: "The body or a parameter fails the schema",
    429: "The ingest queue is full, or too many requests in flight for the caller (usage plan,"
    " throttling); retry after Retry-After seconds",
    500: "Unexpected error (logged)",
    503: "A store or the embedder is unavailable; retry after Retry-After seconds",
}

# Answered by resolve()'s gates, the validation and the 500 boundary on any route.
EVERY_ROUTE_ERRORS = frozenset({400, 413, 415, 422, 500})
# Answered on any route that needs a caller: no caller, a missing permission, the usage plan
# (429 from API Gateway's throttling or the local server's share), a store down.
CALLER_ERRORS = frozenset({401, 403, 429, 503})


def responses(
    status: int, model: type[BaseModel] | None, description: str, *errors: int, auth: bool = True
) -> dict[int, OpenAPIResponse]:
    """The OpenAPI responses of one route: its success and the errors it can answer, all errors
    with :class:`ErrorOut`. :data:`EVERY_ROUTE_ERRORS` apply to every route (the gates
    :func:`agentmem.api.app.resolve` runs before any route: size, content type, JSON shape,
    unknown query parameters; the schema; the one 500 boundary) and :data:`CALLER_ERRORS` to every
    route that needs a caller (``auth``); they are always listed."""
    out: dict[int, OpenAPIResponse] = {
        status: {"description": description, "content": {"application/json": {"model": model}}}
        if model is not None
        else {"description": description}
    }
    for code in sorted({*errors, *EVERY_ROUTE_ERRORS} | (CALLER_ERRORS if auth else set())):
        out[code] = {
            "description": ERROR_DESCRIPTIONS[code],
            "content": {"application/json": {"model": ErrorOut}},
        }
    return out
