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
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, TypeVar

from agentmem.domain.authority import is_instruction
from agentmem.domain.context import (
    SCHEMAS,
    AssembledContext,
    Mode,
    SaidBy,
    SlotItem,
    SlotName,
    assemble,
    is_about,
)
from agentmem.domain.models import (
    AuditAction,
    AuditEvent,
    Category,
    Confidence,
    MemoryRecord,
    Scope,
    ScoredMemory,
    Source,
    Status,
)
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import AgentMemError
from agentmem.ports import AuditLog, MemoryStore, RuntimeStateStore
from agentmem.services.conflicts import ConflictService
from agentmem.services.recall import RecallService, bounded

PROFILE_CATEGORIES = (Category.IDENTITY, Category.PREFERENCE)
LISTING_LIMIT = 100
PROFILE_SHOWN = 10  # profile memories recall leaves out (at most this many show in the profile slot)
PROFILE_RANKED = 30
"""The profile listing's best this many are explained and offered to the slot (which shows at most
10, skipping expired and over-long ones); the others are scored, then counted as dropped."""
RECENT_CALLS_SHOWN = 5
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
    parallel: bool = True
    """Fetch the sources on threads (the stores are remote: the latency is the slowest call, not
    the sum). Off for in-process stores, where every fetch is CPU work under one GIL and the
    threads' hand-offs (up to the 5 ms switch interval each) cost more than they overlap."""
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=4), repr=False)
    conflicts: ConflictService | None = None  # pending confirmations become hints

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
        recall_f = self._submit(self.recall.recall, scope, query, k=self.recall_k, now=now, as_of=as_of)
        listing_f = self._submit(self._listing, scope, as_of)
        hints_f = self._submit(self.conflicts.hints, scope) if self.conflicts and as_of is None else None
        state_f = self._submit(self._state, scope, session_id) if session_id else None

        recalled = recall_f.result()
        degraded.extend(recalled.degraded)
        profile_records, policy_records = listing_f.result()
        state: RuntimeState | None = None
        if state_f is not None:
            try:
                state = state_f.result()
            except AgentMemError:
                degraded.append("runtime_state")
        fetched = SlotInputs(
            query=query,
            now=now,
            wanted=frozenset(spec.name for spec in schema.slots),
            recalled=recalled.memories,
            profile_records=profile_records,
            policy_records=policy_records,
            state=state,
            recall=self.recall,
            degraded=degraded,
            scored_by_id={s.record.memory_id: s for s in recalled.memories},
            as_of=as_of,
        )
        inputs = {spec.name: SLOT_SOURCES[spec.name](fetched) for spec in schema.slots}
        hints: list[tuple[str, str]] = []
        if hints_f is not None:
            try:
                hints = hints_f.result()
            except AgentMemError:
                degraded.append("conflicts")
        assembled = assemble(mode, inputs, query=query, unranked=fetched.unranked, confirmations=hints)
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

    def _listing(
        self, scope: Scope, as_of: datetime | None = None
    ) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        """The profile and policy listings (as of ``as_of``: those valid then, superseded included)."""
        statuses = (Status.ACTIVE,) if as_of is None else (Status.ACTIVE, Status.SUPERSEDED)
        profile: list[MemoryRecord] = []
        for category in PROFILE_CATEGORIES:
            profile += self.store.list(
                scope,
                statuses=statuses,
                category=category.value,
                limit=LISTING_LIMIT,
                embeddings=False,
            ).items
        policy = self.store.list(
            scope,
            statuses=statuses,
            category=Category.POLICY.value,
            limit=LISTING_LIMIT,
            embeddings=False,
        ).items
        if as_of is not None:
            profile = [r for r in profile if r.valid_at(as_of)]
            policy = [r for r in policy if r.valid_at(as_of)]
        return profile, policy

    def _state(self, scope: Scope, session_id: str) -> RuntimeState | None:
        return self.runtime.get(scope, session_id) if self.runtime is not None else None


@dataclass
class SlotInputs:
    """What one build fetched, shared by the slot sources. A ranked listing is computed on first
    use and kept, so a slot and the recall slot (which leaves out what the listings show) rank
    it once; ranking records what degraded in ``degraded`` and the scores in ``scored_by_id``."""

    query: str
    now: datetime
    wanted: frozenset[SlotName]
    recalled: list[ScoredMemory]
    profile_records: list[MemoryRecord]
    policy_records: list[MemoryRecord]
    state: RuntimeState | None
    recall: RecallService
    degraded: list[str]
    scored_by_id: dict[str, ScoredMemory]
    unranked: dict[SlotName, int] = field(default_factory=dict)
    as_of: datetime | None = None
    _ranked: dict[SlotName, list[ScoredMemory]] = field(default_factory=dict)

    def ranked_policy(self) -> list[ScoredMemory]:
        """The policy listing, most important first."""
        if SlotName.CONSTRAINTS not in self._ranked:
            ranked = self._rank(self.policy_records)
            ranked.sort(key=lambda s: (s.record.importance, s.score), reverse=True)
            self._ranked[SlotName.CONSTRAINTS] = ranked
        return self._ranked[SlotName.CONSTRAINTS]

    def ranked_profile(self) -> list[ScoredMemory]:
        """The identity and preference listing, best match first."""
        if SlotName.PROFILE not in self._ranked:
            ranked = self._rank(self.profile_records, PROFILE_RANKED)
            self._ranked[SlotName.PROFILE] = ranked
            self.unranked[SlotName.PROFILE] = max(0, len(self.profile_records) - len(ranked))
        return self._ranked[SlotName.PROFILE]

    def _rank(self, records: list[MemoryRecord], top: int | None = None) -> list[ScoredMemory]:
        ranked = self.recall.rank(
            records, self.query, now=self.now, degraded=self.degraded, top=top, as_of=self.as_of
        )
        self.scored_by_id.update({s.record.memory_id: s for s in ranked})
        return ranked


SlotSource = Callable[[SlotInputs], list[SlotItem]]


# Who a memory's line is attributed to, by the memory's source.
SAID_BY: dict[Source, SaidBy] = {
    Source.USER: SaidBy.USER,
    Source.EXPLICIT: SaidBy.USER,
    Source.EXCHANGE: SaidBy.CONVERSATION,
    Source.ADMIN: SaidBy.OPERATOR,
    Source.CONSOLIDATION: SaidBy.SUMMARY,
}


def _item(scored: ScoredMemory, said_by: SaidBy | None = None, *, query: str = "") -> SlotItem:
    """A memory's line; an expired memory is marked ``about`` when the query asks about it."""
    record = scored.record
    expired = record.confidence is Confidence.EXPIRED
    return SlotItem(
        text=record.content,
        score=scored.score,
        memory_id=record.memory_id,
        inferred=record.confidence is Confidence.INFERRED,
        expired=expired,
        about=expired and is_about(query, record.content, scored.components.get("semantic", 0.0)),
        said_by=said_by or SAID_BY[record.source],
        said_on=_said_on(record),
    )


def _said_on(record: MemoryRecord) -> date | None:
    at = record.valid_from or record.created_at
    return at.date() if at is not None else None


def _constraints(fetched: SlotInputs) -> list[SlotItem]:
    """Authorised policy memories only (:func:`~agentmem.domain.authority.is_instruction`): the
    one slot whose lines are rules, attributed to the operator who set them."""
    return [
        _item(s, SaidBy.OPERATOR, query=fetched.query)
        for s in fetched.ranked_policy()
        if is_instruction(s.record)
    ]


def _profile(fetched: SlotInputs) -> list[SlotItem]:
    return [_item(s, query=fetched.query) for s in fetched.ranked_profile()]


def _recall(fetched: SlotInputs) -> list[SlotItem]:
    """Recalled memories, without those the constraints and profile slots of this mode show."""
    shown: set[str] = set()
    if SlotName.CONSTRAINTS in fetched.wanted:
        shown.update(s.record.memory_id for s in fetched.ranked_policy() if is_instruction(s.record))
    if SlotName.PROFILE in fetched.wanted:
        shown.update(s.record.memory_id for s in fetched.ranked_profile()[:PROFILE_SHOWN])
    return [_item(s, query=fetched.query) for s in fetched.recalled if s.record.memory_id not in shown]


def _planner(fetched: SlotInputs) -> list[SlotItem]:
    """The task slot of the session state, one line per part that is set."""
    plan = fetched.state.plan if fetched.state is not None else None
    if plan is None:
        return []
    lines = []
    if plan.goal:
        lines.append(f"goal: {plan.goal}")
    if plan.step:
        lines.append(f"current step: {plan.step}")
    if plan.done:
        lines.append("done: " + "; ".join(plan.done))
    if plan.pending:
        lines.append("pending: " + "; ".join(plan.pending))
    if plan.params:
        lines.append("active params: " + ", ".join(f"{k}={v}" for k, v in plan.params.items()))
    return [SlotItem(text=line) for line in lines]


def _task_mem(fetched: SlotInputs) -> list[SlotItem]:
    """The task-memory ring buffer of the session state, newest first."""
    notes = fetched.state.task_memory if fetched.state is not None else ()
    return [SlotItem(text=note) for note in reversed(notes)]


def _tool_state(fetched: SlotInputs) -> list[SlotItem]:
    """The available tools and the last few calls of the session state."""
    tools = fetched.state.tool_state if fetched.state is not None else None
    if tools is None:
        return []
    lines = []
    if tools.available:
        lines.append("available: " + ", ".join(tools.available))
    for call in tools.recent_calls[-RECENT_CALLS_SHOWN:]:
        lines.append(
            f"{'?' if call.tool is None else call.tool}: {'?' if call.status is None else call.status}"
        )
    return [SlotItem(text=line) for line in lines]


# One source per slot; every slot of every schema must have one (tests/unit/test_context_assembler.py).
SLOT_SOURCES: dict[SlotName, SlotSource] = {
    SlotName.CONSTRAINTS: _constraints,
    SlotName.PLANNER: _planner,
    SlotName.TASK_MEM: _task_mem,
    SlotName.TOOL_STATE: _tool_state,
    SlotName.PROFILE: _profile,
    SlotName.RECALL: _recall,
}
