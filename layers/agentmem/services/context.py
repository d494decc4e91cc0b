"""Context service (DESIGN §5.4): fill the mode's slots from memories and runtime state, let the
pure assembler apply budgets and render, audit what was injected.

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

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

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
from agentmem.ports import AuditLog, MemoryStore, RuntimeStateStore, SearchIndex, TurnLog
from agentmem.services.conflicts import ConflictService
from agentmem.services.context_slots import SLOT_SOURCES, SlotInputs
from agentmem.services.recall import RecallResult, RecallService, bounded
from agentmem.services.slot_listings import CONFIRM_ROUNDS, SlotListings, list_from_store, list_slots
from agentmem.services.summaries import SummaryService

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ContextResult:
    context: AssembledContext
    memories: list[ScoredMemory]
    degraded: list[str]


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
    parallel: bool = True
    """Fetch the sources on threads (the stores are remote: the latency is the slowest call, not
    the sum). Off for in-process stores, where every fetch is CPU work under one GIL and the
    threads' hand-offs (up to the 5 ms switch interval each) cost more than they overlap."""
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=4), repr=False)
    conflicts: ConflictService | None = None  # pending confirmations become hints
    index: SearchIndex | None = None
    """Where the profile and policy slots are listed from (the store when None or failing):
    :mod:`agentmem.services.slot_listings`."""

    def _submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        if self.parallel:
            return self._pool.submit(fn, *args, **kwargs)
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except Exception as exc:  # delivered by .result(), as a thread's failure would be
            done.set_exception(exc)
        return done

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
        degraded: list[str] = []
        query = bounded(query)  # what retrieval reads of it (also the assembler's language cue)
        schema = SCHEMAS[mode]
        # Sources fetch concurrently: the latency is the slowest source, not the sum.
        recall_f = self._submit(  # what the context shows is confirmed below (_confirm)
            self.recall.recall, scope, query, k=self.recall_k, now=now, as_of=as_of, confirm=False
        )
        listing_f = self._submit(list_slots, self.store, self.index, scope, as_of)
        hints_f = self._submit(self.conflicts.hints, scope) if self.conflicts and as_of is None else None
        state_f = self._submit(self._state, scope, session_id) if session_id else None
        wanted = frozenset(spec.name for spec in schema.slots)
        window_f = (
            self._submit(self.turn_log.recent_turns, scope, session_id, self.window_turns)
            if session_id and self.turn_log is not None and SlotName.SESSION in wanted
            else None
        )
        held_f = (
            self._submit(self.summaries.withheld, scope, session_id)
            if window_f is not None and self.summaries is not None
            else None
        )
        summary_f = (
            self._submit(self.summaries.previous, scope, session_id)
            if session_id and self.summaries is not None and SlotName.PREVIOUS_SESSION in wanted
            else None
        )

        recalled = recall_f.result()
        degraded.extend(recalled.degraded)
        listings: SlotListings = listing_f.result()
        listings.merge(recalled.stored)
        state: RuntimeState | None = None
        if state_f is not None:
            try:
                state = state_f.result()
            except AgentMemError:
                degraded.append("runtime_state")
        window = _settled(window_f, [], "session_window", degraded)
        recorded, withheld = _settled(held_f, (frozenset(), frozenset()), "session_window", degraded)
        previous = _settled(summary_f, None, "session_summary", degraded)
        hints: list[tuple[str, str]] = []
        if hints_f is not None:
            try:
                hints = hints_f.result()
            except AgentMemError:
                degraded.append("conflicts")
        task_budget_chars = next((s.budget_chars for s in schema.slots if s.name is SlotName.TASK_MEM), None)
        rounds = 0
        while True:  # until every memory shown is the store's own (slot_listings.py)
            fetched = SlotInputs(
                query=query,
                now=now,
                wanted=wanted,
                recalled=recalled.memories,
                profile_records=listings.profile,
                policy_records=listings.policy,
                state=state,
                recall=self.recall,
                degraded=degraded,
                scored_by_id={s.record.memory_id: s for s in recalled.memories},
                as_of=as_of,
                window=window,
                recorded=recorded,
                withheld=withheld,
                previous=previous,
                task_budget_chars=task_budget_chars,
                task_memory_tokens=self.task_memory_tokens,
            )
            inputs = {spec.name: SLOT_SOURCES[spec.name](fetched) for spec in schema.slots}
            assembled = assemble(mode, inputs, query=query, unranked=fetched.unranked, confirmations=hints)
            recall_stands, slots_stand = self._confirm(scope, assembled.used_memory_ids, recalled, listings)
            if recall_stands and slots_stand:
                break
            rounds += 1
            last = rounds >= CONFIRM_ROUNDS  # the projection lags far behind: the store answers
            if last:
                listings = list_from_store(self.store, scope, as_of)
            if not recall_stands or last:
                recalled = recalled.again(last)
                degraded.extend(d for d in recalled.degraded if d not in degraded)
                listings.merge(recalled.stored)
        if assembled.used_memory_ids:
            self.audit.append(
                AuditEvent(
                    scope=scope,
                    action=AuditAction.CONTEXT_INJECTED,
                    at=now,
                    details={"mode": mode.value, "memory_ids": list(assembled.used_memory_ids)},
                )
            )
        scored_by_id = fetched.scored_by_id
        memories = [scored_by_id[i] for i in assembled.used_memory_ids if i in scored_by_id]
        return ContextResult(assembled, memories, sorted(set(degraded)))

    def _confirm(
        self, scope: Scope, shown: Sequence[str], recalled: RecallResult, listings: SlotListings
    ) -> tuple[bool, bool]:
        """Read from the store, in one batch, the memories the context shows that are known only
        from the index's cards: recall's (its answer is not confirmed) and the slots' listings'.
        Whether recall's answer and the listings stand (each shown card the store's version)."""
        wanted, reads = set(shown), recalled.reads
        cards = reads.unread(s.record for s in recalled.memories if s.record.memory_id in wanted)
        unread = listings.unread(shown)
        ids = list(dict.fromkeys([*(r.memory_id for r in cards), *unread]))
        if not ids:
            return True, True
        found = self.store.get_many(scope, ids, embeddings=False)
        recall_stands = reads.check(cards, found)
        slots_stand = listings.check(unread, found)
        listings.merge({m: found.get(m) for m in ids})
        return recall_stands, slots_stand

    def _state(self, scope: Scope, session_id: str) -> RuntimeState | None:
        return self.runtime.get(scope, session_id) if self.runtime is not None else None


def _settled(future: Future[T] | None, default: T, component: str, degraded: list[str]) -> T:
    """The future's result; ``default`` (and ``component`` degraded) when it failed or is None."""
    if future is None:
        return default
    try:
        return future.result()
    except AgentMemError:
        degraded.append(component)
        return default
