"""The client's errors: one hierarchy under :class:`AgentMemClientError`, the class of an HTTP
error chosen from its status through one table (:data:`ERROR_BY_STATUS`), never from the message
text. Every HTTP error carries what the API's :class:`~agentmem_client.wire.models.ErrorOut`
body says (``error`` code, ``message``, ``details``). Like the server's ``AgentMemError`` each
has ``code``, ``message`` and ``details``; the light client does not import the server.

::

    AgentMemClientError
    ├── AgentMemTransportError          the server could not be reached (after the retries)
    ├── UnexpectedResponseError         a 2xx whose body is not the documented model
    ├── TurnSendError                   TurnSender: SQS did not take every turn (sent / failed)
    │   └── QueueFullError              the queue is over its limit
    └── AgentMemHTTPError               any error answer (status, error, message, details)
        ├── ClientRequestError          4xx: the request must change
        │   ├── InvalidRequestError     400, 413, 415, 422
        │   ├── AuthenticationError     401
        │   ├── PermissionDeniedError   403
        │   ├── NotFoundError           404
        │   ├── ConflictError           409
        │   └── RateLimitedError        429 (retried first; raised when the retries ran out)
        └── ServerError                 5xx (retried first where the call is idempotent)
            └── ServiceUnavailableError 502, 503, 504
"""

from __future__ import annotations

import json
from typing import Any

MAX_RAW_MESSAGE = 200  # characters of a non-JSON error body kept as the message


class AgentMemClientError(Exception):
    """Base of every error the client raises: a stable ``code``, a ``message`` and ``details``."""

    code = "client_error"

    def __init__(self, message: str, *, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class AgentMemTransportError(AgentMemClientError):
    """No answer: connecting, sending or reading failed (after the retries the call allows)."""

    code = "transport_error"


class UnexpectedResponseError(AgentMemClientError):
    """A success status whose body does not parse as the route's response model (a proxy page,
    a server of another version)."""

    code = "unexpected_response"

    def __init__(self, message: str, *, status: int, details: dict[str, object] | None = None) -> None:
        super().__init__(message, details=details)
        self.status = status


class TurnSendError(AgentMemClientError):
    """:class:`~agentmem_client.sqs.TurnSender`: SQS did not take every turn. ``details["sent"]``
    lists the message ids it took, ``details["failed"]`` the others (with SQS's code); resend
    those with the same ids (the ingest function is idempotent on them)."""

    code = "send_failed"


class QueueFullError(TurnSendError):
    """The ingest queue is over its limit (SQS ``OverLimit``); retry later."""

    code = "queue_full"


class AgentMemHTTPError(AgentMemClientError):
    """An error answer. ``error`` is the API's stable code (``not_found``, ``queue_full``, ...;
    ``http_<status>`` when the body was not an ErrorOut), ``retry_after`` the seconds the server
    asked to wait (429/503), ``request_id`` the server's request id when it sent one."""

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        *,
        details: Any = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message, details=details if isinstance(details, dict) else None)
        self.status = status
        self.error = error
        self.code = error
        self.details_raw = details  # ErrorOut.details as sent (a list for schema errors)
        self.retry_after = retry_after
        self.request_id = request_id

    def __str__(self) -> str:
        return f"{self.status} {self.error}: {self.message}"


class ClientRequestError(AgentMemHTTPError):
    """4xx: the request is wrong for the server; sending it again unchanged will not help
    (except a 429)."""


class InvalidRequestError(ClientRequestError):
    """400/413/415/422: malformed, too large, not JSON, or failing the schema or a guard;
    ``details`` says which field or which guard."""


class AuthenticationError(ClientRequestError):
    """401: no valid token, or no tenant and user."""


class PermissionDeniedError(ClientRequestError):
    """403: the caller may not do this (a missing permission, another tenant's or user's data)."""


class NotFoundError(ClientRequestError):
    """404: no such record (or route) in the caller's scope."""


class ConflictError(ClientRequestError):
    """409: the record changed since ``expected_version``, or a conflict was already resolved."""


class RateLimitedError(ClientRequestError):
    """429: the queue is full or the caller holds its share of the server; retry after
    ``retry_after`` seconds."""


class ServerError(AgentMemHTTPError):
    """5xx: the server failed; the request may have been applied unless the call is idempotent."""


class ServiceUnavailableError(ServerError):
    """502/503/504: a store, the embedder or a worker was unavailable; retry after
    ``retry_after`` seconds."""


ERROR_BY_STATUS: dict[int, type[AgentMemHTTPError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    422: InvalidRequestError,
    429: RateLimitedError,
    502: ServiceUnavailableError,
    503: ServiceUnavailableError,
    504: ServiceUnavailableError,
}


def error_class(status: int) -> type[AgentMemHTTPError]:
    """The exception class of an error status: the table's, else by range."""
    if status in ERROR_BY_STATUS:
        return ERROR_BY_STATUS[status]
    if 400 <= status < 500:
        return ClientRequestError
    if status >= 500:
        return ServerError
    return AgentMemHTTPError


def error_from(
    status: int,
    body: bytes,
    *,
    retry_after: float | None = None,
    request_id: str | None = None,
) -> AgentMemHTTPError:
    """The exception for an error answer. An ErrorOut body gives code, message and details; any
    other body (a gateway's HTML page, empty) gives ``http_<status>`` and the start of the text."""
    error, message, details = f"http_{status}", "", None
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        error = data["error"]
        message = str(data.get("message") or "")
        details = data.get("details")
    elif isinstance(data, dict) and isinstance(data.get("message"), str):  # API Gateway's own answers
        message = data["message"]
    else:
        message = body.decode("utf-8", "replace").strip()[:MAX_RAW_MESSAGE]
    return error_class(status)(
        status,
        error,
        message or f"HTTP {status}",
        details=details,
        retry_after=retry_after,
        request_id=request_id,
    )
