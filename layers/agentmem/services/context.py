"""Context service (docs/design.md, "The read path"): fill the mode's slots from memories and
runtime state, let the pure assembler apply budgets and render, audit what was injected.

Each slot has one source in :data:`SLOT_SOURCES`: a function from what one build fetched
(:class:`SlotInputs`) to the slot's items, best first. ``build`` fetches once, concurrently, and
asks the source of every slot in the mode's schema; a slot's definition (priority, headings) is
its :class:`~agentmem.domain.context.SlotDef`.

``as_of`` evaluates the context as of that time: recall and the listings answer with the
memories valid then (superseded ones where they were true then). Pending conflicts with a
permanent or pinned memory (:mod:`agentmem.services.conflicts`) become confirmation questions
at the top of a present-time context.
Session memory (docs/session-memory.md): given a ``session_id``, the chat mode's Session slot is the
session window (the last ``window_turns`` turns of the session from the L0 raw log, redacted as
stored, oldest first: it comes from the store, so a restarted process rebuilds it), and its
PreviousSession slot the scene summary of the session before (:mod:`agentmem.services.summaries`);
the react mode's task notes are compressed past ``task_memory_tokens`` (:mod:`agentmem.domain.compress`).
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from agentmem.domain.context import (
    SCHEMAS,
    AssembledContext,
    Mode,
    SlotName,
    assemble,
)
from agentmem.domain.models import (
    AuditAction,
    AuditEvent,
    Scope,
    ScoredMemory,
)
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import AgentMemError
from agentmem.ports import AuditLog, CardStore, MemoryStore, RawTurnRecord, RuntimeStateStore, TurnLog
from agentmem.services.conflicts import ConflictService
from agentmem.services.context_slots import SLOT_SOURCES, SlotInputs
from agentmem.services.executors import InlineExecutor
from agentmem.services.reads import Degraded, ReadSession
from agentmem.services.recall import Candidates, RecallService, bounded
from agentmem.services.slot_listings import CONFIRM_ROUNDS, SlotListings, list_from_store, list_slots
from agentmem.services.summaries import LoadedSummary, SummaryService

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ContextResult:
    context: AssembledContext
    memories: list[ScoredMemory]
    degraded: list[str]


@dataclass(frozen=True, slots=True)
class _Fetched:
    """What a build fetched besides recall and the listings (each a source's answer, or its
    default when it failed or was not asked)."""

    state: RuntimeState | None
    window: list[RawTurnRecord]
    recorded: frozenset[str]
    withheld: frozenset[str]
    previous: LoadedSummary | None
    hints: list[tuple[str, str]]


@dataclass
class ContextService:
    store: MemoryStore
    recall: RecallService
    audit: AuditLog
    runtime: RuntimeStateStore | None = None
    recall_k: int = 10
    turn_log: TurnLog | None = None  # the session window's source (L0)
    summaries: SummaryService | None = None  # the previous session's summary
    window_turns: int = 5
    task_memory_tokens: int = 200
    executor: Executor = field(default_factory=InlineExecutor, repr=False)
    """Where the sources are fetched (:mod:`agentmem.services.executors`): a thread pool over
    remote stores, inline over in-process ones; the composition root chooses."""
    conflicts: ConflictService | None = None  # pending confirmations become hints
    index: CardStore | None = None
    """Where the profile and policy slots are listed from (the store when None or failing):
    :mod:`agentmem.services.slot_listings`."""

    def build(
        self,
        scope: Scope,
        query: str,
        *,
        mode: Mode,
        now: datetime,
        session_id: str | None = None,
        as_of: datetime | None = None,
    ) -> ContextResult:
        """The context of ``mode`` for ``query``: fetch the sources, assemble, confirm what is
        shown against the store, and rank again with the store's copies until it stands
        (at most :data:`CONFIRM_ROUNDS` times; then the store answers)."""
        query = bounded(query)  # what retrieval reads of it (also the assembler's language cue)
        session = self.recall.session(scope)
        submit = self.executor.submit
        # 1. Fetch: recall's candidates, the slot listings and the session's sources, concurrently
        #    on a pool (the latency is the slowest source, not the sum).
        recall_f = submit(self._recall, session, query, now, as_of)
        listing_f = submit(list_slots, session, self.index, as_of)
        others = self._fetch(session, scope, mode, session_id, as_of)
        candidates, recalled = recall_f.result()
        listings = listing_f.result()
        listings.merge(session.stored)  # read-your-writes: the store's copies recall read
        # 2. Assemble, 3. confirm what is shown, 4. rank again with the store's copies.
        assembled, scored = self._assemble(mode, query, now, as_of, recalled, listings, others, session)
        for round_ in range(1, CONFIRM_ROUNDS + 1):
            if not session.confirm(assembled.used_memory_ids):
                break  # every memory shown is the store's own
            if round_ < CONFIRM_ROUNDS:
                recalled = self.recall.rank(session, candidates)
                listings.merge(session.stored)
            else:  # the projection lags far behind: the store answers
                listings = list_from_store(self.store, scope, as_of)
                recalled = self.recall.rank_confirmed(session, candidates)
            assembled, scored = self._assemble(mode, query, now, as_of, recalled, listings, others, session)
        # 5. Audit what was injected.
        if assembled.used_memory_ids:
            self.audit.append(
                AuditEvent(
                    scope=scope,
                    action=AuditAction.CONTEXT_INJECTED,
                    at=now,
                    details={"mode": mode.value, "memory_ids": list(assembled.used_memory_ids)},
                )
            )
        memories = [scored[i] for i in assembled.used_memory_ids if i in scored]
        return ContextResult(assembled, memories, sorted(session.degraded.names()))

    def _recall(
        self, session: ReadSession, query: str, now: datetime, as_of: datetime | None
    ) -> tuple[Candidates, list[ScoredMemory]]:
        """Recall's candidates and its answer ranked on them, unconfirmed (the build confirms
        only what it shows)."""
        candidates = self.recall.gather(session, query, k=self.recall_k, now=now, as_of=as_of)
        return candidates, self.recall.rank(session, candidates)

    def _fetch(
        self, session: ReadSession, scope: Scope, mode: Mode, session_id: str | None, as_of: datetime | None
    ) -> _Fetched:
        """The session state, the session window, the previous session's summary and the pending
        confirmations, as the mode asks for them; each that fails is degraded, never an error."""
        submit, wanted = self.executor.submit, frozenset(spec.name for spec in SCHEMAS[mode].slots)
        hints_f = submit(self.conflicts.hints, scope) if self.conflicts and as_of is None else None
        state_f = submit(self._state, scope, session_id) if session_id else None
        window_f = (
            submit(self.turn_log.recent_turns, scope, session_id, self.window_turns)
            if session_id and self.turn_log is not None and SlotName.SESSION in wanted
            else None
        )
        held_f = (
            submit(self.summaries.withheld, scope, session_id)
            if session_id and window_f is not None and self.summaries is not None
            else None
        )
        summary_f = (
            submit(self.summaries.previous, scope, session_id)
            if session_id and self.summaries is not None and SlotName.PREVIOUS_SESSION in wanted
            else None
        )
        degraded = session.degraded
        recorded, withheld = _settled(held_f, (frozenset(), frozenset()), "session_window", degraded)
        return _Fetched(
            state=_settled(state_f, None, "runtime_state", degraded),
            window=_settled(window_f, [], "session_window", degraded),
            recorded=recorded,
            withheld=withheld,
            previous=_settled(summary_f, None, "session_summary", degraded),
            hints=_settled(hints_f, [], "conflicts", degraded),
        )

    def _assemble(
        self,
        mode: Mode,
        query: str,
        now: datetime,
        as_of: datetime | None,
        recalled: list[ScoredMemory],
        listings: SlotListings,
        others: _Fetched,
        session: ReadSession,
    ) -> tuple[AssembledContext, dict[str, ScoredMemory]]:
        """Fill each slot of the mode's schema from its source (:data:`SLOT_SOURCES`) and
        assemble within budgets; with the score of every memory ranked on the way, by id."""
        schema = SCHEMAS[mode]
        fetched = SlotInputs(
            query=query,
            now=now,
            wanted=frozenset(spec.name for spec in schema.slots),
            recalled=recalled,
            profile_records=listings.profile,
            policy_records=listings.policy,
            state=others.state,
            recall=self.recall,
            degraded=session.degraded,
            scored_by_id={s.record.memory_id: s for s in recalled},
            as_of=as_of,
            window=others.window,
            recorded=others.recorded,
            withheld=others.withheld,
            previous=others.previous,
            task_budget_chars=next(
                (s.budget_chars for s in schema.slots if s.name is SlotName.TASK_MEM), None
            ),
            task_memory_tokens=self.task_memory_tokens,
        )
        inputs = {spec.name: SLOT_SOURCES[spec.name](fetched) for spec in schema.slots}
        assembled = assemble(mode, inputs, query=query, unranked=fetched.unranked, confirmations=others.hints)
        return assembled, fetched.scored_by_id

    def _state(self, scope: Scope, session_id: str) -> RuntimeState | None:
        return self.runtime.get(scope, session_id) if self.runtime is not None else None


def _settled(future: Future[T] | None, default: T, component: str, degraded: Degraded) -> T:
    """The future's result; ``default`` (and ``component`` degraded) when it failed or is None."""
    if future is None:
        return default
    try:
        return future.result()
    except AgentMemError:
        degraded.add(component)
        return default
