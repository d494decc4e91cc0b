"""The stored form of a :class:`~agentmem.domain.pending.PendingConflict`, shared by the SQLite
and DynamoDB conflict stores: one JSON document (the proposal as the DynamoDB JSON image the
record codec writes, so it round-trips exactly), and the one listing order and cursor of both.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from agentmem.adapters.codec import format_sortable, image_to_record, parse_datetime, record_to_json_image
from agentmem.domain.models import Scope
from agentmem.domain.pending import ConflictStatus, PendingConflict
from agentmem.errors import ValidationFailed

MAX_LISTED = 1000  # conflicts of one user read for a listing (they are few: one per contradiction)


def to_doc(conflict: PendingConflict) -> str:
    return json.dumps(
        {
            "conflict_id": conflict.conflict_id,
            "memory_id": conflict.memory_id,
            "existing": conflict.existing,
            "proposal": record_to_json_image(conflict.proposal),
            "created_at": format_sortable(conflict.created_at),
            "status": conflict.status.value,
            "resolved_at": format_sortable(conflict.resolved_at),
            "message_id": conflict.message_id,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def from_doc(scope: Scope, doc: str) -> PendingConflict:
    data: dict[str, Any] = json.loads(doc)
    return PendingConflict(
        scope=scope,
        conflict_id=str(data["conflict_id"]),
        memory_id=str(data["memory_id"]),
        existing=str(data["existing"]),
        proposal=image_to_record(json.loads(data["proposal"])),
        created_at=parse_datetime(data["created_at"]),
        status=ConflictStatus(data["status"]),
        resolved_at=parse_datetime(data["resolved_at"]) if data.get("resolved_at") else None,
        message_id=data.get("message_id"),
    )


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> str:
    """The position a cursor names; ValidationFailed (a 400) for anything else."""
    try:
        value = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc
    if "|" not in value:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
    return value


def _position(conflict: PendingConflict) -> str:
    return f"{format_sortable(conflict.created_at)}|{conflict.conflict_id}"


def page(
    conflicts: Iterable[PendingConflict], status: ConflictStatus | None, limit: int, cursor: str | None
) -> tuple[list[PendingConflict], str | None]:
    """Newest first (ties by id), of ``status`` when given, after ``cursor``; the next cursor."""
    after = decode_cursor(cursor) if cursor else None
    ordered = sorted(
        (c for c in conflicts if status is None or c.status is status), key=_position, reverse=True
    )
    if after is not None:
        ordered = [c for c in ordered if _position(c) < after]
    items = ordered[: max(0, limit)]
    more = len(ordered) > len(items) and items
    return items, encode_cursor(_position(items[-1])) if more else None
