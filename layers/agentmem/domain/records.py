"""The memory records a turn writes, built from what the write path decided. Pure.

Ids come from the turn's message id (and the fact's position in the turn), so a redelivered turn
builds the very same records: the write path's idempotency rests on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentmem.domain import ids
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import Category, Layer, MemoryRecord, Source, SourceRefs, Status, Turn
from agentmem.domain.transience import short_term_until

QUARANTINE_CHARS = 500  # of the redacted message kept for the audit of a quarantined turn


def fact_record(
    turn: Turn,
    cand: Candidate,
    *,
    ordinal: int,
    category: Category,
    embedding: Iterable[float],
    embedding_model: str,
) -> MemoryRecord:
    """The ``ordinal``-th fact of ``turn`` as an active memory, valid from the turn's time; a
    state of a near time (:func:`~agentmem.domain.transience.short_term_until`) is short-term,
    valid until that time ends (``valid_to``; not ``expires_at``, which is DynamoDB's TTL and
    would delete it instead of letting it expire and stay)."""
    until = short_term_until(cand.content, turn.at)
    return MemoryRecord(
        scope=turn.scope,
        memory_id=ids.memory_id(turn.at, f"{turn.message_id}:{ordinal}"),
        content=cand.content,
        category=category,
        key=cand.key,
        value=cand.value,
        tags=cand.tags,
        importance=cand.importance,
        confidence=cand.confidence,
        source=cand.source,
        source_refs=SourceRefs(turn.session_id, (turn.message_id,), turn.trace_id),
        embedding=tuple(float(x) for x in embedding),
        embedding_model=embedding_model,
        created_at=turn.at,
        updated_at=turn.at,
        valid_from=turn.at,
        entities=cand.entities,
        layer=Layer.SHORT_TERM if until is not None else Layer.LONG_TERM,
        valid_to=until,
    )


def quarantine_record(turn: Turn, redacted_user: str, reasons: Sequence[str]) -> MemoryRecord:
    """The one record a quarantined turn leaves: the start of the redacted message, no
    importance, never recalled, with the injection reasons."""
    return MemoryRecord(
        scope=turn.scope,
        memory_id=ids.memory_id(turn.at, f"{turn.message_id}:quarantine"),
        content=redacted_user[:QUARANTINE_CHARS],
        category=Category.GENERAL,
        importance=0.0,
        source=Source.USER,
        source_refs=SourceRefs(turn.session_id, (turn.message_id,), turn.trace_id),
        created_at=turn.at,
        updated_at=turn.at,
        status=Status.QUARANTINED,
        quarantine_reason=",".join(reasons),
    )
