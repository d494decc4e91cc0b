"""consolidate λ (EventBridge schedule): decay, dedup, merge, evict for users with pending writes,
page after page until ``consolidate_budget_s`` (cut to the invocation's remaining time minus
``consolidate_margin_s``) is spent; the users it did not reach are the next run's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.coldstart import LazyTracer, default_container

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
    from agentmem.services.reconcile import run_budget  # after the cold start

    detail = event.get("detail") or {}
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    settings = container.settings
    report = container.consolidation.run_pending(
        now=container.clock.now(),
        force=bool(detail.get("force", False)),
        budget=run_budget(
            settings.consolidate_budget_s,
            settings.consolidate_margin_s,
            remaining() / 1000 if callable(remaining) else None,
        ),
    )
    for name in ("scopes", "decayed", "merged", "deduplicated", "evicted", "conflicts"):
        metrics.add_metric(name=f"Consolidation_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    metrics.add_metric(
        name="Consolidation_budget_exhausted", unit=MetricUnit.Count, value=int(report.budget_exhausted)
    )
    logger.info("consolidation finished", extra=report.to_dict())
    return report.to_dict()
