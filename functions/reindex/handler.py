"""reindex λ (invoked by the operator): re-embed every active memory with the function's embedder
(the new model) while the old vectors keep serving, then switch (docs/aws.md, "Changing the
embedding model").

The event names the step: ``{"step": "stage" | "switch" | "status"}`` (none: status). A run
lasts ``reindex_budget_s``, cut to what the invocation has left minus ``reindex_margin_s``,
saves its place, and answers with the progress and the next step; invoke it again until it says
so. A bad step, or a switch before a whole stage pass, answers ``{"error": ...}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.coldstart import LazyTracer, default_container
from agentmem.errors import ConfigurationError, ValidationFailed, VersionConflict

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-reindex")
tracer = LazyTracer(service="agentmem-reindex")
metrics = Metrics(namespace="agentmem", service="reindex")
COUNTS = ("scopes", "staged", "reused", "caught_up", "switched", "conflicts", "swept")


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    from agentmem.services.reconcile import run_budget
    from agentmem.services.reindex import ReindexRequest

    if container.reindexer is None:
        raise ConfigurationError("this backend keeps no reindex journal (AGENTMEM_BACKEND=aws has one)")
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    settings = container.settings
    try:
        report = container.reindexer.run(
            ReindexRequest.from_event(event or {}).step,
            budget=run_budget(
                settings.reindex_budget_s,
                settings.reindex_margin_s,
                remaining() / 1000 if callable(remaining) else None,
            ),
        )
    except (ValidationFailed, VersionConflict) as exc:
        logger.warning("reindex refused", extra={"error": type(exc).__name__})
        return {"error": str(exc), "details": exc.details}
    for name in COUNTS:
        metrics.add_metric(name=f"Reindex_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    logger.info("reindex finished", extra={k: v for k, v in report.to_dict().items() if k != "progress"})
    return report.to_dict()
