"""For a chat service that runs next to agentmem in AWS: send finished turns straight to the
ingest queue instead of through ``POST /v1/turns`` (``pip install agentmem-client[sqs]``).

Each turn is a :class:`agentmem_client.wire.messages.TurnMessage` and its body is that model's
own encoder, :meth:`~agentmem_client.wire.messages.TurnMessage.to_body` — the body the API itself
enqueues and the ingest function reads (the server's message class is the same wire model). The
wire rules are the ingest queue's: turns go out with ``SendMessageBatch``, at most 10 entries and
256 KiB per call; on a FIFO queue (``.fifo`` URL) ``MessageGroupId`` is the user's scope
(per-user order) and ``MessageDeduplicationId`` a hash of scope and message
id; the project's ingest queue is a standard queue, where the ingest function's idempotency on
``message_id`` makes a resend harmless. The message id is generated here when the caller gives
none, so the caller can retry a failed send with the same id.

Needs ``sqs:SendMessage`` on the queue. Entries SQS failed on its side are re-sent once; what
still fails raises :class:`~agentmem_client.errors.TurnSendError` naming the turns sent and not
sent (a partial send is never reported as success); a queue over its limit raises
:class:`~agentmem_client.errors.QueueFullError`; a turn over 256 KiB raises ``ValueError``
before anything is sent, and a turn that breaks the message model pydantic's
``ValidationError``. boto3 is imported on the first send (the ``sqs`` extra), never by
``import agentmem_client``; no httpx here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from agentmem_client.errors import QueueFullError, TurnSendError
from agentmem_client.models import new_message_id
from agentmem_client.wire.messages import MAX_BODY_BYTES, TurnMessage
from agentmem_client.wire.sqs_batches import OVER_LIMIT_CODES, send_all


def scope_key(turn: TurnMessage) -> str:
    """The user's scope as the server keys it (``Scope.key``; a test holds them equal): the FIFO
    message group."""
    return f"TENANT#{turn.tenant_id}#USER#{turn.user_id}"


def deduplication_id(turn: TurnMessage) -> str:
    return hashlib.sha256(f"{scope_key(turn)}\x00{turn.message_id}".encode()).hexdigest()


def _default_client(region: str | None) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError("TurnSender needs boto3: pip install 'agentmem-client[sqs]'") from exc
    config = Config(connect_timeout=3, read_timeout=10, retries={"mode": "standard", "max_attempts": 3})
    return boto3.client("sqs", region_name=region, config=config)


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
        self._url = queue_url
        self._client = sqs_client
        self._region = region
        self._now = now
        self.fifo = queue_url.endswith(".fifo")

    def _sqs(self) -> Any:
        if self._client is None:
            self._client = _default_client(self._region)
        return self._client

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

    def _entry(self, index: int, turn: TurnMessage) -> dict[str, Any]:
        entry: dict[str, Any] = {"Id": str(index), "MessageBody": turn.to_body()}
        if len(entry["MessageBody"].encode("utf-8")) > MAX_BODY_BYTES:
            raise ValueError(
                f"turn {turn.message_id} is larger than one SQS message ({MAX_BODY_BYTES} bytes)"
            )
        if self.fifo:
            entry["MessageGroupId"] = scope_key(turn)
            entry["MessageDeduplicationId"] = deduplication_id(turn)
        return entry

    def _send_batch(self, entries: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
        """(ids SQS accepted, failure entries)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            result = self._sqs().send_message_batch(QueueUrl=self._url, Entries=entries)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in OVER_LIMIT_CODES:
                raise QueueFullError("ingest queue is over its limit", details={"code": code}) from exc
            raise TurnSendError(f"SQS refused the batch: {code}", details={"code": code}) from exc
        except BotoCoreError as exc:
            raise TurnSendError(f"SQS could not be reached: {type(exc).__name__}") from exc
        return [str(s["Id"]) for s in result.get("Successful", [])], list(result.get("Failed", []))

    def send(self, turns: Sequence[TurnMessage]) -> list[str]:
        """Send ``turns`` (batched 10 per call); returns their message ids, in order."""
        if not turns:
            return []
        entries = [self._entry(i, t) for i, t in enumerate(turns)]
        sent: list[str] = []
        try:
            failed = send_all(entries, self._send_batch, MAX_BODY_BYTES, sent)
        except TurnSendError as exc:
            if sent:  # some batches went out before this one failed: say which
                exc.details.setdefault("sent", [turns[int(i)].message_id for i in sent])
            raise
        if failed:
            raise TurnSendError(
                f"{len(failed)} of {len(turns)} turns were not enqueued",
                details={
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
        return [t.message_id for t in turns]

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
