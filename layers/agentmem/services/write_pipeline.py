"""The one write entrance (DESIGN §4): Extract -> Guard -> Persist. Projection follows from the
store's change stream.

Order matters: L0 first (after redaction) so nothing accepted is lost; the injection gate before
any extraction; PII redacted before anything is stored, embedded, logged or judged; importance
scored knowing what the original text held. Memory ids are derived from the message id, so a
redelivered turn converges on the state of an uninterrupted run: nothing lost, nothing doubled.

An optional :class:`~agentmem.ports.LLM` (Bedrock when enabled) helps after the rules, never
instead of them (DESIGN §4): it may add facts the rules missed (they pass the very same gates,
and come after the rule facts so the rule facts' ids stay stable), refine a category the rules
left as ``general``, and settle at most three doubtful conflicts per turn. Every model answer of
None falls back to the rules; a quarantined turn never reaches the model.
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
from agentmem.domain.conflict import CONFLICT_CATEGORIES, Judgement, NewFact, judge, judge_update
from agentmem.domain.extraction import (
    EXCHANGE_IMPORTANCE,
    MAX_CONTENT_CHARS,
    USER_IMPORTANCE,
    Candidate,
    extract_from_exchange,
    extract_from_user,
    is_statement,
    update_strength,
)
from agentmem.domain.guards import detect_injection, redact
from agentmem.domain.guards.pii import PLACEHOLDERS
from agentmem.domain.keys import MULTI_VALUED_KEYS, SINGLE_VALUED_KEYS, match_keys
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
from agentmem.domain.text import language, normalize, term_set, terms
from agentmem.errors import VersionConflict
from agentmem.ports import (
    LLM,
    AuditLog,
    Embedder,
    MemoryStore,
    Put,
    RawTurnRecord,
    SearchIndex,
    TurnLog,
)
from agentmem.services.outcome import TurnOutcome, TurnStatus

log = logging.getLogger(__name__)

PII_IMPORTANCE_CAP = 0.3
NEIGHBOURS_FROM_STORE = 200  # recent memories compared directly (robust to projection lag)
NEIGHBOURS_FROM_INDEX = 10
LLM_JUDGE_CALLS_PER_TURN = 3  # DESIGN §4.7: at most 3 conflict judgements by the model per turn
LLM_CLASSIFY_CALLS_PER_TURN = 8  # bounds the cost of a long message full of "general" facts
LLM_TAG = "extractor:llm"


@dataclass
class _LlmBudget:
    """Model calls a turn may still spend on conflicts and categories."""

    judge: int = LLM_JUDGE_CALLS_PER_TURN
    classify: int = LLM_CLASSIFY_CALLS_PER_TURN


@dataclass
class WritePipeline:
    store: MemoryStore
    turn_log: TurnLog
    audit: AuditLog
    embedder: Embedder
    index: SearchIndex | None = None
    thresholds: SimilarityThresholds = field(default_factory=SimilarityThresholds)
    llm: LLM | None = None  # optional model help after the rules (Bedrock when enabled)

    # ------------------------------------------------------------------ turns
    def ingest(self, turn: Turn) -> TurnOutcome:
        """Run one turn through the write path. Raises on transient failures (embedder or store
        down) so the queue redelivers; everything done before the failure is idempotent."""
        outcome = TurnOutcome(message_id=turn.message_id)
        scope = turn.scope
        if self.turn_log.is_processed(scope, turn.message_id):
            outcome.status = TurnStatus.DUPLICATE
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
            self._quarantine(turn, user.text, verdict.reasons, outcome)  # never reaches the model
        else:
            candidates = extract_from_user(user.text)
            assistant_clean = not detect_injection(turn.assistant).is_injection
            if assistant_clean:
                candidates += extract_from_exchange(user.text, assistant.text)
            else:
                outcome.drop("assistant_injection")
            rule_facts = candidates
            candidates = self._gate(candidates, outcome, had_pii=user.redacted)
            if self.llm is not None and "injection_joined" not in outcome.dropped:
                # An injected reply is not shown to the model: only the user's side is asked; a
                # turn whose rule facts only inject together is not asked about at all.
                answer = assistant.text if assistant_clean else ""
                candidates += self._llm_extract(
                    self.llm, user.text, answer, rule_facts, candidates, outcome, had_pii=user.redacted
                )
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
            outcome.status = TurnStatus.REJECTED
            outcome.reasons = ["injection:" + r for r in verdict.reasons]
            self._audit(scope, "rejected", now, reason=",".join(outcome.reasons), message_id=request_id)
            return None, outcome
        cleaned = redact(content)
        outcome.redacted_kinds = list(cleaned.kinds)
        if not cleaned.text.strip() or _only_placeholders(cleaned.text):
            outcome.status = TurnStatus.REJECTED
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
        outcome.status = TurnStatus.QUARANTINED
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

    def _gate(
        self, candidates: list[Candidate], outcome: TurnOutcome, *, had_pii: bool, prefix: str = ""
    ) -> list[Candidate]:
        """Gate 1 (each key/value and fact) and Gate 2 (the joined text). ``prefix`` names the
        drop reasons of model facts apart ("llm_injection")."""
        kept: list[Candidate] = []
        for cand in candidates:
            if _has_placeholder(cand.value or ""):
                cand = replace(cand, key=None, value=None)
            if _has_placeholder(cand.content):
                # Keep what the fact says around the secret, never the secret's slot.
                # an exchange fact starts with the user's question or request by design
                cleaned = _without_placeholder_clauses(cand.content, statement=cand.source is Source.USER)
                if cleaned is None:
                    outcome.drop(prefix + "pii")
                    continue
                cand = replace(cand, content=cleaned)
            if detect_injection(cand.content).is_injection or (
                cand.value and detect_injection(cand.value).is_injection
            ):
                outcome.drop(prefix + "injection")
                continue
            if had_pii:
                cand = replace(cand, importance=min(cand.importance, PII_IMPORTANCE_CAP))
            kept.append(cand)
        if kept and detect_injection("\n".join(c.content for c in kept)).is_injection:
            outcome.drop(prefix + "injection_joined")
            return []
        return kept

    def _llm_extract(
        self,
        llm: LLM,
        user_text: str,
        assistant_text: str,
        rule_facts: Sequence[Candidate],
        kept: Sequence[Candidate],
        outcome: TurnOutcome,
        *,
        had_pii: bool,
    ) -> list[Candidate]:
        """The model's facts the rules did not already produce, through the same gates as rule
        facts. ``rule_facts`` are the rule candidates before the gates, ``kept`` after them:
        neither is ever changed, and a model fact that would turn the joined text of the turn
        into an injection is what gets dropped, never a rule fact."""
        outcome.llm_calls += 1
        items = llm.extract(user_text, assistant_text, language(user_text))
        if not isinstance(items, list):
            outcome.llm_fallbacks += 1
            return []
        seen = {_dedupe_key(c.content) for c in (*rule_facts, *kept)}
        fresh: list[Candidate] = []
        for item in items:
            cand = _llm_candidate(item, user_text, outcome)
            if cand is None:
                continue
            marker = _dedupe_key(cand.content)
            if marker in seen:
                outcome.drop("llm_known")
                continue
            seen.add(marker)
            fresh.append(cand)
        gated = [_rules_first(c) for c in self._gate(fresh, outcome, had_pii=had_pii, prefix="llm_")]
        if gated and kept and detect_injection("\n".join(c.content for c in (*kept, *gated))).is_injection:
            outcome.drop("llm_injection_joined")
            return []
        outcome.llm_facts += len(gated)
        return gated

    def _persist(self, turn: Turn, candidates: list[Candidate], outcome: TurnOutcome) -> None:
        if not candidates:
            return
        vectors = self.embedder.embed_documents([c.content for c in candidates])
        neighbours = self._neighbour_pool(turn.scope, vectors)
        budget = _LlmBudget()
        for ordinal, (cand, vector) in enumerate(zip(candidates, vectors, strict=True)):
            record = self._record(turn, cand, vector, ordinal)
            if self.store.get(turn.scope, record.memory_id) is not None:
                outcome.written.append(record.memory_id)  # written by an earlier delivery
                neighbours.append(record)
                continue
            if self.llm is not None and record.category is Category.GENERAL:
                record = self._refine_category(self.llm, record, outcome, budget)
            decision, other = self._decide(record, vector, neighbours, cand.update_strength, outcome, budget)
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

    def _refine_category(
        self, llm: LLM, record: MemoryRecord, outcome: TurnOutcome, budget: _LlmBudget
    ) -> MemoryRecord:
        """Ask the model for a category the rules could only call ``general`` (rules first)."""
        if budget.classify <= 0:
            return record
        budget.classify -= 1
        outcome.llm_calls += 1
        answer = llm.classify(record.content, language(record.content))
        category = _category(answer)
        if category is None:
            outcome.llm_fallbacks += 1
            return record
        return replace(record, category=category)

    def _decide(
        self,
        record: MemoryRecord,
        vector: np.ndarray,
        pool: list[MemoryRecord],
        update: int,
        outcome: TurnOutcome | None = None,
        budget: _LlmBudget | None = None,
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
        if self.llm is not None and outcome is not None and budget is not None:
            for sim, other in ranked[:3]:
                if budget.judge <= 0:
                    break
                if not self._doubtful(fact, other, sim):
                    continue
                budget.judge -= 1
                outcome.llm_calls += 1
                answer = self.llm.judge_conflict(other.content, record.content, language(record.content))
                if answer is None:
                    outcome.llm_fallbacks += 1  # doubtful stays "keep both"
                elif answer is True:
                    return Judgement.SUPERSEDE, other
        return Judgement.KEEP_BOTH, None

    def _doubtful(self, fact: NewFact, old: MemoryRecord, similarity: float) -> bool:
        """The rules kept both, but the pair sits in the conflict band: same conflict-prone
        category, no disagreement of keys (different attributes, or a multi-valued key that adds
        rather than replaces), not pinned. Only these go to the model."""
        if not self.thresholds.conflict_low <= similarity < self.thresholds.dedup:
            return False
        if fact.category not in CONFLICT_CATEGORIES or old.category is not fact.category or old.pinned:
            return False
        if fact.key and old.key and fact.key != old.key:
            return False
        return fact.key not in MULTI_VALUED_KEYS and old.key not in MULTI_VALUED_KEYS

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


def _without_placeholder_clauses(text: str, *, statement: bool = True) -> str | None:
    """The text without the clauses that hold a redaction placeholder; None when too little is left."""
    kept = "".join(c for c in _CLAUSE_RE.findall(text) if not _has_placeholder(c)).strip(" ，,；;")
    if len(terms(kept)) < 2 or (statement and not is_statement(kept)):
        return None  # what is left is too little, or only the request around the secret
    return kept


def _only_placeholders(text: str) -> bool:
    stripped = text
    for tag in _PLACEHOLDER_TAGS:
        stripped = stripped.replace(tag, "")
    return not any(ch.isalnum() for ch in stripped)


_KNOWN_KEYS = SINGLE_VALUED_KEYS | MULTI_VALUED_KEYS
_USER_SOURCES = frozenset({"user", "statement", "user_statement"})
_EXCHANGE_SOURCES = frozenset({"exchange", "assistant", "inferred", "answer"})
_SUBJECT_TERMS = frozenset({"user", "用户"})  # "The user lives in..." names the user, not a topic


def _dedupe_key(text: str) -> str:
    """The normalised form two facts are "the same" in: case, width, spaces, end punctuation."""
    return normalize(text).strip(" .。!！?？,，;；:：")


def _category(answer: object) -> Category | None:
    """A model's category answer, or None when it is not one of ours."""
    if not isinstance(answer, str):
        return None
    try:
        return Category(answer.strip().lower())
    except ValueError:
        return None


def _optional_text(value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:limit]


def _llm_source(item: dict[str, object], content: str, user_text: str) -> Source:
    """Who stated a model fact. An explicit ``source`` wins; otherwise (Bedrock's schema has
    none) a fact whose every topic term is in the user's own message is the user's statement,
    and anything else came from the exchange (the lower-trust reading when unsure)."""
    declared = item.get("source")
    if isinstance(declared, str):
        if declared.strip().lower() in _USER_SOURCES:
            return Source.USER
        if declared.strip().lower() in _EXCHANGE_SOURCES:
            return Source.EXCHANGE
    topical = term_set(content) - _SUBJECT_TERMS
    if topical and topical <= term_set(user_text):
        return Source.USER
    return Source.EXCHANGE


def _llm_candidate(item: object, user_text: str, outcome: TurnOutcome) -> Candidate | None:
    """One model fact as a candidate, mapped like a rule fact: the user's statements at 0.7 and
    confirmed, the exchange's at 0.5 and inferred; keys only when they are keys the rules know
    (a free-form model key would block same-key updates); PII the model wrote is redacted here
    and caps the importance, and the placeholder gate then cuts its clause."""
    content = item.get("content") if isinstance(item, dict) else None
    if not isinstance(item, dict) or not isinstance(content, str) or not content.strip():
        outcome.drop("llm_malformed")
        return None
    cleaned = redact(content.strip()[:MAX_CONTENT_CHARS])
    raw_value = _optional_text(item.get("value"), 300)
    value_clean = redact(raw_value) if raw_value else None
    found = set(cleaned.kinds) | set(value_clean.kinds if value_clean else ())
    if found:
        outcome.redacted_kinds = sorted(set(outcome.redacted_kinds) | found)
    text = cleaned.text
    source = _llm_source(item, text, user_text)
    from_user = source is Source.USER
    importance = USER_IMPORTANCE if from_user else EXCHANGE_IMPORTANCE
    if found:
        importance = min(importance, PII_IMPORTANCE_CAP)
    keys = match_keys(text)
    key: str | None = None
    value: str | None = None
    hint: str | None = None
    if keys:
        key, value, hint = keys[0].key, keys[0].value, keys[0].category
    else:
        llm_key = _optional_text(item.get("key"), 100)
        if llm_key in _KNOWN_KEYS and value_clean is not None:
            key, value = llm_key, value_clean.text
        llm_category = _category(item.get("category"))
        if llm_category is not Category.GENERAL:
            hint = llm_category  # kept by _rules_first only where the rules say "general"
    return Candidate(
        content=text,
        source=source,
        importance=importance,
        confidence=Confidence.CONFIRMED if from_user else Confidence.INFERRED,
        key=key,
        value=value,
        category_hint=hint,
        update_strength=update_strength(text) if from_user else 0,
        entities=(value,) if value and len(value) <= 40 else (),
        tags=(LLM_TAG,),
    )


def _rules_first(cand: Candidate) -> Candidate:
    """A gated model fact keeps the model's category only where the rules, on the text as it
    will be stored (clauses around a secret cut), can say no more than ``general``."""
    if cand.category_hint is None or match_keys(cand.content):
        return cand
    if classify(cand.content) is Category.GENERAL:
        return cand
    return replace(cand, category_hint=None)


def _attribute(cand: Candidate, speaker: str) -> Candidate:
    """Multi-party transcripts (LoCoMo): say who stated the fact."""
    if cand.content.startswith(f"{speaker}:"):
        return cand
    return replace(cand, content=f"{speaker}: {cand.content}", entities=(speaker, *cand.entities)[:8])
