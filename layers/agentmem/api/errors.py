"""Errors as HTTP answers: the status comes from the exception type through one table, the body
is always :class:`~agentmem.wire.models.ErrorOut`, and the one boundary that catches everything
logs it and answers a clean 500 — never a stack trace."""

from __future__ import annotations

import json
import logging
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from agentmem.errors import (
    AgentMemError,
    ConfigurationError,
    EmbedderUnavailable,
    Forbidden,
    IdempotencyKeyReused,
    NotFound,
    QueueFull,
    StoreUnavailable,
    Unauthorized,
    ValidationFailed,
    VersionConflict,
)
from agentmem.wire.models import ErrorOut

log = logging.getLogger(__name__)

# Resolved by isinstance in this order: a subclass must come before its base.
STATUS_BY_ERROR: dict[type[AgentMemError], int] = {
    ValidationFailed: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    VersionConflict: 409,
    IdempotencyKeyReused: 422,
    QueueFull: 429,
    StoreUnavailable: 503,
    EmbedderUnavailable: 503,
    ConfigurationError: 500,
}


def error_response(status: int, error: str, message: str, details: Any = None) -> Response[Any]:
    headers = {"Retry-After": "1"} if status in (429, 503) else {}
    body = ErrorOut(error=error, message=message, details=details)
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(body.model_dump(), ensure_ascii=False, default=str),
        headers=headers,
    )


def register(app: APIGatewayRestResolver) -> None:
    """Install the exception handlers on ``app``."""

    @app.exception_handler(AgentMemError)
    def _agentmem_error(exc: AgentMemError) -> Response[Any]:
        status = next((code for cls, code in STATUS_BY_ERROR.items() if isinstance(exc, cls)), 500)
        if status >= 500:
            log.warning("api.error", extra={"error": type(exc).__name__})
        return error_response(status, exc.code, exc.message, exc.details or None)

    @app.exception_handler(RequestValidationError)
    def _invalid_request(exc: RequestValidationError) -> Response[Any]:
        details = [
            {
                "loc": [str(part) for part in err.get("loc", ())],
                "msg": err.get("msg"),
                "type": err.get("type"),
            }
            for err in exc.errors()
        ]
        malformed = any(d["type"] in ("json_invalid", "model_attributes_type", "dict_type") for d in details)
        return error_response(
            400 if malformed else 422,
            "invalid_request",
            "the request body or parameters are invalid",
            details,
        )

    @app.not_found
    def _not_found(exc: NotFoundError) -> Response[Any]:
        return error_response(404, "not_found", "no such route")

    @app.exception_handler(RequestUnsupportedContentType)
    def _unsupported_type(exc: RequestUnsupportedContentType) -> Response[Any]:
        return error_response(415, "unsupported_media_type", "send the body as application/json")

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response[Any]:
        # The one boundary where a failure must not reach the caller as a stack trace.
        log.exception("api.unexpected_error", extra={"error": type(exc).__name__})
        return error_response(500, "internal_error", "unexpected error; it has been logged")
