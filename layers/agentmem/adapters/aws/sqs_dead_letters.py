"""The ingest DLQ (SQS) as a :class:`~agentmem.ports.DeadLetterQueue`.

SQS has no "list": :meth:`SqsDeadLetterQueue.dead_letters_of` *receives* the DLQ (up to
:data:`MAX_SCAN` messages, each hidden for :data:`LIST_VISIBILITY_S` so one scan never sees a
message twice), keeps the messages whose body names the scope, and makes every one visible again
at once (``ChangeMessageVisibility`` 0) — nothing is deleted. Pages are sorted by (failed at,
message id) and the cursor is the last entry's key. Two scans at the same moment each see part
of the queue (the other's messages are hidden for a few seconds).

:meth:`~SqsDeadLetterQueue.redrive` sends each chosen body back to the ingest queue through
:class:`~agentmem.adapters.aws.sqs_queue.SqsTurnQueue` (FIFO attributes and receipts as for any
turn) and only then deletes it from the DLQ; a body that is not a valid turn stays.

SQS keeps no failure reason nor failure time: ``reason`` says the receive limit was reached,
``attempts`` is the redrive policy's ``maxReceiveCount`` (``max_receives``) and ``failed_at`` is
the message's ``SentTimestamp`` (on a standard queue, when the turn was first sent).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client, translate
from agentmem.adapters.aws.sqs_queue import SqsTurnQueue
from agentmem.domain.models import Scope
from agentmem.errors import AgentMemError, ValidationFailed
from agentmem.messages import TurnMessage, scope_of_body
from agentmem.port_types import DeadLetterEntry, DeadLetterPage

log = logging.getLogger(__name__)

MAX_SCAN = 1000  # DLQ messages one listing receives at most
LIST_VISIBILITY_S = 30  # how long a scan hides what it received (given back at the end)
REASON = "receive limit reached (SQS redrive policy)"


@dataclass(frozen=True, slots=True)
class _Received:
    entry: DeadLetterEntry
    body: str
    receipt_handle: str


def _cursor(entry: DeadLetterEntry) -> str:
    key = json.dumps([entry.failed_at.isoformat(), entry.message_id])
    return base64.urlsafe_b64encode(key.encode()).decode()


def _after(cursor: str) -> tuple[datetime, str]:
    try:
        at, message_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return datetime.fromisoformat(at), str(message_id)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc


class SqsDeadLetterQueue:
    """:class:`agentmem.ports.DeadLetterQueue` on the ingest DLQ, redriving to ``ingest``."""

    def __init__(
        self,
        dlq_url: str,
        ingest: SqsTurnQueue,
        *,
        max_receives: int = 5,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        empty_wait_s: int = 1,
    ) -> None:
        """``empty_wait_s``: the long poll that confirms the DLQ is drained (a short poll samples
        only some SQS servers and can answer empty while messages remain)."""
        self._url = dlq_url
        self._ingest = ingest
        self._max_receives = max_receives
        self._client = client or LazyClient(lambda: boto_client("sqs", region=region))
        self._empty_wait_s = empty_wait_s

    def _sqs(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            result: dict[str, Any] = getattr(self._client.get(), operation)(QueueUrl=self._url, **kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, store="sqs", operation=operation) from exc
        return result

    def _entry(self, message: dict[str, Any]) -> DeadLetterEntry:
        body = str(message.get("Body", ""))
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        data = data if isinstance(data, dict) else {}
        sent_ms = int((message.get("Attributes") or {}).get("SentTimestamp", 0))
        session = data.get("session_id")
        return DeadLetterEntry(
            message_id=str(data.get("message_id") or message.get("MessageId", "")),
            scope=scope_of_body(body),
            session_id=session if isinstance(session, str) else None,
            reason=REASON,
            attempts=self._max_receives,
            failed_at=datetime.fromtimestamp(sent_ms / 1000, UTC),
        )

    def _scan(self, scope: Scope | None, handles: list[str], until: str | None = None) -> list[_Received]:
        """Receive up to MAX_SCAN messages (hidden meanwhile; every receipt handle is appended
        to ``handles`` for :meth:`_give_back`); the scope's, sorted. ``until``: stop once the
        dead letter of this message id is found."""
        received: list[_Received] = []
        wait = 0
        while len(handles) < MAX_SCAN and not (until and any(r.entry.message_id == until for r in received)):
            batch = self._sqs(
                "receive_message",
                MaxNumberOfMessages=10,
                VisibilityTimeout=LIST_VISIBILITY_S,
                WaitTimeSeconds=wait,
                AttributeNames=["All"],
            ).get("Messages", [])
            if not batch:
                if wait or not self._empty_wait_s:
                    break
                wait = self._empty_wait_s  # confirm with a long poll before calling it empty
                continue
            for message in batch:
                handles.append(str(message["ReceiptHandle"]))
                entry = self._entry(message)
                if scope is None or entry.scope == scope:
                    received.append(_Received(entry, str(message["Body"]), str(message["ReceiptHandle"])))
        received.sort(key=lambda r: (r.entry.failed_at, r.entry.message_id))
        return received

    def _give_back(self, scanned: Sequence[str], deleted: frozenset[str] = frozenset()) -> None:
        """Make every scanned message visible again (except those deleted)."""
        handles = [h for h in scanned if h not in deleted]
        for start in range(0, len(handles), 10):
            entries = [
                {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 0}
                for i, h in enumerate(handles[start : start + 10])
            ]
            try:
                self._sqs("change_message_visibility_batch", Entries=entries)
            except AgentMemError as exc:  # they reappear after LIST_VISIBILITY_S anyway
                log.warning("dlq.give_back_failed", extra={"error": exc.code})

    def dead_letters_of(
        self, scope: Scope | None, limit: int = 50, cursor: str | None = None
    ) -> DeadLetterPage:
        after = _after(cursor) if cursor is not None else None
        handles: list[str] = []
        try:
            entries = [r.entry for r in self._scan(scope, handles)]
        finally:
            self._give_back(handles)
        if after is not None:
            entries = [e for e in entries if (e.failed_at, e.message_id) > after]
        page = entries[: max(1, limit)]
        return DeadLetterPage(page, _cursor(page[-1]) if len(entries) > len(page) else None)

    def dead_letter(self, scope: Scope, message_id: str) -> DeadLetterEntry | None:
        handles: list[str] = []
        try:
            found = [
                r.entry for r in self._scan(scope, handles, message_id) if r.entry.message_id == message_id
            ]
        finally:
            self._give_back(handles)
        return found[-1] if found else None

    def redrive(self, scope: Scope | None, message_ids: Sequence[str] | None = None) -> list[str]:
        wanted = None if message_ids is None else set(message_ids)
        deleted: set[str] = set()
        redriven: list[str] = []
        handles: list[str] = []
        try:
            for r in self._scan(scope, handles):
                if wanted is not None and r.entry.message_id not in wanted:
                    continue
                try:
                    turn = TurnMessage.from_body(r.body)
                except ValidationFailed:
                    continue  # not a turn: ingest would only reject it
                self._ingest.send([turn])  # sent first: a failure here leaves it in the DLQ
                self._sqs("delete_message", ReceiptHandle=r.receipt_handle)
                deleted.add(r.receipt_handle)
                redriven.append(r.entry.message_id)
        finally:
            self._give_back(handles, frozenset(deleted))
        return redriven
