"""What a handler builds on its first event rather than at import: the composition root and the
X-Ray tracer. A Lambda cold start pays for its imports before the first event can be served;
these two were most of it.

:func:`default_container` is :func:`agentmem.bootstrap.default_container` with the import of
:mod:`agentmem.bootstrap` (every service, and numpy with them) deferred to its first call, so a
handler module imports its routes and models but no service. The container is built on the
first event either way (it always was: nothing is built at import time).

A module-level Powertools ``Tracer()`` imports ``aws_xray_sdk`` (and through it botocore's
session machinery) at import even when tracing is off, ~150-400 ms of every cold start and of
every local process. :class:`LazyTracer` is what a handler decorates itself with instead:

* tracing off (Powertools' own rule: ``POWERTOOLS_TRACE_DISABLED`` truthy, or not in a Lambda
  execution environment (no ``LAMBDA_TASK_ROOT``), or under SAM local / Chalice local): the
  handler is returned as it is; ``aws_xray_sdk`` is never imported.
* tracing on (a deployed function with active tracing): the first invocation builds the real
  ``Tracer(service=...)`` (which patches boto3 and the other supported libraries before the
  container builds its clients) and every invocation runs under ``capture_lambda_handler``:
  the same ``## handler`` subsegment, ``ColdStart`` and ``Service`` annotations as before.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.shared import constants
from aws_lambda_powertools.shared.functions import strtobool

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

    from agentmem.bootstrap import Container

__all__ = ["LazyTracer", "default_container", "tracing_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


def default_container() -> Container:
    """The process's container (:func:`agentmem.bootstrap.default_container`), imported on first use."""
    from agentmem.bootstrap import default_container as built

    return built()


def tracing_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether Powertools' ``Tracer`` would trace here (its ``_is_tracer_disabled`` rule)."""
    env = os.environ if environ is None else environ
    if strtobool(env.get(constants.TRACER_DISABLED_ENV, "false")):
        return False
    in_lambda = bool(env.get(constants.LAMBDA_TASK_ROOT_ENV))
    emulated = bool(env.get(constants.SAM_LOCAL_ENV) or env.get(constants.CHALICE_LOCAL_ENV))
    return in_lambda and not emulated


def _powertools_tracer(service: str) -> Tracer:
    from aws_lambda_powertools import Tracer

    return Tracer(service=service)


class LazyTracer:
    """A stand-in for a module-level ``Tracer(service=...)``; see the module docstring."""

    def __init__(
        self, service: str, *, enabled: bool | None = None, factory: Callable[[str], Tracer] | None = None
    ) -> None:
        """``enabled`` None: Powertools' rule (:func:`tracing_enabled`); ``factory`` builds the
        tracer from the service name (default: Powertools' ``Tracer``; a test passes a fake)."""
        self.service = service
        self.enabled = tracing_enabled() if enabled is None else enabled
        self._factory = factory or _powertools_tracer
        self._tracer: Tracer | None = None
        self._lock = threading.Lock()

    def tracer(self) -> Tracer:
        """The tracer, built (and the libraries patched) on the first call."""
        with self._lock:
            if self._tracer is None:
                self._tracer = self._factory(self.service)
            return self._tracer

    def capture_lambda_handler(self, handler: F) -> F:
        """``Tracer.capture_lambda_handler``, applied on the first invocation; off: ``handler``."""
        if not self.enabled:
            return handler
        traced: list[Callable[..., Any]] = []

        @functools.wraps(handler)
        def decorate(event: Any, context: Any, **kwargs: Any) -> Any:
            if not traced:
                traced.append(self.tracer().capture_lambda_handler(handler))
            return traced[0](event, context, **kwargs)

        return decorate  # type: ignore[return-value]
