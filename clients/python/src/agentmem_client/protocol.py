"""The client's sans-IO core: one call run to its result, with no socket in sight.

* :class:`Call` describes one API call: method, path, query, JSON body, the parser of a success
  (the API's response model), and whether sending it twice is harmless. The calls of every
  route are built by :class:`agentmem_client.calls.Requests`.
* :func:`exchange` runs one call as a generator: it yields :class:`Send` (send this request,
  send me back the response or the transport exception) and :class:`Sleep` (wait, send back
  None), applies the :class:`~agentmem_client.retry.RetryPolicy`, and returns the parsed model
  or raises the typed error (:mod:`agentmem_client.errors`).
* :class:`Plan` is what a client executes: a :class:`Call` (its :func:`exchange`), or a
  :class:`Poll` that repeats one call until its result is done (``wait_for_turn``).

The sync and the async client (:mod:`agentmem_client.clients`) are the two short loops that
drive a plan's steps with ``httpx.Client`` and ``httpx.AsyncClient``: the logic exists once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import httpx
from pydantic import ValidationError

from agentmem_client.errors import AgentMemTransportError, NotFoundError, UnexpectedResponseError, error_from
from agentmem_client.retry import Failure, RetryPolicy, parse_retry_after

log = logging.getLogger(__name__)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
REQUEST_ID_HEADERS = ("x-request-id", "x-amzn-requestid", "apigw-requestid")
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)  # the request never left


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call, as data. ``idempotent``: sending it twice leaves the same state as once, so
    a 5xx or a broken connection may be retried (see :mod:`agentmem_client.retry`)."""

    method: str
    path: str
    parse: Callable[[bytes], T]
    params: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    idempotent: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)  # this call's own (Idempotency-Key)

    def steps(
        self, build: RequestBuilder, policy: RetryPolicy, monotonic: Callable[[], float]
    ) -> Generator[Step, Outcome, T]:
        return exchange(self, build(self), policy, monotonic)


@dataclass(frozen=True)
class Send:
    request: httpx.Request


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Send | Sleep
Outcome = httpx.Response | httpx.TransportError | None
RequestBuilder = Callable[[Call[Any]], httpx.Request]


class Plan(Protocol[T_co]):
    """What a client executes: a :class:`Call`, or several (:class:`Poll`), as one generator of
    steps that returns the result."""

    def steps(
        self, build: RequestBuilder, policy: RetryPolicy, monotonic: Callable[[], float]
    ) -> Generator[Step, Outcome, T_co]: ...


@dataclass(frozen=True)
class Poll(Generic[T]):
    """Repeat ``call`` every ``interval_s`` until ``done(result)`` or ``timeout_s`` has passed,
    and return the last result (the caller reads whether it is done). A 404 counts as "not there
    yet" until the deadline, then is raised. Each call has its own retries."""

    call: Call[T]
    done: Callable[[T], bool]
    timeout_s: float
    interval_s: float

    def steps(
        self, build: RequestBuilder, policy: RetryPolicy, monotonic: Callable[[], float]
    ) -> Generator[Step, Outcome, T]:
        deadline = monotonic() + self.timeout_s
        while True:
            try:
                result = yield from self.call.steps(build, policy, monotonic)
            except NotFoundError:
                if monotonic() >= deadline:
                    raise
            else:
                if self.done(result) or monotonic() >= deadline:
                    return result
            yield Sleep(max(0.0, min(self.interval_s, deadline - monotonic())))


def _failure(exc: httpx.TransportError) -> Failure | None:
    if isinstance(exc, httpx.UnsupportedProtocol):
        return None  # a wrong URL: no retry mends it
    return Failure.NOT_SENT if isinstance(exc, NOT_SENT) else Failure.MAYBE_SENT


def _request_id(response: httpx.Response) -> str | None:
    return next((response.headers[h] for h in REQUEST_ID_HEADERS if h in response.headers), None)


def _parsed(call: Call[T], response: httpx.Response) -> T:
    try:
        return call.parse(response.content)
    except ValidationError as exc:
        raise UnexpectedResponseError(
            f"{call.method} {call.path}: the {response.status_code} answer is not the documented model",
            status=response.status_code,
            details={"errors": exc.errors(include_url=False, include_input=False)[:5]},
        ) from exc


def exchange(
    call: Call[T], request: httpx.Request, policy: RetryPolicy, monotonic: Callable[[], float]
) -> Generator[Step, Outcome, T]:
    """Run ``call`` (its ``request``) to a result: yields what the driver must do, returns the
    parsed response model; raises an :class:`~agentmem_client.errors.AgentMemHTTPError` subclass
    for an error answer, :class:`~agentmem_client.errors.AgentMemTransportError` when no answer
    came, each once the policy allows no further attempt."""
    started = monotonic()
    attempt = 0
    while True:
        attempt += 1
        outcome = yield Send(request)
        if isinstance(outcome, httpx.Response):
            if outcome.is_success:
                return _parsed(call, outcome)
            retry_after = parse_retry_after(outcome.headers.get("Retry-After"))
            wait = policy.delay(
                attempt,
                monotonic() - started,
                status=outcome.status_code,
                idempotent=call.idempotent,
                retry_after_s=retry_after,
            )
            if wait is None:
                raise error_from(
                    outcome.status_code,
                    outcome.content,
                    retry_after=retry_after,
                    request_id=_request_id(outcome),
                )
            reason: object = outcome.status_code
        elif isinstance(outcome, httpx.TransportError):
            failure = _failure(outcome)
            wait = None
            if failure is not None:
                wait = policy.delay(
                    attempt, monotonic() - started, failure=failure, idempotent=call.idempotent
                )
            if wait is None:
                raise AgentMemTransportError(
                    f"{call.method} {call.path}: {type(outcome).__name__} after {attempt} attempt(s)",
                    details={"attempts": attempt, "failure": type(outcome).__name__},
                ) from outcome
            reason = type(outcome).__name__
        else:
            raise TypeError(f"a driver must answer Send with a response or an exception, not {outcome!r}")
        log.info(
            "client.retry",
            extra={
                "method": call.method,
                "path": call.path,
                "reason": reason,
                "attempt": attempt,
                "wait_s": wait,
            },
        )
        yield Sleep(wait)
