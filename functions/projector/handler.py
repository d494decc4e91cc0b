"""projector λ (DynamoDB Streams, NEW_AND_OLD_IMAGES): keep the search index and the graph in step
with the source of truth and announce each change (docs/events.md: the stream is the events' outbox).
Partial batch failures; replays are harmless. Index writes go first in one bulk request, then each record."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from agentmem.coldstart import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container
    from agentmem.ports import Change
    from agentmem.services.projector import Decision

    Prepared = Mapping[str, tuple[Change, Decision | None]]  # by sequence number

logger = Logger(service="agentmem-projector")
tracer = LazyTracer(service="agentmem-projector")
metrics = Metrics(namespace="agentmem", service="projector")
processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


def record_handler(record: DynamoDBRecord, container: Container, decisions: Prepared | None = None) -> None:
    # The DynamoDB codec (and its SDK and numpy) is imported with the first record, like the container.
    from agentmem.adapters.codec import change_from_stream_record

    prepared = (decisions or {}).get(str(record.raw_event.get("dynamodb", {}).get("SequenceNumber")))
    change, decision = prepared or (change_from_stream_record(record.raw_event), None)
    if change is None:  # not a memory item (L0 log, audit, idempotency...)
        return
    report = container.projector.apply(change, now=container.clock.now(), decision=decision)
    container.events.change(change, container.clock.now())
    counts = (report.applied, report.stale, report.conflicts, report.deleted)
    names = ("ProjectionsApplied", "ProjectionsStale", "ProjectionConflicts", "ProjectionsDeleted")
    for name, value in zip(names, counts, strict=True):
        if value:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def prepare(event: dict[str, Any], container: Container) -> Prepared:
    """Each change, decoded once, and its decision (a record that does not decode fails alone)."""
    from agentmem.adapters.codec import change_from_stream_record

    changes: dict[str, Change] = {}
    for raw in event.get("Records") or []:
        try:
            change = change_from_stream_record(raw)
        except Exception:
            continue
        if change is not None:
            changes[str(raw.get("dynamodb", {}).get("SequenceNumber"))] = change
    if not changes:
        return {}
    decided = container.projector.prepare(list(changes.values()))
    return {seq: (change, decision) for (seq, change), decision in zip(changes.items(), decided, strict=True)}


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    return process_partial_response(
        event=event,
        record_handler=partial(record_handler, container=container, decisions=prepare(event, container)),
        processor=processor,
        context=context,
    )
