"""The sync and the async client: one list of operations (:class:`_Operations`), two drivers.

Each operation is declared once, as an :class:`Operation` over the :class:`~agentmem_client.
calls.Requests` method that builds its call. Read through an :class:`AgentMemClient` it runs
the call and returns the model; through an :class:`AsyncAgentMemClient` it returns an awaitable
of the same model — the same signature, docstring and retries, because both drivers only feed
:func:`~agentmem_client.protocol.exchange` (sending, sleeping) and the rest is shared."""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import httpx

from agentmem_client.calls import Requests
from agentmem_client.protocol import Outcome, Plan, Sleep
from agentmem_client.retry import RetryPolicy

P = ParamSpec("P")
T = TypeVar("T")
DEFAULT_TIMEOUT_S = 10.0


class Operation(Generic[P, T]):
    """An API operation, bound to a client on attribute access: ``client.recall(...)`` builds
    the call with ``client.requests`` and hands it to ``client.execute``."""

    def __init__(self, build: Callable[Concatenate[Requests, P], Plan[T]]) -> None:
        self.build = build
        self.__doc__ = build.__doc__
        self.__name__ = getattr(build, "__name__", "operation")
        self._sig: inspect.Signature | None = None

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Operation[P, T]: ...
    @overload
    def __get__(self, obj: AgentMemClient, owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: AsyncAgentMemClient, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        if obj is None:
            return self
        build: Callable[..., Plan[T]] = self.build

        def run(*args: Any, **kwargs: Any) -> Any:
            return obj.execute(build(obj.requests, *args, **kwargs))

        functools.update_wrapper(run, self.build)
        run.__signature__ = self._signature()  # type: ignore[attr-defined]  # for help() and IDEs
        return run

    def _signature(self) -> inspect.Signature:
        """The builder's parameters without ``self`` (the result is the call's model); once."""
        if self._sig is None:
            sig = inspect.signature(self.build)
            self._sig = sig.replace(parameters=list(sig.parameters.values())[1:], return_annotation=sig.empty)
        return self._sig


class _Operations:
    """Every route of the API; the clients below differ only in how they send."""

    add_turns = Operation(Requests.add_turns)
    add_turn = Operation(Requests.add_turn)
    turn_status = Operation(Requests.turn_status)
    wait_for_turn = Operation(Requests.wait_for_turn)
    context = Operation(Requests.context)
    recall = Operation(Requests.recall)
    list_memories = Operation(Requests.list_memories)
    create_memory = Operation(Requests.create_memory)
    get_memory = Operation(Requests.get_memory)
    patch_memory = Operation(Requests.patch_memory)
    delete_memory = Operation(Requests.delete_memory)
    promote_memory = Operation(Requests.promote_memory)
    history = Operation(Requests.history)
    erase_user = Operation(Requests.erase_user)
    put_session_state = Operation(Requests.put_session_state)
    get_session_state = Operation(Requests.get_session_state)
    conflicts = Operation(Requests.conflicts)
    resolve_conflict = Operation(Requests.resolve_conflict)
    audit = Operation(Requests.audit)
    health = Operation(Requests.health)

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        tenant_id: str | None,
        user_id: str | None,
        headers: Mapping[str, str] | None,
        retry: RetryPolicy | None,
        monotonic: Callable[[], float],
    ) -> None:
        self.requests = Requests(base_url, token=token, tenant_id=tenant_id, user_id=user_id, headers=headers)
        self.retry = retry or RetryPolicy()
        self._monotonic = monotonic


class AgentMemClient(_Operations):
    """Blocking client over ``httpx.Client``. Use as a context manager, or call :meth:`close`.

    ``http``: an ``httpx.Client`` of your own (proxies, TLS, a ``MockTransport`` in tests; the
    client does not close it); else one is built with ``timeout`` and ``transport``. ``sleep`` and
    ``monotonic`` are the waits and clock of the retries (tests replace them)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            base_url,
            token=token,
            tenant_id=tenant_id,
            user_id=user_id,
            headers=headers,
            retry=retry,
            monotonic=monotonic,
        )
        self._owns_http = http is None
        self._http = http or httpx.Client(timeout=timeout, transport=transport)
        self._sleep = sleep

    def execute(self, plan: Plan[T]) -> T:
        """Run ``plan`` (a call, with its retries) and return its result."""
        steps = plan.steps(self.requests.request, self.retry, self._monotonic)
        outcome: Outcome = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration as done:
                result: T = done.value
                return result
            if isinstance(step, Sleep):
                self._sleep(step.seconds)
                outcome = None
                continue
            try:
                outcome = self._http.send(step.request)
            except httpx.TransportError as exc:
                outcome = exc

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> AgentMemClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncAgentMemClient(_Operations):
    """The same operations over ``httpx.AsyncClient``: ``await client.recall(...)``. Use as an
    async context manager, or await :meth:`aclose`. Arguments as :class:`AgentMemClient`."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
        http: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Coroutine[Any, Any, None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            base_url,
            token=token,
            tenant_id=tenant_id,
            user_id=user_id,
            headers=headers,
            retry=retry,
            monotonic=monotonic,
        )
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout, transport=transport)
        self._sleep = sleep

    async def execute(self, plan: Plan[T]) -> T:
        """Run ``plan`` (a call, with its retries) and return its result."""
        steps = plan.steps(self.requests.request, self.retry, self._monotonic)
        outcome: Outcome = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration as done:
                result: T = done.value
                return result
            if isinstance(step, Sleep):
                await self._sleep(step.seconds)
                outcome = None
                continue
            try:
                outcome = await self._http.send(step.request)
            except httpx.TransportError as exc:
                outcome = exc

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncAgentMemClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
