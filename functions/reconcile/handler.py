"""reconcile λ (EventBridge schedule): repair drift between the source of truth and its projections."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.lazy import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-reconcile")
tracer = LazyTracer(service="agentmem-reconcile")
metrics = Metrics(namespace="agentmem", service="reconcile")


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    report = container.reconciler.run(now=container.clock.now())
    for name in ("checked", "missing", "stale", "orphan", "repaired", "requeued", "failed"):
        metrics.add_metric(name=f"Reconcile_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    logger.info(
        "reconciliation finished", extra={k: v for k, v in report.to_dict().items() if k != "repair_keys"}
    )
    return report.to_dict()
