"""The API's answers made from the services' results: a domain record, a scored memory, a pending
conflict, a turn report, a dead letter, into the wire models (:mod:`agentmem.wire`), and a
session-state body into the domain's :class:`~agentmem.domain.runtime_state.RuntimeState`.

On the API's side so that the wire package imports no service or domain type beyond its shared
vocabulary (the light client ships it alone)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmem.domain.runtime_state import InvalidRuntimeState, RuntimeState
from agentmem.errors import ValidationFailed
from agentmem.wire.conflicts import ConflictOut
from agentmem.wire.history import HistoryEntryOut
from agentmem.wire.models import MemoryOut, SessionStateIn
from agentmem.wire.operator import DeadLetterOut, TurnStatusOut

if TYPE_CHECKING:  # the services (and the port types) are loaded with the container, not by the API's import
    from agentmem.domain.models import MemoryRecord, ScoredMemory
    from agentmem.domain.pending import PendingConflict
    from agentmem.port_types import DeadLetterEntry
    from agentmem.services.turns import TurnReport


def memory_out(record: MemoryRecord, scored: ScoredMemory | None = None) -> MemoryOut:
    return MemoryOut(
        id=record.memory_id,
        content=record.content,
        category=record.category.value,
        layer=record.layer.value,
        key=record.key,
        value=record.value,
        tags=list(record.tags),
        importance=round(record.importance, 4),
        importance_source=record.importance_source.value,
        confidence=record.confidence.value,
        source=record.source.value,
        source_refs=record.source_refs.to_dict(),
        version=record.version,
        status=record.status.value,
        pinned=record.pinned,
        created_at=record.created_at,
        updated_at=record.updated_at,
        valid_from=record.valid_from,
        valid_to=record.valid_to,
        supersedes=list(record.supersedes),
        superseded_by=record.superseded_by,
        score=round(scored.score, 4) if scored else None,
        score_components={k: round(v, 4) for k, v in scored.components.items()} if scored else None,
        channels=list(scored.channels) if scored else None,
    )


def history_entry(record: MemoryRecord) -> HistoryEntryOut:
    return HistoryEntryOut(
        memory_id=record.memory_id,
        content=record.content,
        category=record.category.value,
        layer=record.layer.value,
        status=record.status.value,
        valid_from=record.valid_from,
        valid_to=record.valid_to,
        created_at=record.created_at,
        updated_at=record.updated_at,
        supersedes=list(record.supersedes),
        superseded_by=record.superseded_by,
        source=record.source.value,
        source_refs=record.source_refs.to_dict(),
        confidence=record.confidence.value,
        pinned=record.pinned,
        version=record.version,
    )


def conflict_out(conflict: PendingConflict) -> ConflictOut:
    return ConflictOut(
        conflict_id=conflict.conflict_id,
        memory_id=conflict.memory_id,
        existing=conflict.existing,
        proposed=conflict.proposed,
        status=conflict.status.value,
        created_at=conflict.created_at,
        resolved_at=conflict.resolved_at,
        message_id=conflict.message_id,
        new_memory_id=conflict.new_memory_id,
    )


def turn_status(report: TurnReport) -> TurnStatusOut:
    return TurnStatusOut(
        message_id=report.message_id,
        status=report.status.value,
        reason=report.reason,
        memory_ids=list(report.memory_ids),
        updated_at=report.updated_at,
    )


def dead_letter(entry: DeadLetterEntry) -> DeadLetterOut:
    return DeadLetterOut(
        message_id=entry.message_id,
        session_id=entry.session_id,
        reason=entry.reason,
        attempts=entry.attempts,
        failed_at=entry.failed_at,
    )


def session_state(body: SessionStateIn) -> RuntimeState:
    """The domain's state of a validated body (``ttl_hours`` is the route's, not the state's)."""
    data = body.model_dump(exclude={"ttl_hours"}, exclude_unset=True, exclude_none=True)
    try:
        return RuntimeState.from_dict(data)
    except InvalidRuntimeState as exc:  # the same models validated the body: not expected
        raise ValidationFailed(exc.message, details=exc.details) from exc
