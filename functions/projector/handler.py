"""projector λ (DynamoDB Streams, NEW_AND_OLD_IMAGES): keep the search index and the graph in
step with the source of truth. Partial batch failures; replays and reordering are harmless."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from agentmem.lazy import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-projector")
tracer = LazyTracer(service="agentmem-projector")
metrics = Metrics(namespace="agentmem", service="projector")
processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


def record_handler(record: DynamoDBRecord, container: Container) -> None:
    # The DynamoDB codec (and its SDK and numpy) is imported with the first record, like the container.
    from agentmem.adapters.codec import change_from_stream_record

    change = change_from_stream_record(record.raw_event)
    if change is None:  # not a memory item (L0 log, audit, idempotency...)
        return
    report = container.projector.apply(change, now=container.clock.now())
    for name, value in (
        ("ProjectionsApplied", report.applied),
        ("ProjectionsStale", report.stale),
        ("ProjectionConflicts", report.conflicts),
        ("ProjectionsDeleted", report.deleted),
    ):
        if value:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    return process_partial_response(
        event=event,
        record_handler=partial(record_handler, container=container),
        processor=processor,
        context=context,
    )
