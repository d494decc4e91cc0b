"""``agentmem_client``: the Python client of the agentmem HTTP API (``pip install agentmem-client``;
httpx and pydantic only, ``[sqs]`` adds boto3 for :class:`TurnSender`).

::

    from agentmem_client import AgentMemClient

    with AgentMemClient("http://127.0.0.1:8080", tenant_id="t1", user_id="u1") as am:
        am.add_turn("s1", "我住在青岛，对花生过敏。", "好的，记住了。")
        print(am.context("晚饭吃什么？").context)

:class:`AgentMemClient` (blocking) and :class:`AsyncAgentMemClient` (``await``) have the same
operations, typed with the models the API serves (:mod:`agentmem_client.wire`, the server's own
``agentmem.wire`` files); errors are
:mod:`agentmem_client.errors`; retries :class:`~agentmem_client.retry.RetryPolicy`. The
sans-IO core is :mod:`agentmem_client.protocol` (the calls: :mod:`agentmem_client.calls`); :class:`~agentmem_client.sqs.TurnSender` sends
turns straight to the ingest queue. Names are imported on first use, so
``agentmem_client.sqs`` works without httpx installed, and importing the package loads neither
numpy, boto3 nor Powertools. The server's ``agentmem.client`` re-exports this package. Guide:
docs/client.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentmem_client.version import __version__

if TYPE_CHECKING:
    from agentmem_client.clients import AgentMemClient, AsyncAgentMemClient
    from agentmem_client.errors import (
        AgentMemClientError,
        AgentMemHTTPError,
        AgentMemTransportError,
        AuthenticationError,
        ClientRequestError,
        ConflictError,
        InvalidRequestError,
        NotFoundError,
        PermissionDeniedError,
        QueueFullError,
        RateLimitedError,
        ServerError,
        ServiceUnavailableError,
        TurnSendError,
        UnexpectedResponseError,
    )
    from agentmem_client.retry import RetryPolicy
    from agentmem_client.sqs import TurnSender

_WHERE = {
    "AgentMemClient": "clients",
    "AsyncAgentMemClient": "clients",
    "RetryPolicy": "retry",
    "TurnSender": "sqs",
    **dict.fromkeys(
        (
            "AgentMemClientError",
            "AgentMemHTTPError",
            "AgentMemTransportError",
            "AuthenticationError",
            "ClientRequestError",
            "ConflictError",
            "InvalidRequestError",
            "NotFoundError",
            "PermissionDeniedError",
            "QueueFullError",
            "RateLimitedError",
            "ServerError",
            "ServiceUnavailableError",
            "TurnSendError",
            "UnexpectedResponseError",
        ),
        "errors",
    ),
}
__all__ = [  # noqa: RUF022  # grouped as _WHERE
    "AgentMemClient",
    "AsyncAgentMemClient",
    "RetryPolicy",
    "TurnSender",
    "AgentMemClientError",
    "AgentMemHTTPError",
    "AgentMemTransportError",
    "AuthenticationError",
    "ClientRequestError",
    "ConflictError",
    "InvalidRequestError",
    "NotFoundError",
    "PermissionDeniedError",
    "QueueFullError",
    "RateLimitedError",
    "ServerError",
    "ServiceUnavailableError",
    "TurnSendError",
    "UnexpectedResponseError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'agentmem_client' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentmem_client.{module}"), name)
