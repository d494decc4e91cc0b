"""The response models of the history, turn status and conflict routes, as the client names
them: re-exports of the API's own models (every result of the client is the model the API
serves), plus :func:`new_message_id`, the turn id both senders (HTTP and SQS) make."""

from __future__ import annotations

import uuid
from typing import Literal

from agentmem_client.wire.conflicts import ConflictDecisionIn as ResolveConflictIn
from agentmem_client.wire.conflicts import ConflictOut
from agentmem_client.wire.conflicts import ConflictsOut as ConflictPage
from agentmem_client.wire.history import HistoryEntryOut, HistoryOut
from agentmem_client.wire.operator import TurnStatusOut

TurnState = Literal["queued", "processed", "rejected", "quarantined", "dead_lettered"]
ConflictState = Literal["pending", "confirmed", "rejected"]
Decision = Literal["confirm", "reject"]

__all__ = [
    "ConflictOut",
    "ConflictPage",
    "ConflictState",
    "Decision",
    "HistoryEntryOut",
    "HistoryOut",
    "ResolveConflictIn",
    "TurnState",
    "TurnStatusOut",
    "new_message_id",
]


def new_message_id() -> str:
    """A turn's idempotency key, made by the client so a resent turn is the same turn (the
    format of the ids the API generates)."""
    return f"msg-{uuid.uuid4().hex}"
