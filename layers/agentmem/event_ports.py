"""The ports of the event sources: the turn queue the API writes and the ingest λ consumes (SQS;
a bounded local queue), its dead letters, and the change feed the projector reads (DynamoDB
Streams; the local outbox). Re-exported by :mod:`agentmem.ports`, where services and adapters
import them from."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentmem.domain.models import Scope
from agentmem.port_types import DeadLetterEntry, DeadLetterPage

if TYPE_CHECKING:
    from agentmem.messages import TurnMessage


class TurnQueue(Protocol):
    """Where the API hands turns for asynchronous ingestion (SQS; a bounded local queue)."""

    def send(self, turns: Sequence[TurnMessage]) -> builtins.list[str]:
        """Enqueue; returns the message ids. Raises QueueFull (nothing enqueued) at capacity,
        the queue's or the tenant's share of it."""

    def purge_scope(self, scope: Scope) -> int:
        """Drop the scope's queued, in-flight and dead-lettered turns (an erase); returns how many.
        A queue that cannot select by scope (SQS) returns 0: the erase barrier drops those turns
        at ingest instead."""


@runtime_checkable
class QueuedTurns(Protocol):
    """A turn queue that knows which turns it accepted (``GET /v1/turns/{id}``): the embedded
    queue reads its table; SQS keeps a receipt per sent turn (:mod:`.adapters.aws.turn_receipts`)."""

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        """When the queue last accepted this turn of ``scope``; None when it knows of none (never
        sent, or acknowledged where the queue forgets acknowledged turns)."""


@runtime_checkable
class DeadLetterQueue(Protocol):
    """Turns the ingest queue gave up on (the local dead-letter table; the SQS ingest DLQ), per
    scope; ``scope=None`` is every scope (operator tooling; the API passes the caller's)."""

    def dead_letters_of(
        self, scope: Scope | None, limit: int = 50, cursor: str | None = None
    ) -> DeadLetterPage:
        """Oldest failure first, paginated by an opaque cursor (ValidationFailed for a bad one)."""

    def dead_letter(self, scope: Scope, message_id: str) -> DeadLetterEntry | None:
        """The scope's dead letter of this turn, or None."""

    def redrive(self, scope: Scope | None, message_ids: Sequence[str] | None = None) -> builtins.list[str]:
        """Move dead letters back to the ingest queue (``message_ids`` None: all of ``scope``);
        the ids redriven (unknown ones left out). Ingest drops an erased user's again."""


class ReceivedMessage(Protocol):
    """One message handed out by a :class:`QueueConsumer` (an SQS ``ReceiveMessage`` entry)."""

    @property
    def message_id(self) -> str: ...
    @property
    def receipt_handle(self) -> str: ...
    @property
    def body(self) -> str:
        """The SQS body of one turn (:class:`agentmem.messages.TurnMessage` JSON)."""

    @property
    def receive_count(self) -> int: ...
    @property
    def sent_at(self) -> datetime: ...


@runtime_checkable
class QueueConsumer(Protocol):
    """The consumer side of the turn queue, for an event source that plays SQS's part (the laptop
    emulator). In AWS, Lambda's event source mapping consumes SQS and nothing calls this."""

    def receive(
        self, max_messages: int = 10, visibility_timeout_s: float = 30.0
    ) -> Sequence[ReceivedMessage]:
        """Up to ``max_messages`` visible messages, hidden for ``visibility_timeout_s``; a message
        received more often than the queue allows is dead-lettered instead of returned."""

    def delete(self, receipt_handle: str) -> bool:
        """Acknowledge (processed); False when the handle is unknown or expired."""

    def delete_batch(self, receipt_handles: Sequence[str]) -> int:
        """Acknowledge several at once (``DeleteMessageBatch``); returns how many were valid."""

    def release(self, receipt_handle: str, delay_s: float = 0.0, error: str | None = None) -> bool:
        """Make the message visible again after ``delay_s`` (it failed; ``error`` says why)."""


class OutboxChange(Protocol):
    """One change of the source of truth in the shape a DynamoDB stream record carries it."""

    @property
    def seq(self) -> int: ...
    @property
    def event_name(self) -> str:
        """INSERT | MODIFY | REMOVE"""

    @property
    def pk(self) -> str: ...
    @property
    def sk(self) -> str: ...
    @property
    def new_image(self) -> dict[str, Any] | None: ...
    @property
    def old_image(self) -> dict[str, Any] | None: ...
    @property
    def created_at(self) -> datetime: ...


@runtime_checkable
class ChangeFeed(Protocol):
    """A store's change stream read with named checkpoints, for an event source that plays
    DynamoDB Streams' part (the laptop emulator reading the SQLite outbox). In AWS, Lambda's
    event source mapping reads the stream and nothing calls this."""

    def read_outbox(self, after_seq: int, limit: int) -> Sequence[OutboxChange]:
        """Changes with ``seq > after_seq``, oldest first."""

    def outbox_checkpoint(self, name: str) -> int:
        """The last seq reader ``name`` finished (0 if it never ran)."""

    def set_outbox_checkpoint(self, name: str, seq: int) -> None:
        """Reader ``name`` finished every change up to ``seq``."""


PROJECTOR_CHECKPOINT = "projector"
"""The change feed's reader that applies changes to both projections (search index and graph):
the local stream reader's checkpoint, and the one the outbox is pruned behind."""


@dataclass(frozen=True, slots=True)
class BacklogState:
    """What waits in a queue or a stream: how many items, and when the oldest was accepted."""

    waiting: int
    oldest_at: datetime | None


@runtime_checkable
class Backlog(Protocol):
    """A turn queue that can say what waits in it (``/v1/health``; the embedded queue)."""

    def backlog(self) -> BacklogState:
        """Turns not yet acknowledged (queued or in flight; not the dead letters)."""


@runtime_checkable
class StreamBacklog(Protocol):
    """A change feed that can say what its reader has not processed (the embedded outbox)."""

    def outbox_backlog(self, name: str) -> BacklogState:
        """Changes after reader ``name``'s checkpoint."""
