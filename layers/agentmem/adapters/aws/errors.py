"""Vendor errors of the AWS SDK translated into :mod:`agentmem.errors`, and a lazily built client.

Throttling, 5xx and transport failures become :class:`~agentmem.errors.StoreUnavailable` (the
caller degrades or the event source retries); a request the service rejects as invalid becomes
:class:`~agentmem.errors.ValidationFailed`. Conditional-check failures are *not* handled here:
each store decides whether they mean a version conflict, an absent record or a harmless replay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.errors import AgentMemError, StoreUnavailable, ValidationFailed

T = TypeVar("T")

THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "Throttling",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "RequestThrottled",
        "ServiceQuotaExceededException",
        "LimitExceededException",
    }
)
INVALID_REQUEST_CODES = frozenset({"ValidationException", "SerializationException", "InvalidParameterValue"})


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def translate(exc: ClientError | BotoCoreError, *, store: str, operation: str) -> AgentMemError:
    """The agentmem error for an SDK failure (raise it ``from exc``)."""
    details: dict[str, object] = {"store": store, "operation": operation}
    if isinstance(exc, ClientError):
        code = error_code(exc)
        details.update(code=code, status=http_status(exc))
        if code in INVALID_REQUEST_CODES:
            return ValidationFailed(f"{store} rejected the request: {code}", details=details)
        reason = "throttled" if code in THROTTLING_CODES else "service error"
        return StoreUnavailable(f"{store} unavailable ({reason}: {code})", details=details)
    details["code"] = type(exc).__name__
    return StoreUnavailable(f"{store} unreachable: {type(exc).__name__}", details=details)


class LazyClient(Generic[T]):
    """Builds a client on first use (never at import or construction), once, thread-safely."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._client: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        client = self._client
        if client is not None:
            return client
        with self._lock:
            if self._client is None:
                self._client = self._factory()
            return self._client

    @property
    def built(self) -> bool:
        return self._client is not None


def boto_client(service: str, *, region: str | None, session: Any = None, **config: Any) -> Any:
    """A boto3 client with bounded timeouts and the SDK's ``standard`` retries (throttling and
    5xx, with backoff) unless ``config`` says otherwise."""
    import boto3
    from botocore.config import Config

    options: dict[str, Any] = {
        "retries": {"mode": "standard", "max_attempts": 4},
        "connect_timeout": 3,
        "read_timeout": 10,
    }
    options.update(config)
    factory = session if session is not None else boto3.session.Session()
    return factory.client(service, region_name=region, config=Config(**options))
