"""For a chat service that runs next to agentmem in AWS: send finished turns straight to the
ingest queue instead of through ``POST /v1/turns``.

Each turn is a :class:`agentmem.messages.TurnMessage` — the body the API itself enqueues and the
ingest function reads — sent by the project's own queue adapter
(:class:`~agentmem.adapters.aws.sqs_queue.SqsTurnQueue`), so there is one implementation of the
wire rules: on a FIFO queue (``.fifo`` URL) ``MessageGroupId`` is the user's scope (per-user
order) and ``MessageDeduplicationId`` a hash of scope and message id; the project's ingest queue
is a standard queue (``infra_cdk/agentmem_infra/data.py``), where the ingest function's
idempotency on ``message_id`` makes a resend harmless. The message id is generated here when the
caller gives none, so the caller can retry a failed send with the same id.

Needs ``sqs:SendMessage`` on the queue. Raises :class:`~agentmem.errors.QueueFull` when the
queue is over its limit, :class:`~agentmem.errors.StoreUnavailable` (naming the turns sent and
not sent) when SQS fails, :class:`~agentmem.errors.ValidationFailed` for a turn over 256 KiB;
a turn that breaks the message model raises pydantic's ``ValidationError`` before anything is
sent. No httpx here: this module does not need the client extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from agentmem.adapters.aws.errors import LazyClient, boto_client
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.client.models import new_message_id
from agentmem.messages import TurnMessage


class TurnSender:
    """Sends turns to one ingest queue. ``sqs_client``: a boto3 SQS client of your own (else one
    is built on first send, with bounded timeouts and the SDK's standard retries)."""

    def __init__(
        self,
        queue_url: str,
        *,
        sqs_client: Any = None,
        region: str | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        client: LazyClient[Any] = LazyClient(
            (lambda: sqs_client) if sqs_client is not None else (lambda: boto_client("sqs", region=region))
        )
        self._queue = SqsTurnQueue(queue_url, client=client)
        self._now = now

    @property
    def fifo(self) -> bool:
        return self._queue.fifo

    def turn(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        message_id: str | None = None,
        speaker: str | None = None,
        trace_id: str | None = None,
    ) -> TurnMessage:
        """The message of one finished turn (validated; ``at`` defaults to now, ``message_id``
        to a new id)."""
        return TurnMessage(
            tenant_id=tenant_id,
            user_id=user_id,
            session_id=session_id,
            user=user,
            assistant=assistant,
            at=at or self._now(),
            message_id=message_id or new_message_id(),
            speaker=speaker,
            trace_id=trace_id,
        )

    def send(self, turns: Sequence[TurnMessage]) -> list[str]:
        """Send ``turns`` (batched 10 per call); returns their message ids, in order."""
        return self._queue.send(list(turns)) if turns else []

    def send_turn(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        message_id: str | None = None,
        speaker: str | None = None,
        trace_id: str | None = None,
    ) -> str:
        """Build (:meth:`turn`) and send one turn; returns its message id."""
        message = self.turn(
            tenant_id,
            user_id,
            session_id,
            user,
            assistant,
            at=at,
            message_id=message_id,
            speaker=speaker,
            trace_id=trace_id,
        )
        return self.send([message])[0]
