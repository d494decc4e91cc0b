"""The handlers' tracer (agentmem.coldstart.LazyTracer): off, the handler runs undecorated and X-Ray is
never loaded; on, the first invocation builds the tracer and every invocation is traced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentmem.coldstart import LazyTracer, tracing_enabled


class FakeTracer:
    def __init__(self, service: str) -> None:
        self.service = service
        self.traced: list[Any] = []

    def capture_lambda_handler(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        def traced(event: Any, context: Any, **kwargs: Any) -> Any:
            self.traced.append(event)
            return handler(event, context, **kwargs)

        return traced


def handler(event: dict[str, Any], context: Any, container: str | None = None) -> dict[str, Any]:
    """The handler's docstring."""
    return {"event": event, "container": container}


@pytest.mark.parametrize(
    ("environ", "enabled"),
    [
        ({}, False),  # a laptop, CI: no Lambda execution environment
        ({"LAMBDA_TASK_ROOT": "/var/task"}, True),  # a deployed function
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "1"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "false"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_CHALICE_CLI_MODE": "true"}, False),
    ],
)
def test_tracing_follows_the_powertools_rule(environ: dict[str, str], enabled: bool) -> None:
    assert tracing_enabled(environ) is enabled


def test_off_the_handler_is_returned_undecorated_and_no_tracer_is_built() -> None:
    built: list[str] = []

    def factory(service: str) -> Any:
        built.append(service)
        return FakeTracer(service)

    tracer = LazyTracer("agentmem-test", enabled=False, factory=factory)
    assert tracer.capture_lambda_handler(handler) is handler
    assert handler({"n": 1}, None) == {"event": {"n": 1}, "container": None}
    assert built == []


def test_on_the_tracer_is_built_on_the_first_invocation_and_traces_every_one() -> None:
    tracers: list[FakeTracer] = []

    def factory(service: str) -> Any:
        tracers.append(FakeTracer(service))
        return tracers[-1]

    lazy = LazyTracer("agentmem-test", enabled=True, factory=factory)
    decorated = lazy.capture_lambda_handler(handler)
    assert tracers == []  # decorating (the module import) builds nothing
    assert decorated.__name__ == "handler" and decorated.__doc__ == "The handler's docstring."
    assert decorated({"n": 1}, None) == {"event": {"n": 1}, "container": None}
    assert decorated({"n": 2}, None, container="c") == {"event": {"n": 2}, "container": "c"}
    assert len(tracers) == 1 and tracers[0].service == "agentmem-test"
    assert tracers[0].traced == [{"n": 1}, {"n": 2}]
    assert lazy.tracer() is tracers[0]


def test_on_the_default_factory_is_the_powertools_tracer() -> None:
    from aws_lambda_powertools import Tracer

    lazy = LazyTracer("agentmem-test", enabled=True)
    tracer = lazy.tracer()
    assert isinstance(tracer, Tracer)
    assert tracer.service == "agentmem-test"
