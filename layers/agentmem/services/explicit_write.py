"""The memory API's write entrance (``POST /memories``, the MCP ``remember`` tool): one fact the
caller states outright, through the same guards as a turn.

The category is the caller's when stated, else the rule classifier's, which never says
``policy``: a rule-shaped text written without the policy category is stored as a preference.
A policy memory (an instruction the Constraints slot shows) needs the
caller's ``memory:policy`` permission *and* the stated category
(:func:`~agentmem.domain.authority.grant_policy`); a stated policy without the permission is
refused. The record's category comes from :func:`~agentmem.domain.authority.written_category`,
the one way a policy is made.

The content and every tag go through the one guard (:class:`~agentmem.services.guard.WriteGuard`):
an injection, by the rules or by meaning, is rejected (never stored, audited); PII is redacted,
and text that is nothing but placeholders afterwards is rejected as empty. Importance is honest
about its source: the caller's own number when given (``importance_source`` explicit), otherwise
the weight of a user statement for explicit and admin writes and of an exchange fact for the
rest, capped when PII was found. The memory id comes from the request id, so a retried request stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain import ids
from agentmem.domain.authority import POLICY_PERMISSION, grant_policy, written_category
from agentmem.domain.classify import classify
from agentmem.domain.extraction import EXCHANGE_IMPORTANCE, USER_IMPORTANCE
from agentmem.domain.guards.gate import PII_IMPORTANCE_CAP, has_placeholder, only_placeholders
from agentmem.domain.models import (
    AuditAction,
    AuditEvent,
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
)
from agentmem.errors import Forbidden, VersionConflict
from agentmem.ports import AuditedWrites, AuditLog, Embedder, MemoryStore, ScopeLedger
from agentmem.services.audit_trail import append_audit
from agentmem.services.guard import WriteGuard
from agentmem.services.outcome import TurnOutcome, TurnStatus

_FIRST_HAND = (Source.EXPLICIT, Source.ADMIN)  # stated by the user or an operator, not inferred


@dataclass
class ExplicitWriter:
    store: MemoryStore
    ledger: ScopeLedger  # the consolidation counters
    audit: AuditLog
    embedder: Embedder
    guard: WriteGuard = field(default_factory=WriteGuard)
    audited: AuditedWrites | None = None  # the store, when it commits the audit line with the write

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
        may_write_policy: bool = False,
    ) -> tuple[MemoryRecord | None, TurnOutcome]:
        """The stored record (or the one an earlier try of ``request_id`` stored) and the
        outcome; no record when the guards refused the content (``outcome.reasons`` says why).
        Raises :class:`Forbidden` for a policy memory without ``may_write_policy``."""
        grant = grant_policy(may_write_policy, category)
        if category is Category.POLICY and grant is None:
            raise Forbidden(f"a policy memory needs the {POLICY_PERMISSION!r} permission")
        outcome = TurnOutcome(message_id=request_id)
        screened = self.guard.screen(content)
        tags_screened = self.guard.screen_all(tags)
        reasons = [*screened.reasons] if screened.is_injection else []
        reasons += [r for t in tags_screened if t.is_injection for r in t.reasons]
        if reasons:
            return None, self._reject(scope, outcome, ["injection:" + r for r in dict.fromkeys(reasons)], now)
        cleaned = screened.redaction
        outcome.redacted_kinds = sorted(set(cleaned.kinds).union(*(t.redaction.kinds for t in tags_screened)))
        if not cleaned.text.strip() or only_placeholders(cleaned.text):
            outcome.status = TurnStatus.REJECTED
            outcome.reasons = ["empty_after_redaction"]
            return None, outcome
        clean_tags = tuple(t.text for t in tags_screened if not has_placeholder(t.text))
        scored = USER_IMPORTANCE if source in _FIRST_HAND else EXCHANGE_IMPORTANCE
        if cleaned.redacted:
            scored = min(scored, PII_IMPORTANCE_CAP)
        vector = self.embedder.embed_documents([cleaned.text])[0]
        semantic = self.guard.semantic(vector.reshape(1, -1))[0]
        if semantic is not None:
            return None, self._reject(scope, outcome, ["injection:" + semantic], now)
        written = written_category(category, classify(cleaned.text), grant)
        record = MemoryRecord(
            scope=scope,
            memory_id=ids.memory_id(now, f"explicit:{request_id}"),
            content=cleaned.text,
            category=written.category,
            slot_hint=written.slot_hint,
            layer=Layer.PERMANENT if permanent else Layer.LONG_TERM,
            tags=clean_tags,
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
            try:
                self._create(record, request_id, now)
            except VersionConflict:  # a concurrent try of the same request stored it first
                existing = self.store.get(scope, record.memory_id)
                if existing is None:
                    raise
            else:
                self.ledger.mark_pending(scope, 1)
        outcome.written.append(record.memory_id)
        return existing or record, outcome

    def _create(self, record: MemoryRecord, request_id: str, now: datetime) -> None:
        """The record and its ``written`` line: one transaction where the store keeps the trail
        (a worker killed between them leaves neither or both), else two steps."""
        written = AuditEvent(
            scope=record.scope,
            action=AuditAction.WRITTEN,
            at=now,
            memory_id=record.memory_id,
            details={"message_id": request_id},
        )
        if self.audited is not None:
            self.audited.create_audited(record, [written])
            return
        self.store.create(record)
        self.audit.append(written)

    def _reject(self, scope: Scope, outcome: TurnOutcome, reasons: list[str], now: datetime) -> TurnOutcome:
        outcome.status = TurnStatus.REJECTED
        outcome.reasons = reasons
        append_audit(
            self.audit,
            scope,
            AuditAction.REJECTED,
            now,
            reason=",".join(reasons),
            message_id=outcome.message_id,
        )
        return outcome
