"""Lambda's event sources over real AWS-API engines: an SQS poller (-> ``functions/ingest``) and a
DynamoDB Streams reader (-> ``functions/projector``), with the schedule timer of
:class:`~agentmem_dev.emulator.runner.LocalRunner`, whose threads and ``drain`` they reuse.

Used by ``agentmem smoke`` (moto in process, or the engines) and ``agentmem serve --backend
engines``. The semantics are the event source mappings': a batch item reported failed is made
visible again (SQS redelivers it, and its redrive policy dead-letters it after
``maxReceiveCount``); a failed stream record is retried, with everything after it in its shard
(Lambda does not skip ahead of a failure).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from agentmem_dev.dynamodb_stream import StreamReader
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.runner import BATCH, STREAM_BATCH, VISIBILITY_S, LocalRunner

log = logging.getLogger(__name__)


@dataclass
class AwsEventSources(LocalRunner):
    """``sqs`` / ``streams``: boto3 clients; ``queue_url`` the ingest queue; ``stream_arn`` the
    memory table's stream."""

    sqs: Any = None
    streams: Any = None
    queue_url: str = ""
    stream_arn: str = ""
    batches: list[dict[str, Any]] = field(default_factory=list)  # every ingest event sent
    stream_records: list[dict[str, Any]] = field(default_factory=list)  # every record projected
    failures: list[str] = field(default_factory=list)
    _retry: list[dict[str, Any]] = field(default_factory=list)
    _reader: StreamReader | None = None

    def __post_init__(self) -> None:  # no embedded queue or outbox to check for
        self._reader = StreamReader(self.streams, self.stream_arn)

    def pump_queue(self) -> int:
        with self._lock:
            messages = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=BATCH,
                AttributeNames=["All"],
                VisibilityTimeout=VISIBILITY_S,
            ).get("Messages", [])
            if not messages:
                return 0
            event = events.sqs_event_of(messages)
            self.batches.append(event)
            try:
                response = lambdas.invoke("ingest", event, self.container) or {}
                failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            except Exception:  # the whole invocation failed: every message is retried
                log.exception("engines.ingest_invocation_failed")
                failed = {m["MessageId"] for m in messages}
            for m in messages:
                if m["MessageId"] in failed:  # redelivered now rather than after the timeout
                    self.sqs.change_message_visibility(
                        QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                    )
                else:
                    self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
            self.stats.ingest_batches += 1
            self.stats.ingest_failures += len(failed)
            return len(messages)

    def pump_stream(self) -> int:
        assert self._reader is not None
        with self._lock:
            records = self._retry + self._reader.read(STREAM_BATCH)
            self._retry = []
            if not records:
                return 0
            moved = 0
            for start in range(0, len(records), STREAM_BATCH):
                batch = records[start : start + STREAM_BATCH]
                try:
                    response = lambdas.invoke("projector", {"Records": batch}, self.container) or {}
                    failed = {str(f["itemIdentifier"]) for f in response.get("batchItemFailures", [])}
                except Exception:
                    log.exception("engines.projector_invocation_failed")
                    failed = {str(batch[0]["dynamodb"]["SequenceNumber"])}
                sequences = [str(r["dynamodb"]["SequenceNumber"]) for r in batch]
                first = next((i for i, s in enumerate(sequences) if s in failed), None)
                done = batch if first is None else batch[:first]
                self.stream_records.extend(done)
                moved += len(done)
                if first is not None:
                    self._retry = batch[first:] + records[start + STREAM_BATCH :]
                    self.stats.stream_failures += len(failed)
                    break
            self.stats.stream_batches += 1
            return moved

    def drain(self, max_rounds: int = 200) -> None:
        """Queue and stream until both are empty; a record that keeps failing is reported."""
        for _ in range(max_rounds):
            if self.pump_queue() + self.pump_stream() == 0 and not self._retry:
                return
        self.failures.append(f"event sources not drained after {max_rounds} rounds")
