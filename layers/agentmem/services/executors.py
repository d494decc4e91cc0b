"""The executors a service may be handed to fetch its sources (:class:`ContextService
<agentmem.services.context.ContextService>`): a thread pool where the stores are remote (the
latency of a call is then its slowest fetch, not their sum), or :class:`InlineExecutor` where
they are in-process (every fetch is CPU work under one GIL, and a thread's hand-offs, up to the
5 ms switch interval each, cost more than they overlap). The composition root chooses."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


class InlineExecutor(Executor):
    """Runs each task in the caller's thread when it is submitted; its future is done on return,
    holding the result or the exception (delivered by ``result()``, as a thread's would be)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except Exception as exc:  # handed to the caller through the future
            done.set_exception(exc)
        return done
