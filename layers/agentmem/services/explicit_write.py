"""The memory API's write entrance (``POST /memories``, the MCP ``remember`` tool): one fact the
caller states outright, through the same guards as a turn.

An injection is rejected (never stored, audited); PII is redacted, and text that is nothing but
placeholders afterwards is rejected as empty. Importance is honest about its source: the
caller's own number when given (``importance_source`` explicit), otherwise the weight of a user
statement for explicit and admin writes and of an exchange fact for the rest, capped when PII
was found. The memory id comes from the request id, so a retried request stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agentmem.domain import ids
from agentmem.domain.classify import classify
from agentmem.domain.extraction import EXCHANGE_IMPORTANCE, USER_IMPORTANCE
from agentmem.domain.guards import detect_injection, redact
from agentmem.domain.guards.gate import PII_IMPORTANCE_CAP, only_placeholders
from agentmem.domain.models import (
    AuditAction,
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
)
from agentmem.ports import AuditLog, Embedder, MemoryStore
from agentmem.services.audit_trail import append_audit
from agentmem.services.outcome import TurnOutcome, TurnStatus

_FIRST_HAND = (Source.EXPLICIT, Source.ADMIN)  # stated by the user or an operator, not inferred


@dataclass
class ExplicitWriter:
    store: MemoryStore
    audit: AuditLog
    embedder: Embedder

    def write(
        self,
        scope: Scope,
        content: str,
        *,
        now: datetime,
        category: Category | None = None,
        importance: float | None = None,
        pinned: bool = False,
        permanent: bool = False,
        source: Source = Source.EXPLICIT,
        tags: Sequence[str] = (),
        request_id: str,
    ) -> tuple[MemoryRecord | None, TurnOutcome]:
        """The stored record (or the one an earlier try of ``request_id`` stored) and the
        outcome; no record when the guards refused the content (``outcome.reasons`` says why)."""
        outcome = TurnOutcome(message_id=request_id)
        verdict = detect_injection(content)
        if verdict.is_injection:
            outcome.status = TurnStatus.REJECTED
            outcome.reasons = ["injection:" + r for r in verdict.reasons]
            append_audit(
                self.audit,
                scope,
                AuditAction.REJECTED,
                now,
                reason=",".join(outcome.reasons),
                message_id=request_id,
            )
            return None, outcome
        cleaned = redact(content)
        outcome.redacted_kinds = list(cleaned.kinds)
        if not cleaned.text.strip() or only_placeholders(cleaned.text):
            outcome.status = TurnStatus.REJECTED
            outcome.reasons = ["empty_after_redaction"]
            return None, outcome
        scored = USER_IMPORTANCE if source in _FIRST_HAND else EXCHANGE_IMPORTANCE
        if cleaned.redacted:
            scored = min(scored, PII_IMPORTANCE_CAP)
        vector = self.embedder.embed_documents([cleaned.text])[0]
        record = MemoryRecord(
            scope=scope,
            memory_id=ids.memory_id(now, f"explicit:{request_id}"),
            content=cleaned.text,
            category=category or classify(cleaned.text),
            layer=Layer.PERMANENT if permanent else Layer.LONG_TERM,
            tags=tuple(tags),
            importance=importance if importance is not None else scored,
            importance_source=ImportanceSource.EXPLICIT
            if importance is not None
            else ImportanceSource.SCORED,
            confidence=Confidence.CONFIRMED,
            source=source,
            source_refs=SourceRefs(trace_id=request_id),
            embedding=tuple(float(x) for x in vector),
            embedding_model=self.embedder.model_id,
            created_at=now,
            updated_at=now,
            valid_from=now,
            pinned=pinned,
        )
        existing = self.store.get(scope, record.memory_id)
        if existing is None:
            self.store.create(record)
            self.store.mark_pending(scope, 1)
            append_audit(
                self.audit, scope, AuditAction.WRITTEN, now, memory_id=record.memory_id, message_id=request_id
            )
        outcome.written.append(record.memory_id)
        return existing or record, outcome
