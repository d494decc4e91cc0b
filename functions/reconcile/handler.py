"""reconcile λ (EventBridge schedule): repair drift between the source of truth and its projections.

The event names the segment, at the top level (a rule target's ``Input``: ``{"segment": i,
"segments": n}``) or in ``detail``; none means the one segment of everything. The run's budget is
``reconcile_budget_s``, cut to what the invocation has left minus ``reconcile_margin_s``; it
saves its cursor and the next invocation of the segment resumes there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.coldstart import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-reconcile")
tracer = LazyTracer(service="agentmem-reconcile")
metrics = Metrics(namespace="agentmem", service="reconcile")
COUNTS = (
    "checked",
    "missing",
    "stale",
    "orphan",
    "relinked",
    "repaired",
    "requeued",
    "failed",
    "scopes_checked",
)


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    from agentmem.services.reconcile import ReconcileRequest, run_budget  # after the cold start

    request = ReconcileRequest.from_event(event)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    settings = container.settings
    report = container.reconciler.run(
        now=container.clock.now(),
        budget=run_budget(
            settings.reconcile_budget_s,
            settings.reconcile_margin_s,
            remaining() / 1000 if callable(remaining) else None,
        ),
        segment=request.segment,
        segments=request.segments,
        dirty_first=settings.reconcile_dirty_first,
    )
    for name in COUNTS:
        metrics.add_metric(name=f"Reconcile_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    metrics.add_metric(
        name="Reconcile_pass_completed", unit=MetricUnit.Count, value=int(report.pass_completed)
    )
    logger.info(
        "reconciliation finished", extra={k: v for k, v in report.to_dict().items() if k != "repair_keys"}
    )
    return report.to_dict()
