"""The one write entrance (DESIGN §4): Extract -> Guard -> Persist. Projection follows from the
store's change stream.

Order matters: L0 first (after redaction) so nothing accepted is lost; the injection gate before
any extraction; PII redacted before anything is stored, embedded, logged or judged; importance
scored knowing what the original text held. Memory ids are derived from the message id, so a
redelivered turn converges on the state of an uninterrupted run: nothing lost, nothing doubled.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from agentmem.domain import ids
from agentmem.domain.classify import classify
from agentmem.domain.conflict import Judgement, NewFact, judge, judge_update
from agentmem.domain.extraction import Candidate, extract_from_exchange, extract_from_user
from agentmem.domain.guards import detect_injection, redact
from agentmem.domain.guards.pii import PLACEHOLDERS
from agentmem.domain.models import (
    AuditEvent,
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
    Status,
    Turn,
)
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import terms
from agentmem.errors import VersionConflict
from agentmem.ports import AuditLog, Embedder, MemoryStore, Put, RawTurnRecord, SearchIndex, TurnLog

log = logging.getLogger(__name__)

PII_IMPORTANCE_CAP = 0.3
NEIGHBOURS_FROM_STORE = 200  # recent memories compared directly (robust to projection lag)
NEIGHBOURS_FROM_INDEX = 10


@dataclass
class TurnOutcome:
    """What happened to one turn: honest counts and ids, never content."""

    message_id: str
    status: str = "accepted"  # accepted | duplicate | quarantined
    written: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    redacted_kinds: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def to_dict(self) -> dict[str, object]:
        return {
            "message_id": self.message_id,
            "status": self.status,
            "written": self.written,
            "reinforced": self.reinforced,
            "superseded": self.superseded,
            "quarantined": self.quarantined,
            "dropped": self.dropped,
            "redacted_kinds": self.redacted_kinds,
            "reasons": self.reasons,
        }


@dataclass
class WritePipeline:
    store: MemoryStore
    turn_log: TurnLog
    audit: AuditLog
    embedder: Embedder
    index: SearchIndex | None = None
    thresholds: SimilarityThresholds = field(default_factory=SimilarityThresholds)
    consolidation_every: int = 5

    # ------------------------------------------------------------------ turns
    def ingest(self, turn: Turn) -> TurnOutcome:
        """Run one turn through the write path. Raises on transient failures (embedder or store
        down) so the queue redelivers; everything done before the failure is idempotent."""
        outcome = TurnOutcome(message_id=turn.message_id)
        scope = turn.scope
        if self.turn_log.is_processed(scope, turn.message_id):
            outcome.status = "duplicate"
            return outcome

        user = redact(turn.user)
        assistant = redact(turn.assistant)
        outcome.redacted_kinds = sorted(set(user.kinds) | set(assistant.kinds))
        self.turn_log.append_raw(
            scope,
            RawTurnRecord(
                message_id=turn.message_id,
                session_id=turn.session_id,
                at=turn.at,
                user=user.text,
                assistant=assistant.text,
                trace_id=turn.trace_id,
                extra={"speaker": turn.speaker} if turn.speaker else {},
            ),
        )

        verdict = detect_injection(turn.user)
        if verdict.is_injection:
            self._quarantine(turn, user.text, verdict.reasons, outcome)
        else:
            candidates = extract_from_user(user.text)
            if not detect_injection(turn.assistant).is_injection:
                candidates += extract_from_exchange(user.text, assistant.text)
            else:
                outcome.drop("assistant_injection")
            candidates = self._gate(candidates, outcome, had_pii=user.redacted)
            if turn.speaker:
                candidates = [_attribute(c, turn.speaker) for c in candidates]
            self._persist(turn, candidates, outcome)

        if outcome.redacted_kinds:
            self._audit(
                scope,
                "redacted",
                turn.at,
                reason=",".join(outcome.redacted_kinds),
                message_id=turn.message_id,
            )
        writes = len(outcome.written) + len(outcome.superseded) + len(outcome.reinforced)
        if writes:
            self.store.mark_pending(scope, writes)
        self.turn_log.mark_processed(scope, turn.message_id, turn.at, outcome.to_dict())
        return outcome

    # ------------------------------------------------------------------ explicit writes
    def write_explicit(
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
        """The memory API's entrance: same guards, importance honest about its source."""
        outcome = TurnOutcome(message_id=request_id)
        verdict = detect_injection(content)
        if verdict.is_injection:
            outcome.status = "rejected"
            outcome.reasons = ["injection:" + r for r in verdict.reasons]
            self._audit(scope, "rejected", now, reason=",".join(outcome.reasons), message_id=request_id)
            return None, outcome
        cleaned = redact(content)
        outcome.redacted_kinds = list(cleaned.kinds)
        if not cleaned.text.strip() or _only_placeholders(cleaned.text):
            outcome.status = "rejected"
            outcome.reasons = ["empty_after_redaction"]
            return None, outcome
        scored = 0.7 if source in (Source.EXPLICIT, Source.ADMIN) else 0.5
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
            self._audit(scope, "written", now, memory_id=record.memory_id, message_id=request_id)
        outcome.written.append(record.memory_id)
        return existing or record, outcome

    # ------------------------------------------------------------------ steps
    def _quarantine(
        self, turn: Turn, redacted_user: str, reasons: Sequence[str], outcome: TurnOutcome
    ) -> None:
        outcome.status = "quarantined"
        outcome.reasons = ["injection:" + r for r in reasons]
        record = MemoryRecord(
            scope=turn.scope,
            memory_id=ids.memory_id(turn.at, f"{turn.message_id}:quarantine"),
            content=redacted_user[:500],
            category=Category.GENERAL,
            importance=0.0,
            source=Source.USER,
            source_refs=SourceRefs(turn.session_id, (turn.message_id,), turn.trace_id),
            created_at=turn.at,
            updated_at=turn.at,
            status=Status.QUARANTINED,
            quarantine_reason=",".join(reasons),
        )
        if self.store.get(turn.scope, record.memory_id) is None:
            self.store.create(record)
        outcome.quarantined.append(record.memory_id)
        self._audit(
            turn.scope,
            "quarantined",
            turn.at,
            memory_id=record.memory_id,
            reason=",".join(reasons),
            message_id=turn.message_id,
        )

    def _gate(self, candidates: list[Candidate], outcome: TurnOutcome, *, had_pii: bool) -> list[Candidate]:
        """Gate 1 (each key/value and fact) and Gate 2 (the joined text)."""
        kept: list[Candidate] = []
        for cand in candidates:
            if _has_placeholder(cand.value or ""):
                cand = replace(cand, key=None, value=None)
            if _has_placeholder(cand.content):
                # Keep what the fact says around the secret, never the secret's slot.
                cleaned = _without_placeholder_clauses(cand.content)
                if cleaned is None:
                    outcome.drop("pii")
                    continue
                cand = replace(cand, content=cleaned)
            if detect_injection(cand.content).is_injection or (
                cand.value and detect_injection(cand.value).is_injection
            ):
                outcome.drop("injection")
                continue
            if had_pii:
                cand = replace(cand, importance=min(cand.importance, PII_IMPORTANCE_CAP))
            kept.append(cand)
        if kept and detect_injection("\n".join(c.content for c in kept)).is_injection:
            outcome.drop("injection_joined")
            return []
        return kept

    def _persist(self, turn: Turn, candidates: list[Candidate], outcome: TurnOutcome) -> None:
        if not candidates:
            return
        vectors = self.embedder.embed_documents([c.content for c in candidates])
        neighbours = self._neighbour_pool(turn.scope, vectors)
        for ordinal, (cand, vector) in enumerate(zip(candidates, vectors, strict=True)):
            record = self._record(turn, cand, vector, ordinal)
            if self.store.get(turn.scope, record.memory_id) is not None:
                outcome.written.append(record.memory_id)  # written by an earlier delivery
                neighbours.append(record)
                continue
            decision, other = self._decide(record, vector, neighbours, cand.update_strength)
            try:
                if decision is Judgement.DUPLICATE and other is not None:
                    self._reinforce(other, turn, cand.importance)
                    outcome.reinforced.append(other.memory_id)
                    continue
                if decision is Judgement.SUPERSEDE and other is not None:
                    self._supersede(other, record, turn.at)
                    outcome.superseded.append(other.memory_id)
                    outcome.written.append(record.memory_id)
                    neighbours = [n for n in neighbours if n.memory_id != other.memory_id]
                else:
                    self.store.create(record)
                    outcome.written.append(record.memory_id)
            except VersionConflict:
                # Someone changed the neighbour between our read and write: store the fact as
                # new rather than lose it; consolidation will dedup later.
                if self.store.get(turn.scope, record.memory_id) is None:
                    self.store.create(record)
                outcome.written.append(record.memory_id)
            neighbours.append(self.store.get(turn.scope, record.memory_id) or record)

    def _neighbour_pool(self, scope: Scope, vectors: np.ndarray) -> list[MemoryRecord]:
        pool = {r.memory_id: r for r in self.store.scan_active(scope, NEIGHBOURS_FROM_STORE)}
        if self.index is not None and len(pool) >= NEIGHBOURS_FROM_STORE:
            hit_ids: list[str] = []
            for vector in vectors:
                hits = self.index.knn(scope, vector, NEIGHBOURS_FROM_INDEX, self.embedder.model_id)
                hit_ids.extend(h.memory_id for h in hits if h.memory_id not in pool)
            pool.update(self.store.get_many(scope, hit_ids))
        return [r for r in pool.values() if r.is_active]

    def _decide(
        self, record: MemoryRecord, vector: np.ndarray, pool: list[MemoryRecord], update: int
    ) -> tuple[Judgement, MemoryRecord | None]:
        fact = NewFact(record.content, record.category, record.key, record.value, update)
        calibration = self.embedder.calibration
        ranked: list[tuple[float, MemoryRecord]] = []
        for other in pool:
            if other.embedding is None or other.embedding_model != self.embedder.model_id:
                sim = 0.0
            else:
                sim = calibration.documents(
                    float(np.dot(vector, np.asarray(other.embedding, dtype=np.float32)))
                )
            ranked.append((sim, other))
        ranked.sort(key=lambda pair: pair[0], reverse=True)
        # Same-key records first (they may be dissimilar in wording), then the 3 nearest.
        keyed = [(s, o) for s, o in ranked if record.key and o.key == record.key]
        for sim, other in keyed + ranked[:3]:
            verdict = judge(fact, other, sim, self.thresholds)
            if verdict is not Judgement.KEEP_BOTH:
                return verdict, other
        for sim, other in ranked[:3]:
            if judge_update(fact, other, sim, self.thresholds):
                return Judgement.SUPERSEDE, other
        return Judgement.KEEP_BOTH, None

    def _record(self, turn: Turn, cand: Candidate, vector: np.ndarray, ordinal: int) -> MemoryRecord:
        return MemoryRecord(
            scope=turn.scope,
            memory_id=ids.memory_id(turn.at, f"{turn.message_id}:{ordinal}"),
            content=cand.content,
            category=classify(cand.content, cand.category_hint),
            key=cand.key,
            value=cand.value,
            tags=cand.tags,
            importance=cand.importance,
            confidence=cand.confidence,
            source=cand.source,
            source_refs=SourceRefs(turn.session_id, (turn.message_id,), turn.trace_id),
            embedding=tuple(float(x) for x in vector),
            embedding_model=self.embedder.model_id,
            created_at=turn.at,
            updated_at=turn.at,
            valid_from=turn.at,
            entities=cand.entities,
        )

    def _reinforce(self, existing: MemoryRecord, turn: Turn, importance: float) -> None:
        if turn.message_id in existing.source_refs.message_ids:
            return
        boosted = min(1.0, max(existing.importance, importance) + 0.05)
        updated = existing.evolve(
            now=turn.at,
            importance=boosted,
            access_count=existing.access_count + 1,
            last_accessed_at=turn.at,
            source_refs=existing.source_refs.with_message(turn.message_id),
        )
        self.store.update(updated, existing.version)

    def _supersede(self, old: MemoryRecord, new: MemoryRecord, at: datetime) -> None:
        marked = old.evolve(now=at, status=Status.SUPERSEDED, superseded_by=new.memory_id, valid_to=at)
        self.store.transact([Put(replace(new, supersedes=(old.memory_id,)), None), Put(marked, old.version)])
        self._audit(old.scope, "superseded", at, memory_id=old.memory_id, reason=f"by:{new.memory_id}")

    def _audit(
        self,
        scope: Scope,
        action: str,
        at: datetime,
        *,
        memory_id: str | None = None,
        reason: str | None = None,
        message_id: str | None = None,
    ) -> None:
        details: dict[str, object] = {"message_id": message_id} if message_id else {}
        self.audit.append(
            AuditEvent(scope=scope, action=action, at=at, memory_id=memory_id, reason=reason, details=details)
        )


_PLACEHOLDER_TAGS = tuple(PLACEHOLDERS.values())


def _has_placeholder(text: str) -> bool:
    return any(tag in text for tag in _PLACEHOLDER_TAGS)


_CLAUSE_RE = re.compile(r"[^，,；;。.!?！？\n]+[，,；;。.!?！？\n]*")


def _without_placeholder_clauses(text: str) -> str | None:
    """The text without the clauses that hold a redaction placeholder; None when too little is left."""
    kept = "".join(c for c in _CLAUSE_RE.findall(text) if not _has_placeholder(c)).strip(" ，,；;")
    if len(terms(kept)) < 2:
        return None
    return kept


def _only_placeholders(text: str) -> bool:
    stripped = text
    for tag in _PLACEHOLDER_TAGS:
        stripped = stripped.replace(tag, "")
    return not any(ch.isalnum() for ch in stripped)


def _attribute(cand: Candidate, speaker: str) -> Candidate:
    """Multi-party transcripts (LoCoMo): say who stated the fact."""
    if cand.content.startswith(f"{speaker}:"):
        return cand
    return replace(cand, content=f"{speaker}: {cand.content}", entities=(speaker, *cand.entities)[:8])
