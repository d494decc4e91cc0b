"""api λ (API Gateway REST proxy): the HTTP API. Scope comes from the authorizer context.

Before the API is imported, two Powertools packages are registered without running their
``__init__`` (:func:`agentmem.coldstart.defer_package_init`: every other resolver, asyncio, ~30
event classes the API does not use); only this cold start does it, no other importer of the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.coldstart import LazyTracer, default_container, defer_package_init

for _package in ("aws_lambda_powertools.event_handler", "aws_lambda_powertools.utilities.data_classes"):
    defer_package_init(_package)

from agentmem.api.app import resolve  # noqa: E402 - after the deferral above

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-api")
tracer = LazyTracer(service="agentmem-api")
metrics = Metrics(namespace="agentmem", service="api")


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    response = resolve(event, context, container)
    metrics.add_metric(
        name=f"Http{int(response.get('statusCode', 500)) // 100}xx", unit=MetricUnit.Count, value=1
    )
    return response
