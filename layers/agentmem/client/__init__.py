"""``agentmem.client``: a Python client for the agentmem HTTP API (``pip install agentmem[client]``).

::

    from agentmem.client import AgentMemClient

    with AgentMemClient("http://127.0.0.1:8080", tenant_id="t1", user_id="u1") as am:
        am.add_turn("s1", "我住在青岛，对花生过敏。", "好的，记住了。")
        print(am.context("晚饭吃什么？").context)

:class:`AgentMemClient` (blocking) and :class:`AsyncAgentMemClient` (``await``) have the same
operations, typed with the models the API serves (:mod:`agentmem.api.schemas`); errors are
:mod:`agentmem.client.errors`; retries :class:`~agentmem.client.retry.RetryPolicy`. The
sans-IO core is :mod:`agentmem.client.protocol` (the calls: :mod:`agentmem.client.calls`); :class:`~agentmem.client.sqs.TurnSender` sends
turns straight to the ingest queue. Names are imported on first use, so
``agentmem.client.sqs`` works without httpx installed. Guide: docs/client.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentmem.client.clients import AgentMemClient, AsyncAgentMemClient
    from agentmem.client.errors import (
        AgentMemClientError,
        AgentMemHTTPError,
        AgentMemTransportError,
        AuthenticationError,
        ClientRequestError,
        ConflictError,
        InvalidRequestError,
        NotFoundError,
        PermissionDeniedError,
        RateLimitedError,
        ServerError,
        ServiceUnavailableError,
        UnexpectedResponseError,
    )
    from agentmem.client.retry import RetryPolicy
    from agentmem.client.sqs import TurnSender

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
            "RateLimitedError",
            "ServerError",
            "ServiceUnavailableError",
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
    "RateLimitedError",
    "ServerError",
    "ServiceUnavailableError",
    "UnexpectedResponseError",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'agentmem.client' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentmem.client.{module}"), name)
