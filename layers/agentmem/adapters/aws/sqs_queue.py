"""SQS :class:`~agentmem.ports.TurnQueue`: where the API hands turns for asynchronous ingestion.

Bodies are :meth:`agentmem.messages.TurnMessage.to_body`. Turns go out with ``SendMessageBatch``,
at most 10 entries and 256 KiB per call (a turn whose body alone exceeds 256 KiB is refused before
anything is sent). FIFO queues (``.fifo`` URL) get ``MessageGroupId = scope key`` (per-user order)
and ``MessageDeduplicationId`` = a hash of scope and message id; standard queues get neither and
rely on the ingest function's idempotency.

Entries SQS reports as failed are re-sent once when the failure is the service's
(``SenderFault`` false); what still fails raises :class:`~agentmem.errors.StoreUnavailable` naming
the failed and the accepted message ids — a partial send is never reported as success. A queue
over its limit (``OverLimit``) raises :class:`~agentmem.errors.QueueFull`; throttling and 5xx
raise StoreUnavailable (after the SDK's own retries).

With ``receipts`` (:class:`~agentmem.adapters.aws.turn_receipts.DynamoTurnReceipts`) every turn
sent is also recorded, so :meth:`SqsTurnQueue.queued_at` can say a turn is queued
(:class:`~agentmem.ports.QueuedTurns`); an erase (:meth:`SqsTurnQueue.purge_scope`) removes the
scope's receipts. The ingest DLQ is :mod:`agentmem.adapters.aws.sqs_dead_letters`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client, error_code, translate
from agentmem.domain.models import Scope
from agentmem.errors import AgentMemError, QueueFull, StoreUnavailable, ValidationFailed
from agentmem.messages import TurnMessage
from agentmem.wire.sqs_batches import OVER_LIMIT_CODES, send_all

if TYPE_CHECKING:
    from agentmem.adapters.aws.turn_receipts import DynamoTurnReceipts

MAX_BATCH_BYTES = 256 * 1024


def deduplication_id(turn: TurnMessage) -> str:
    return hashlib.sha256(f"{turn.scope.key}\x00{turn.message_id}".encode()).hexdigest()


class SqsTurnQueue:
    """:class:`agentmem.ports.TurnQueue` on one SQS queue (standard or FIFO)."""

    def __init__(
        self,
        queue_url: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        receipts: DynamoTurnReceipts | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._url = queue_url
        self._client = client or LazyClient(lambda: boto_client("sqs", region=region))
        self.fifo = queue_url.endswith(".fifo")
        self._receipts = receipts
        self._clock = clock or (lambda: datetime.now(UTC))

    @property
    def url(self) -> str:
        return self._url

    def _entry(self, index: int, turn: TurnMessage) -> dict[str, Any]:
        entry: dict[str, Any] = {"Id": str(index), "MessageBody": turn.to_body()}
        if len(entry["MessageBody"].encode("utf-8")) > MAX_BATCH_BYTES:
            raise ValidationFailed(
                "turn too large for one SQS message",
                details={"message_id": turn.message_id, "limit": MAX_BATCH_BYTES},
            )
        if self.fifo:
            entry["MessageGroupId"] = turn.scope.key
            entry["MessageDeduplicationId"] = deduplication_id(turn)
        return entry

    def _send_batch(self, entries: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
        """(ids SQS accepted, failure entries)."""
        try:
            result = self._client.get().send_message_batch(QueueUrl=self._url, Entries=entries)
        except ClientError as exc:
            if error_code(exc) in OVER_LIMIT_CODES:
                raise QueueFull("ingest queue is over its limit", details={"code": error_code(exc)}) from exc
            raise translate(exc, store="sqs", operation="send_message_batch") from exc
        except BotoCoreError as exc:
            raise translate(exc, store="sqs", operation="send_message_batch") from exc
        return [str(s["Id"]) for s in result.get("Successful", [])], list(result.get("Failed", []))

    def send(self, turns: Sequence[TurnMessage]) -> list[str]:
        entries = [self._entry(i, t) for i, t in enumerate(turns)]
        sent: list[str] = []
        try:
            failed = send_all(entries, self._send_batch, MAX_BATCH_BYTES, sent)
        except AgentMemError as exc:
            if sent:  # some batches went out before this one failed: say which
                exc.details.setdefault("sent", [turns[int(i)].message_id for i in sent])
            raise
        if failed:
            raise StoreUnavailable(
                f"{len(failed)} of {len(turns)} turns were not enqueued",
                details={
                    "store": "sqs",
                    "failed": [
                        {
                            "message_id": turns[int(f["Id"])].message_id,
                            "code": f.get("Code"),
                            "sender_fault": bool(f.get("SenderFault")),
                        }
                        for f in failed
                    ],
                    "sent": [turns[int(i)].message_id for i in sent],
                },
            )
        if self._receipts is not None:
            self._receipts.record([(t.scope, t.message_id) for t in turns], self._clock())
        return [t.message_id for t in turns]

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        """When this turn was last sent (its receipt); None without receipts or when never sent."""
        return None if self._receipts is None else self._receipts.queued_at(scope, message_id)

    def purge_scope(self, scope: Scope) -> int:
        """0: SQS cannot delete one user's messages selectively (``PurgeQueue`` is the whole
        queue). The erase barrier drops them at ingest instead, each with an ``erased`` audit
        event in the user's scope (docs/data-at-rest.md). The scope's receipts are removed."""
        if self._receipts is not None:
            self._receipts.erase_scope(scope)
        return 0
