"""consolidate λ (EventBridge schedule): decay, dedup, merge, evict for users with pending writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.lazy import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-consolidate")
tracer = LazyTracer(service="agentmem-consolidate")
metrics = Metrics(namespace="agentmem", service="consolidate")


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    detail = event.get("detail") or {}
    report = container.consolidation.run_pending(
        now=container.clock.now(), force=bool(detail.get("force", False))
    )
    for name in ("scopes", "decayed", "merged", "deduplicated", "evicted", "conflicts"):
        metrics.add_metric(name=f"Consolidation_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    logger.info("consolidation finished", extra=report.to_dict())
    return report.to_dict()
