"""ingest λ (SQS): each message is one finished turn. Partial batch failures: a transient error
fails only its message, which SQS redelivers and finally dead-letters; malformed messages are
rejected and audited by the service, never retried; so are turns of a user erased after they
were sent (``SentTimestamp`` against the user's erase barrier); so are, for redelivery, the
records left when the invocation is within ``ingest_margin_s`` of its timeout."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from agentmem.coldstart import LazyTracer, default_container

if TYPE_CHECKING:
    from agentmem.bootstrap import Container

logger = Logger(service="agentmem-ingest")
tracer = LazyTracer(service="agentmem-ingest")
metrics = Metrics(namespace="agentmem", service="ingest")
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def sent_at(record: SQSRecord) -> datetime | None:
    """When SQS accepted the message (``SentTimestamp``, epoch ms); None when absent or garbled."""
    try:
        millis = int(record.attributes.sent_timestamp)
    except (KeyError, TypeError, ValueError):
        return None
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


class OutOfTime(Exception):
    """Too close to the timeout to start a record: it fails alone, not the whole batch."""


def record_handler(record: SQSRecord, container: Container, context: Any = None) -> None:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if callable(remaining) and remaining() / 1000 < container.settings.ingest_margin_s:
        metrics.add_metric(name="TurnsDeferred", unit=MetricUnit.Count, value=1)
        raise OutOfTime(record.message_id)
    outcome = container.ingest.handle(
        record.body, now=container.clock.now(), queue_message_id=record.message_id, sent_at=sent_at(record)
    )
    metrics.add_metric(name=f"Turns_{outcome.status}", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="MemoriesWritten", unit=MetricUnit.Count, value=len(outcome.written))
    metrics.add_metric(name="MemoriesSuperseded", unit=MetricUnit.Count, value=len(outcome.superseded))
    if outcome.redacted_kinds:
        metrics.add_metric(name="TurnsRedacted", unit=MetricUnit.Count, value=1)
    if outcome.llm_calls:  # only where a model is configured and was asked
        metrics.add_metric(name="LlmCalls", unit=MetricUnit.Count, value=outcome.llm_calls)
        metrics.add_metric(name="LlmFallbacks", unit=MetricUnit.Count, value=outcome.llm_fallbacks)
        metrics.add_metric(name="LlmFacts", unit=MetricUnit.Count, value=outcome.llm_facts)
    extra = {"message_id": outcome.message_id, "status": outcome.status, "dropped": outcome.dropped}
    logger.info("turn processed", extra={**extra, "written": len(outcome.written)})


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    return handle(event, context, container or default_container())


def handle(event: dict[str, Any], context: Any, container: Container) -> dict[str, Any]:
    return process_partial_response(
        event=event,
        record_handler=partial(record_handler, container=container, context=context),
        processor=processor,
        context=context,
    )
