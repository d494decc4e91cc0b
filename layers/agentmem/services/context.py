"""Context service (DESIGN §5.4): fill the mode's slots from memories and runtime state, let the
pure assembler apply budgets and render, audit what was injected.

Each slot has one source in :data:`SLOT_SOURCES`: a function from what one build fetched
(:class:`SlotInputs`) to the slot's items, best first. ``build`` fetches once, concurrently, and
asks the source of every slot in the mode's schema; a slot's definition (priority, headings) is
its :class:`~agentmem.domain.context.SlotDef`.

Session memory (docs/session-memory.md): given a ``session_id``, the chat mode's Session slot is the
session window (the last ``window_turns`` turns of the session from the L0 raw log, redacted as
stored, oldest first: it comes from the store, so a restarted process rebuilds it), and its
PreviousSession slot the scene summary of the session before (:mod:`agentmem.services.summaries`);
the react mode's task notes are compressed past ``task_memory_tokens`` (:mod:`agentmem.domain.compress`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, TypeVar

from agentmem.domain.authority import is_instruction
from agentmem.domain.compress import compress_notes
from agentmem.domain.context import SCHEMAS, AssembledContext, Mode, SaidBy, SlotItem, SlotName, assemble
from agentmem.domain.guards import detect_injection
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
from agentmem.domain.summary import summary_lines
from agentmem.domain.text import language
from agentmem.errors import AgentMemError
from agentmem.ports import AuditLog, MemoryStore, RawTurnRecord, RuntimeStateStore, TurnLog
from agentmem.services.recall import RecallService, bounded
from agentmem.services.summaries import LoadedSummary, SummaryService

PROFILE_CATEGORIES = (Category.IDENTITY, Category.PREFERENCE)
LISTING_LIMIT = 100
PROFILE_SHOWN = 10  # profile memories recall leaves out (at most this many show in the profile slot)
PROFILE_RANKED = 30
"""The profile listing's best this many are explained and offered to the slot (which shows at most
10, skipping expired and over-long ones); the others are scored, then counted as dropped."""
RECENT_CALLS_SHOWN = 5
WINDOW_LINE = 300  # characters of one side of one turn in the session window (longer: cut)
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
        self, scope: Scope, query: str, *, mode: Mode, now: datetime, session_id: str | None = None
    ) -> ContextResult:
        degraded: list[str] = []
        query = bounded(query)  # what retrieval reads of it (also the assembler's language cue)
        schema = SCHEMAS[mode]
        # Sources fetch concurrently: the latency is the slowest source, not the sum.
        recall_f = self._submit(self.recall.recall, scope, query, k=self.recall_k, now=now)
        listing_f = self._submit(self._listing, scope)
        state_f = self._submit(self._state, scope, session_id) if session_id else None
        wanted = {spec.name for spec in schema.slots}
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
        profile_records, policy_records = listing_f.result()
        state: RuntimeState | None = None
        if state_f is not None:
            try:
                state = state_f.result()
            except AgentMemError:
                degraded.append("runtime_state")
        window = _settled(window_f, [], "session_window", degraded)
        recorded, withheld = _settled(held_f, (frozenset(), frozenset()), "session_window", degraded)
        previous = _settled(summary_f, None, "session_summary", degraded)
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
            window=window,
            recorded=recorded,
            withheld=withheld,
            previous=previous,
            task_budget_chars=next(
                (s.budget_chars for s in schema.slots if s.name is SlotName.TASK_MEM), None
            ),
            task_memory_tokens=self.task_memory_tokens,
        )
        inputs = {spec.name: SLOT_SOURCES[spec.name](fetched) for spec in schema.slots}
        assembled = assemble(mode, inputs, query=query, unranked=fetched.unranked)
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

    def _listing(self, scope: Scope) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        profile: list[MemoryRecord] = []
        for category in PROFILE_CATEGORIES:
            profile += self.store.list(
                scope,
                statuses=(Status.ACTIVE,),
                category=category.value,
                limit=LISTING_LIMIT,
                embeddings=False,
            ).items
        policy = self.store.list(
            scope,
            statuses=(Status.ACTIVE,),
            category=Category.POLICY.value,
            limit=LISTING_LIMIT,
            embeddings=False,
        ).items
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
    _ranked: dict[SlotName, list[ScoredMemory]] = field(default_factory=dict)
    window: list[RawTurnRecord] = field(default_factory=list)  # oldest first
    recorded: frozenset[str] = frozenset()  # turns of the window the scene log holds (judged at ingest)
    withheld: frozenset[str] = frozenset()  # of those, the ones ingest withheld
    previous: LoadedSummary | None = None
    task_budget_chars: int | None = None
    task_memory_tokens: int = 200

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
        ranked = self.recall.rank(records, self.query, now=self.now, degraded=self.degraded, top=top)
        self.scored_by_id.update({s.record.memory_id: s for s in ranked})
        return ranked


SlotSource = Callable[[SlotInputs], list[SlotItem]]


def _settled(future: Future[T] | None, default: T, component: str, degraded: list[str]) -> T:
    """The future's result; ``default`` (and ``component`` degraded) when it failed or is None."""
    if future is None:
        return default
    try:
        return future.result()
    except AgentMemError:
        degraded.append(component)
        return default


# Who a memory's line is attributed to, by the memory's source.
SAID_BY: dict[Source, SaidBy] = {
    Source.USER: SaidBy.USER,
    Source.EXPLICIT: SaidBy.USER,
    Source.EXCHANGE: SaidBy.CONVERSATION,
    Source.ADMIN: SaidBy.OPERATOR,
    Source.CONSOLIDATION: SaidBy.SUMMARY,
}


def _item(scored: ScoredMemory, said_by: SaidBy | None = None) -> SlotItem:
    record = scored.record
    return SlotItem(
        text=record.content,
        score=scored.score,
        memory_id=record.memory_id,
        inferred=record.confidence is Confidence.INFERRED,
        expired=record.confidence is Confidence.EXPIRED,
        said_by=said_by or SAID_BY[record.source],
        said_on=_said_on(record),
    )


def _said_on(record: MemoryRecord) -> date | None:
    at = record.valid_from or record.created_at
    return at.date() if at is not None else None


def _constraints(fetched: SlotInputs) -> list[SlotItem]:
    """Authorised policy memories only (:func:`~agentmem.domain.authority.is_instruction`): the
    one slot whose lines are rules, attributed to the operator who set them."""
    return [_item(s, SaidBy.OPERATOR) for s in fetched.ranked_policy() if is_instruction(s.record)]


def _profile(fetched: SlotInputs) -> list[SlotItem]:
    return [_item(s) for s in fetched.ranked_profile()]


def _recall(fetched: SlotInputs) -> list[SlotItem]:
    """Recalled memories, without those the constraints and profile slots of this mode show."""
    shown: set[str] = set()
    if SlotName.CONSTRAINTS in fetched.wanted:
        shown.update(s.record.memory_id for s in fetched.ranked_policy() if is_instruction(s.record))
    if SlotName.PROFILE in fetched.wanted:
        shown.update(s.record.memory_id for s in fetched.ranked_profile()[:PROFILE_SHOWN])
    return [_item(s) for s in fetched.recalled if s.record.memory_id not in shown]


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
    """The task notes of the session state, newest first; past ``task_memory_tokens`` (or the
    slot's character budget) compressed, the oldest folded first into their key sentences
    (:func:`~agentmem.domain.compress.compress_notes`) instead of cut."""
    notes = fetched.state.task_memory if fetched.state is not None else ()
    kept = compress_notes(notes, max_tokens=fetched.task_memory_tokens, max_chars=fetched.task_budget_chars)
    return [SlotItem(text=note) for note in reversed(kept.notes)]


def _cut_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WINDOW_LINE else text[: WINDOW_LINE - 1] + "…"


def _quotable(turn: RawTurnRecord, fetched: SlotInputs) -> bool:
    """Whether the window may quote ``turn``: the write path's verdict when the scene log holds
    it (quarantined turns, attacks split over turns and injected replies are withheld), else
    (not recorded yet, no scene store) the guard's rules on both sides, here."""
    if turn.status != "accepted" or turn.message_id in fetched.withheld:
        return False
    if turn.message_id in fetched.recorded:
        return True
    return not any(detect_injection(side).is_injection for side in (turn.user, turn.assistant) if side)


def _session(fetched: SlotInputs) -> list[SlotItem]:
    """The session window, newest first (the slot shows it oldest first): each turn's user line,
    then the assistant's (when it said anything). A turn that reads as an injection is left out
    whole (:func:`_quotable`): the window quotes what the memory kept, never an attack."""
    items: list[SlotItem] = []
    for turn in reversed(fetched.window):
        if not _quotable(turn, fetched):
            continue
        sides = [(turn.user, SaidBy.USER, "u")]
        if turn.assistant.strip():
            sides.append((turn.assistant, SaidBy.ASSISTANT, "a"))
        for text, said_by, side in reversed(sides):
            items.append(
                SlotItem(
                    text=_cut_line(text),
                    said_by=said_by,
                    said_on=turn.at.date(),
                    item_id=f"{turn.message_id}:{side}",
                )
            )
    return items


def _previous_session(fetched: SlotInputs) -> list[SlotItem]:
    """The scene summary of the session before this one, in the query's language: a header, the
    facts it produced (still live) and its key entities."""
    if fetched.previous is None:
        return []
    lang = language(fetched.query) if fetched.query.strip() else "en"
    lines = summary_lines(fetched.previous.summary, fetched.previous.records, lang)
    return [SlotItem(text=line.text, memory_id=line.memory_id) for line in lines]


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
    SlotName.SESSION: _session,
    SlotName.PREVIOUS_SESSION: _previous_session,
}
