"""The one write entrance (docs/design.md, "The write path"): Extract -> Guard -> Persist.
Projection follows from the store's change stream.

Order matters: L0 first (after redaction) so nothing accepted is lost; the injection gate before
any extraction; PII redacted before anything is stored, embedded, logged or judged; importance
scored knowing what the original text held. Memory ids are derived from the message id, so a
redelivered turn converges on the state of an uninterrupted run: nothing lost, nothing doubled.

An optional :class:`~agentmem.ports.LLM` (Bedrock when enabled) helps after the rules, never
instead of them (docs/design.md, "The write path"): it may add facts the rules missed (they pass
the very same gates, and come after the rule facts so the rule facts' ids stay stable), refine a
category the rules left as ``general``, and settle at most three doubtful conflicts per turn. A
fact that would supersede a permanent or pinned memory is kept as a pending conflict instead
(docs/design.md, "Confirmation before overwriting what is permanent";
:mod:`agentmem.services.conflicts`): the user confirms before it overwrites. Every model answer
of None falls back to the rules; a quarantined turn never reaches the model.

The policy lives in the domain: the gates in :mod:`agentmem.domain.guards.gate`, the model's
facts in :mod:`agentmem.domain.llm_facts`, the conflict decision in :mod:`agentmem.domain.conflict`.
This service orders the steps, calls the ports and the model, and counts what happened in the
:class:`TurnOutcome`; an optional :class:`~agentmem.services.observer.PipelineObserver` watches. The
module runs over 400 lines: the write path's steps stay together, in the order they run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from agentmem.domain.authority import conversational_category
from agentmem.domain.classify import classify
from agentmem.domain.conflict import Judgement, NewFact, Ranked, allowed, decide, doubtful_pairs, rank
from agentmem.domain.endings import (
    REVISION,
    REVISION_PAIRS,
    Said,
    amended,
    revision_candidates,
)
from agentmem.domain.exchange import extract_acceptance, extract_from_exchange
from agentmem.domain.extraction import Candidate, attribute, extract_from_user
from agentmem.domain.guards.directive import sharing_a_name
from agentmem.domain.guards.gate import gate, has_placeholder, placeholder_kinds, split_attack
from agentmem.domain.guards.pii import redact_continued
from agentmem.domain.llm_facts import LLM_TAG, admit, parse_category
from agentmem.domain.models import AuditAction, AuditEvent, Category, MemoryRecord, Source, Status, Turn
from agentmem.domain.reading import Heads, Reading, Stance, read
from agentmem.domain.reading.apply import with_reading
from agentmem.domain.records import fact_record, quarantine_record
from agentmem.domain.replies import asked_of_answerer, with_question
from agentmem.domain.similarity import SimilarityThresholds
from agentmem.domain.text import language
from agentmem.errors import VersionConflict
from agentmem.ports import (
    LLM,
    AuditedWrites,
    AuditLog,
    Embedder,
    MemoryStore,
    Put,
    RawTurnRecord,
    ScopeLedger,
    SearchIndex,
    TurnLog,
)
from agentmem.services.audit_trail import append_audit, audit_event, write_audited
from agentmem.services.caches import NeighbourRecords
from agentmem.services.conflicts import ConflictService
from agentmem.services.guard import WriteGuard
from agentmem.services.neighbours import NeighbourPool, swapped
from agentmem.services.observer import NullObserver, PipelineObserver
from agentmem.services.outcome import LLM_FALLBACK, LlmBudget, TurnOutcome, TurnStatus

__all__ = ["LLM_TAG", "TurnOutcome", "WritePipeline"]

log = logging.getLogger(__name__)

SPLIT_ATTACK_SCAN = 200  # newest memories searched for what the earlier parts of a split attack wrote
SPLIT_ATTACK_TURNS = 3  # earlier user texts of the session re-scanned with the new one
TERSE_WORDS = 8  # a revision this short names only the new value: stored as the statement it revises, amended


@dataclass
class WritePipeline:
    store: MemoryStore
    ledger: ScopeLedger  # the consolidation counters
    turn_log: TurnLog
    audit: AuditLog
    embedder: Embedder
    index: SearchIndex | None = None
    thresholds: SimilarityThresholds = field(default_factory=SimilarityThresholds)
    llm: LLM | None = None  # optional model help after the rules (Bedrock when enabled)
    observer: PipelineObserver = field(default_factory=NullObserver)  # sees decisions, changes none
    guard: WriteGuard = field(default_factory=WriteGuard)  # the one guard of every entrance
    conflicts: ConflictService | None = None  # asks before superseding a permanent/pinned memory
    neighbour_cache: NeighbourRecords = field(
        default_factory=NeighbourRecords
    )  # full neighbours across turns
    reader_heads: Heads | None = None  # the statement reader's learned heads (rules alone without)
    audited: AuditedWrites | None = None  # the store, when its supersedes commit with their audit lines

    # ------------------------------------------------------------------ turns
    def ingest(self, turn: Turn) -> TurnOutcome:
        """Run one turn through the write path. Raises on transient failures (embedder or store
        down) so the queue redelivers; everything done before the failure is idempotent."""
        outcome = TurnOutcome(message_id=turn.message_id)
        scope = turn.scope
        if self.turn_log.is_processed(scope, turn.message_id):
            outcome.status = TurnStatus.DUPLICATE
            return outcome

        screened_user = self.guard.screen(turn.user)
        screened_assistant = self.guard.screen(turn.assistant)
        user, assistant = screened_user.redaction, screened_assistant.redaction
        earlier = self._earlier_user_texts(turn)
        if earlier:  # PII split over two turns: "my phone starts with 138" / "the rest is 0013 8000"
            user = redact_continued(earlier[-1].user, user)
        # The API redacts before it enqueues: placeholders in the text are PII it held.
        had_pii = user.redacted or has_placeholder(turn.user)
        held = placeholder_kinds(turn.user) | placeholder_kinds(turn.assistant)
        outcome.redacted_kinds = sorted(set(user.kinds) | set(assistant.kinds) | held)
        speaker, speaker_drop = self.guard.name(turn.speaker)
        if speaker_drop:
            outcome.drop(speaker_drop)
        replay = not self.turn_log.append_raw(
            scope,
            RawTurnRecord(
                message_id=turn.message_id,
                session_id=turn.session_id,
                at=turn.at,
                user=user.text,
                assistant=assistant.text,
                trace_id=turn.trace_id,
                extra={"speaker": speaker} if speaker else {},
            ),
        )

        verdict = screened_user.injection
        split = split_attack([r.user for r in earlier], turn.user, verdict)
        directive = (
            self.guard.directive(user.text, [r.user for r in earlier], self.embedder)
            if split is None and not verdict.is_injection
            else None
        )
        if split is not None:  # completes an attack split over turns (it may inject alone too)
            self._quarantine(turn, user.text, split.reasons, outcome)
            self._quarantine_earlier(turn, [earlier[i] for i in split.parts], split.reasons)
            outcome.split_parts = [earlier[i].message_id for i in split.parts]
        elif verdict.is_injection or (directive is not None and directive.whole_turn):
            # an order by the rules or by meaning (guard.directive): never reaches the model; the
            # earlier turns that name what it names (its brand, person, link) were its pieces
            if verdict.is_injection:
                reasons, parts = verdict.reasons, sharing_a_name([r.user for r in earlier], turn.user)
            else:
                assert directive is not None
                reasons, parts = directive.quarantine or (directive.hold or "",), directive.parts
            self._quarantine(turn, user.text, reasons, outcome)
            if parts:
                self._quarantine_earlier(turn, [earlier[i] for i in parts], reasons)
                outcome.split_parts = [earlier[i].message_id for i in parts]
        else:
            text = user.text
            if directive is not None and directive.rest is not None:
                # the order is in sentences of its own: they are quarantined, the rest of the turn
                # is the user's and goes on (a job stated beside "clients can mail me directly")
                reasons = directive.quarantine or (directive.hold or "",)
                self._quarantine(turn, "\n".join(directive.orders), reasons, outcome, whole=False)
                if directive.parts:
                    self._quarantine_earlier(turn, [earlier[i] for i in directive.parts], reasons)
                    outcome.split_parts = [earlier[i].message_id for i in directive.parts]
                text = directive.rest
            candidates = extract_from_user(text)
            question = self._question_answered(earlier, speaker)
            if question and candidates:  # "Three times a week." answers "How often do you …?"
                candidates[0] = with_question(candidates[0], question)
            if earlier:  # "就装这个" / "Sold.": the previous reply's recommendation is the choice
                candidates += extract_acceptance(earlier[-1].user, earlier[-1].assistant, text)
            assistant_clean = not screened_assistant.is_injection
            if assistant_clean:
                candidates += extract_from_exchange(text, assistant.text, similarity=self._answer_similarity)
            else:
                outcome.drop("assistant_injection")
            self.observer.extracted(turn, candidates)
            rule_facts = candidates
            gated = gate(candidates, had_pii=had_pii)
            self._record_drops(turn, gated.kept, gated.drops, outcome)
            candidates = list(gated.kept)
            if self.llm is not None and "injection_joined" not in outcome.dropped:
                # An injected reply is not shown to the model: only the user's side is asked; a
                # turn whose rule facts only inject together is not asked about at all.
                answer = assistant.text if assistant_clean else ""
                candidates += self._llm_extract(
                    self.llm, turn, text, answer, rule_facts, candidates, outcome, had_pii=had_pii
                )
            if speaker:
                candidates = [attribute(c, speaker) for c in candidates]
            self._persist(turn, candidates, outcome, replay)

        if outcome.redacted_kinds:
            append_audit(
                self.audit,
                scope,
                AuditAction.REDACTED,
                turn.at,
                reason=",".join(outcome.redacted_kinds),
                message_id=turn.message_id,
            )
        writes = len(outcome.written) + len(outcome.superseded) + len(outcome.reinforced)
        if writes:
            self.ledger.mark_pending(scope, writes)
        if outcome.llm_fallbacks:  # the model gave no answer (down, slow, throttled): the rules decided
            outcome.reasons.append(LLM_FALLBACK)
        self.turn_log.mark_processed(scope, turn.message_id, turn.at, outcome.to_dict())
        return outcome

    # ------------------------------------------------------------------ steps
    def _answer_similarity(self, question: str, sentences: Sequence[str]) -> list[float]:
        """Calibrated similarity of each reply sentence to the user's question (answer anchoring
        by meaning when no sentence shares a term with the question or fills its slot)."""
        query = self.embedder.embed_query(question)
        vectors = self.embedder.embed_documents(list(sentences))
        return [self.embedder.calibration.query(float(vector @ query)) for vector in vectors]

    def _question_answered(self, earlier: Sequence[RawTurnRecord], speaker: str | None) -> str | None:
        """The question the other party's last message put to this one (domain/replies.py): the
        previous speaker's line of a transcript, else the assistant's previous reply."""
        if not earlier:
            return None
        last = earlier[-1]
        other = last.extra.get("speaker")
        text = (last.user if other != speaker else "") if speaker and other else last.assistant
        question = asked_of_answerer(text) if text else None
        return None if question is None or self.guard.screen(question).is_injection else question

    def _earlier_user_texts(self, turn: Turn) -> list[RawTurnRecord]:
        """The session's last few accepted turns before this one, oldest first."""
        recent = self.turn_log.recent_turns(turn.scope, turn.session_id, SPLIT_ATTACK_TURNS + 1)
        return [r for r in recent if r.message_id != turn.message_id and r.status == "accepted"][
            -SPLIT_ATTACK_TURNS:
        ]

    def _quarantine_earlier(
        self, turn: Turn, earlier: Sequence[RawTurnRecord], reasons: Sequence[str]
    ) -> None:
        """Quarantine the active memories the earlier parts of a split attack produced."""
        parts = {r.message_id for r in earlier}
        for record in self.store.scan_active(turn.scope, SPLIT_ATTACK_SCAN):
            if not parts.intersection(record.source_refs.message_ids):
                continue
            quarantined = record.evolve(now=turn.at, status=Status.QUARANTINED)
            try:
                write_audited(
                    self.store,
                    self.audit,
                    self.audited,
                    [Put(quarantined, record.version)],
                    [self._quarantined_line(turn, record.memory_id, reasons)],
                )
            except VersionConflict:
                continue  # changed meanwhile; consolidation and the next scan see it again

    @staticmethod
    def _quarantined_line(turn: Turn, memory_id: str, reasons: Sequence[str]) -> AuditEvent:
        return audit_event(
            turn.scope,
            AuditAction.QUARANTINED,
            turn.at,
            memory_id=memory_id,
            reason=",".join(reasons),
            message_id=turn.message_id,
        )

    def _quarantine(
        self,
        turn: Turn,
        redacted_user: str,
        reasons: Sequence[str],
        outcome: TurnOutcome,
        *,
        whole: bool = True,
    ) -> None:
        """Keep ``redacted_user`` as the turn's quarantined record (for audit, never recalled):
        the whole turn's text, or (``whole=False``) only the sentences that were an order, the
        turn staying accepted for the rest of its words."""
        if whole:
            outcome.status = TurnStatus.QUARANTINED
            outcome.reasons = ["injection:" + r for r in reasons]
        else:
            outcome.reasons += ["injection:" + r for r in reasons]
        record = quarantine_record(turn, redacted_user, reasons)
        line = self._quarantined_line(turn, record.memory_id, reasons)
        if self.store.get(turn.scope, record.memory_id) is None:
            write_audited(self.store, self.audit, self.audited, [Put(record, None)], [line])
        else:  # a redelivered turn: the record is there, its line may not be
            self.audit.append(line)
        outcome.quarantined.append(record.memory_id)

    def _record_drops(
        self, turn: Turn, kept: Sequence[Candidate], drops: Sequence[str], outcome: TurnOutcome
    ) -> None:
        for reason in drops:
            outcome.drop(reason)
        self.observer.gated(turn, kept, drops)

    def _llm_extract(
        self,
        llm: LLM,
        turn: Turn,
        user_text: str,
        assistant_text: str,
        rule_facts: Sequence[Candidate],
        kept: Sequence[Candidate],
        outcome: TurnOutcome,
        *,
        had_pii: bool,
    ) -> list[Candidate]:
        """The model's facts the rules did not already produce, through the same gates
        (:func:`~agentmem.domain.llm_facts.admit`); None from the model falls back to the rules."""
        outcome.llm_calls += 1
        facts = llm.extract(user_text, assistant_text, language(user_text))
        if facts is None:
            outcome.llm_fallbacks += 1
            return []
        admitted = admit(facts, user_text=user_text, rule_facts=rule_facts, kept=kept, had_pii=had_pii)
        if admitted.redacted_kinds:
            outcome.redacted_kinds = sorted(set(outcome.redacted_kinds) | admitted.redacted_kinds)
        self._record_drops(turn, admitted.candidates, admitted.drops, outcome)
        outcome.llm_facts += len(admitted.candidates)
        return admitted.candidates

    def _persist(self, turn: Turn, candidates: list[Candidate], outcome: TurnOutcome, replay: bool) -> None:
        if not candidates:
            return
        vectors = self.embedder.embed_documents([c.content for c in candidates])
        candidates, vectors = self._semantic_gate(turn, candidates, vectors, outcome)
        if not candidates:
            return
        readings = self._read(candidates, vectors)
        candidates = [with_reading(c, r) for c, r in zip(candidates, readings, strict=True)]
        near = NeighbourPool(self.store, self.index, self.neighbour_cache, self.embedder.calibration)
        neighbours = near.gather(turn.scope, candidates, vectors, self.embedder.model_id)
        records = [
            self._record(turn, c, v, i) for i, (c, v) in enumerate(zip(candidates, vectors, strict=True))
        ]
        # Ids come from the message id: a delivery whose L0 line existed may have written them before.
        earlier = self.store.get_many(turn.scope, [r.memory_id for r in records]) if replay else {}
        budget = LlmBudget()
        for cand, vector, record, reading in zip(candidates, vectors, records, readings, strict=True):
            self.observer.classified(cand.content, cand.category_hint, record.category)
            if record.memory_id in earlier:
                outcome.written.append(record.memory_id)
                neighbours.append(record)
                continue
            if self.llm is not None and record.category is Category.GENERAL:
                record = self._refine_category(self.llm, record, outcome, budget)
            decision, other = self._decide(record, vector, neighbours, near, cand, reading, outcome, budget)
            while other is not None and (current := near.confirm(turn.scope, other)) is not other:
                neighbours = swapped(neighbours, other.memory_id, current)  # a card out of date
                decision, other = self._decide(
                    record, vector, neighbours, near, cand, reading, outcome, budget
                )
            stored = record  # what the store holds under record.memory_id after this step
            try:
                if other is not None:  # written back below: read whole, its vector too
                    other = near.full(turn.scope, other)
                if decision is Judgement.DUPLICATE and other is not None:
                    self._reinforce(other, turn, cand.importance)
                    outcome.reinforced.append(other.memory_id)
                    continue
                ask = self.conflicts if other is not None and other.never_decays else None
                replaces = decision in {Judgement.SUPERSEDE, Judgement.REVISE}
                if replaces and other is not None and ask is not None:
                    ask.propose(other, record, turn.at)  # permanent or pinned: asked first (docs/design.md)
                    outcome.drop("pending_confirmation")
                    continue
                if replaces and other is not None:
                    record = self._amend(record, reading, other, revised=decision is Judgement.REVISE)
                    stored = self._supersede(other, record, turn.at)
                    outcome.written.append(record.memory_id)
                    if stored.is_active:  # else a late, older statement went into the history
                        outcome.superseded.append(other.memory_id)
                        neighbours = [n for n in neighbours if n.memory_id != other.memory_id]
                else:
                    self.store.create(record)
                    outcome.written.append(record.memory_id)
            except VersionConflict:
                # Someone changed the neighbour between our read and write: store the fact as
                # new rather than lose it; consolidation will dedup later.
                found = self.store.get(turn.scope, record.memory_id)
                if found is None:
                    self.store.create(record)
                stored = found or record
                outcome.written.append(record.memory_id)
            neighbours.append(stored)

    def _read(self, candidates: Sequence[Candidate], vectors: np.ndarray) -> list[Reading]:
        """Each fact's reading (:mod:`agentmem.domain.reading`), on the vectors it is stored with:
        the heads run only for the model they were trained on."""
        heads = self.reader_heads.for_model(self.embedder.model_id) if self.reader_heads else None
        return [read(c.content, vector=v, heads=heads) for c, v in zip(candidates, vectors, strict=True)]

    def _amend(
        self, record: MemoryRecord, reading: Reading, old: MemoryRecord, *, revised: bool
    ) -> MemoryRecord:
        """A correction that names only the new value ("I meant 8pm") is stored as the statement it
        corrects with that value in place (:func:`~agentmem.domain.conflict.amended`), embedded
        again, so that a question about the topic finds it. So is a terse revision in the same
        conversation ("make it 2 rooms": :meth:`_revised`), so the other values of the statement
        it revises stay current."""
        terse = revised and len(record.content.split()) <= TERSE_WORDS
        text = amended(record.content, old.content) if reading.stance is Stance.CORRECTS or terse else None
        if text is None:
            return record
        vector = self.embedder.embed_documents([text])[0]
        return record.revised(content=text, embedding=tuple(float(x) for x in vector))

    def _semantic_gate(
        self, turn: Turn, candidates: list[Candidate], vectors: np.ndarray, outcome: TurnOutcome
    ) -> tuple[list[Candidate], np.ndarray]:
        """Drop the facts that read as an attack by meaning (the guard's semantic detector, on
        the vectors the facts are stored with: no extra embedding), each audited with its reason."""
        flags = self.guard.semantic(vectors)
        if not any(flags):
            return candidates, vectors
        keep = [i for i, flag in enumerate(flags) if flag is None]
        for flag in flags:
            if flag is not None:
                outcome.drop("semantic_injection")
                append_audit(
                    self.audit,
                    turn.scope,
                    AuditAction.REJECTED,
                    turn.at,
                    reason=flag,
                    message_id=turn.message_id,
                )
        return [candidates[i] for i in keep], vectors[keep]

    def _refine_category(
        self, llm: LLM, record: MemoryRecord, outcome: TurnOutcome, budget: LlmBudget
    ) -> MemoryRecord:
        """Ask the model for a category the rules could only call ``general`` (rules first)."""
        if budget.classify <= 0:
            return record
        budget.classify -= 1
        outcome.llm_calls += 1
        answer = llm.classify(record.content, language(record.content))
        category = parse_category(answer)
        if category is None:
            outcome.llm_fallbacks += 1
            return record
        return record.revised(category=conversational_category(category))

    def _decide(
        self,
        record: MemoryRecord,
        vector: np.ndarray,
        pool: list[MemoryRecord],
        nearby: NeighbourPool,
        cand: Candidate,
        reading: Reading,
        outcome: TurnOutcome,
        budget: LlmBudget,
    ) -> tuple[Judgement, MemoryRecord | None]:
        """The rules decide (:func:`~agentmem.domain.conflict.decide`); where they kept both, the
        model may settle the doubtful pairs, within the turn's budget."""
        fact = NewFact(
            record.content,
            record.category,
            record.key,
            record.value,
            cand.update_strength,
            user_stated=record.source is Source.USER,
            message_id=record.source_refs.message_ids[0] if record.source_refs.message_ids else None,
            reading=reading,
            at=record.valid_from,
            session_id=record.source_refs.session_id,
        )
        cosines = nearby.similarities(record.scope, vector, pool, self.embedder.model_id)
        ranked = rank(vector, pool, self.embedder.calibration, self.embedder.model_id, cosines)
        decision, other = decide(fact, ranked, self.thresholds, on_judge=self.observer.judged)
        if decision is Judgement.KEEP_BOTH and self.conflicts is not None:
            # The rules never let an update replace a pinned memory; asked first, it may.
            pinned = {o.memory_id: o for _, o in ranked if o.pinned}
            unpinned = [(s, replace(o, pinned=False)) for s, o in ranked if o.pinned]
            asked, found = decide(fact, unpinned, self.thresholds) if unpinned else (decision, None)
            if asked is Judgement.SUPERSEDE and found is not None:
                return asked, pinned[found.memory_id]
        if decision is Judgement.KEEP_BOTH and (revised := self._revised(fact, vector, ranked)) is not None:
            return Judgement.REVISE, revised
        if decision is not Judgement.KEEP_BOTH or self.llm is None:
            return decision, other
        for _, old in doubtful_pairs(fact, ranked, self.thresholds):
            if budget.judge <= 0:
                break
            budget.judge -= 1
            outcome.llm_calls += 1
            answer = self.llm.judge_conflict(old.content, record.content, language(record.content))
            if answer is None:
                outcome.llm_fallbacks += 1  # doubtful stays "keep both"
            elif answer is True and allowed(fact, old):  # the model's yes passes the reading too
                return Judgement.SUPERSEDE, old
        return Judgement.KEEP_BOTH, None

    def _revised(self, fact: NewFact, vector: np.ndarray, ranked: Ranked) -> MemoryRecord | None:
        """The statement of this conversation that ``fact`` gives another value to, by the
        revision pair head (learned from how people revise requests in task dialogues: "make it
        the 12th", "try Big 4 instead", most with no change word) over the two statements'
        vectors; the domain names the candidates (:func:`~agentmem.domain.endings.revision_candidates`).
        Reads at most :data:`REVISION_PAIRS` records with their vectors, and only where the
        conversation has a candidate."""
        heads = self.reader_heads.for_model(self.embedder.model_id) if self.reader_heads else None
        if heads is None or fact.reading is None:
            return None
        said = Said(fact.reading, fact.content, fact.at, fact.session_id, fact.message_id)
        candidates = revision_candidates(said, ranked, self.thresholds)[:REVISION_PAIRS]
        if not candidates:
            return None
        scope = candidates[0].scope
        full = self.store.get_many(scope, [o.memory_id for o in candidates])
        best: tuple[float, MemoryRecord] | None = None
        for old in candidates:
            stored = full.get(old.memory_id)
            if stored is None or stored.embedding is None or stored.embedding_model != self.embedder.model_id:
                continue
            p = heads.revises(np.asarray(stored.embedding, dtype=np.float32), vector) or 0.0
            if p >= REVISION and (best is None or p > best[0]):
                best = (p, old)
        return best[1] if best else None

    def _record(self, turn: Turn, cand: Candidate, vector: np.ndarray, ordinal: int) -> MemoryRecord:
        category = conversational_category(classify(cand.content, cand.category_hint))
        model = self.embedder.model_id
        return fact_record(
            turn, cand, ordinal=ordinal, category=category, embedding=vector, embedding_model=model
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

    def _supersede(self, old: MemoryRecord, new: MemoryRecord, at: datetime) -> MemoryRecord:
        """Write ``new`` in place of ``old`` (one transaction) and audit it; returns ``new`` as stored.
        A turn older than ``old`` (SQS does not keep order) is history: ``new`` is written as
        superseded by ``old``, valid until ``old`` began, and ``old`` stays."""
        began = old.valid_from or old.created_at
        if new.valid_from is not None and began is not None and new.valid_from < began:
            late = new.revised(status=Status.SUPERSEDED, superseded_by=old.memory_id, valid_to=began)
            kept = old.evolve(now=max(at, old.updated_at or at), supersedes=(*old.supersedes, new.memory_id))
            self.store.transact([Put(late, None), Put(kept, old.version)])
            return late
        marked = old.evolve(now=at, status=Status.SUPERSEDED, superseded_by=new.memory_id, valid_to=at)
        written = replace(new, supersedes=(old.memory_id,))
        line = audit_event(
            old.scope, AuditAction.SUPERSEDED, at, memory_id=old.memory_id, reason=f"by:{new.memory_id}"
        )
        write_audited(
            self.store, self.audit, self.audited, [Put(written, None), Put(marked, old.version)], [line]
        )
        return written
