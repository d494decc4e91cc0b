"""The context's slot sources (:data:`SLOT_SOURCES`): each a function from what one build
fetched (:class:`SlotInputs`) to the slot's items, best first — the memories' lines (attributed,
dated, hedged where inferred or expired), the plan and tool state of the session, the session
window and the previous session's summary (docs/session-memory.md), the task notes compressed
past ``task_memory_tokens`` (:mod:`agentmem.domain.compress`). Used by
:class:`agentmem.services.context.ContextService`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from agentmem.domain.authority import is_instruction
from agentmem.domain.compress import compress_notes
from agentmem.domain.context import (
    SaidBy,
    SlotItem,
    SlotName,
    is_about,
)
from agentmem.domain.guards import detect_injection
from agentmem.domain.models import (
    Confidence,
    MemoryRecord,
    ScoredMemory,
    Source,
)
from agentmem.domain.runtime_state import RuntimeState
from agentmem.domain.summary import summary_lines
from agentmem.domain.text import language
from agentmem.ports import RawTurnRecord
from agentmem.services.reads import Degraded
from agentmem.services.recall import RecallService
from agentmem.services.summaries import LoadedSummary

PROFILE_SHOWN = 10  # profile memories recall leaves out (at most this many show in the profile slot)
PROFILE_RANKED = 30
"""The profile listing's best this many are explained and offered to the slot (which shows at most
10, skipping expired and over-long ones); the others are scored, then counted as dropped."""
RECENT_CALLS_SHOWN = 5
WINDOW_LINE = 300  # characters of one side of one turn in the session window (longer: cut)


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
    degraded: Degraded
    scored_by_id: dict[str, ScoredMemory]
    unranked: dict[SlotName, int] = field(default_factory=dict)
    as_of: datetime | None = None
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
        ranked = self.recall.rank_listing(
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


def _quoted(text: str) -> str:
    """A session state's value as quoted data: the caller's text between quotes it cannot close
    (its own curly quotes become straight ones), so a goal, a parameter or a call status reads as
    what the state holds, never as an order of the context."""
    return "“" + text.replace("“", '"').replace("”", '"') + "”"


def _planner(fetched: SlotInputs) -> list[SlotItem]:
    """The task slot of the session state, one line per part that is set, every value quoted."""
    plan = fetched.state.plan if fetched.state is not None else None
    if plan is None:
        return []
    lines = []
    if plan.goal:
        lines.append(f"goal: {_quoted(plan.goal)}")
    if plan.step:
        lines.append(f"current step: {_quoted(plan.step)}")
    if plan.done:
        lines.append("done: " + "; ".join(_quoted(d) for d in plan.done))
    if plan.pending:
        lines.append("pending: " + "; ".join(_quoted(p) for p in plan.pending))
    if plan.params:
        lines.append(
            "active params: " + ", ".join(f"{_quoted(k)}={_quoted(str(v))}" for k, v in plan.params.items())
        )
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
        lines.append("available: " + ", ".join(_quoted(t) for t in tools.available))
    for call in tools.recent_calls[-RECENT_CALLS_SHOWN:]:
        tool = "?" if call.tool is None else _quoted(call.tool)
        lines.append(f"{tool}: {'?' if call.status is None else _quoted(call.status)}")
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
