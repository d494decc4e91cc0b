"""Context service (DESIGN §5.4): fill the mode's slots from memories and runtime state, let the
pure assembler apply budgets and render, audit what was injected."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentmem.domain.context import SCHEMAS, AssembledContext, Mode, SlotItem, SlotName, assemble
from agentmem.domain.models import AuditEvent, Category, Confidence, MemoryRecord, Scope, ScoredMemory, Status
from agentmem.errors import AgentMemError
from agentmem.ports import AuditLog, MemoryStore, RuntimeStateStore
from agentmem.services.recall import RecallService

PROFILE_CATEGORIES = (Category.IDENTITY, Category.PREFERENCE)
LISTING_LIMIT = 100


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
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=4), repr=False)

    def build(
        self, scope: Scope, query: str, *, mode: Mode, now: datetime, session_id: str | None = None
    ) -> ContextResult:
        degraded: list[str] = []
        schema = SCHEMAS[mode]
        wanted = {spec.name for spec in schema.slots}
        # Slots fill concurrently: the latency is the slowest source, not the sum.
        recall_f = self._pool.submit(self.recall.recall, scope, query, k=self.recall_k, now=now)
        listing_f = self._pool.submit(self._listing, scope)
        state_f = self._pool.submit(self._state, scope, session_id) if session_id else None

        recalled = recall_f.result()
        degraded.extend(recalled.degraded)
        profile_records, policy_records = listing_f.result()
        inputs: dict[SlotName, list[SlotItem]] = {}
        scored_by_id: dict[str, ScoredMemory] = {s.record.memory_id: s for s in recalled.memories}
        used: set[str] = set()
        if SlotName.CONSTRAINTS in wanted:
            ranked = self.recall.rank(policy_records, query, now=now, degraded=degraded)
            ranked.sort(key=lambda s: (s.record.importance, s.score), reverse=True)
            scored_by_id.update({s.record.memory_id: s for s in ranked})
            inputs[SlotName.CONSTRAINTS] = [_item(s) for s in ranked]
            used.update(s.record.memory_id for s in ranked)
        if SlotName.PROFILE in wanted:
            ranked = self.recall.rank(profile_records, query, now=now, degraded=degraded)
            scored_by_id.update({s.record.memory_id: s for s in ranked})
            inputs[SlotName.PROFILE] = [_item(s) for s in ranked]
            used.update(s.record.memory_id for s in ranked[:10])
        inputs[SlotName.RECALL] = [_item(s) for s in recalled.memories if s.record.memory_id not in used]
        if state_f is not None:
            try:
                inputs.update(_state_items(state_f.result()))
            except AgentMemError:
                degraded.append("runtime_state")
        assembled = assemble(mode, inputs, query=query)
        if assembled.used_memory_ids:
            self.audit.append(
                AuditEvent(
                    scope=scope,
                    action="context_injected",
                    at=now,
                    details={"mode": mode.value, "memory_ids": list(assembled.used_memory_ids)},
                )
            )
        memories = [scored_by_id[i] for i in assembled.used_memory_ids if i in scored_by_id]
        return ContextResult(assembled, memories, sorted(set(degraded)))

    def _listing(self, scope: Scope) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        profile: list[MemoryRecord] = []
        for category in PROFILE_CATEGORIES:
            profile += self.store.list(
                scope, statuses=(Status.ACTIVE,), category=category.value, limit=LISTING_LIMIT
            ).items
        policy = self.store.list(
            scope, statuses=(Status.ACTIVE,), category=Category.POLICY.value, limit=LISTING_LIMIT
        ).items
        return profile, policy

    def _state(self, scope: Scope, session_id: str) -> dict[str, Any] | None:
        return self.runtime.get(scope, session_id) if self.runtime is not None else None


def _item(scored: ScoredMemory) -> SlotItem:
    record = scored.record
    return SlotItem(
        text=record.content,
        score=scored.score,
        memory_id=record.memory_id,
        inferred=record.confidence is Confidence.INFERRED,
        expired=record.confidence is Confidence.EXPIRED,
    )


def _state_items(state: dict[str, Any] | None) -> dict[SlotName, list[SlotItem]]:
    """Runtime state (task slot, task memory ring buffer, tool state) as slot lines."""
    if not state:
        return {}
    out: dict[SlotName, list[SlotItem]] = {}
    plan = state.get("plan") or {}
    if plan:
        lines = []
        if plan.get("goal"):
            lines.append(f"goal: {plan['goal']}")
        if plan.get("step"):
            lines.append(f"current step: {plan['step']}")
        if plan.get("done"):
            lines.append("done: " + "; ".join(map(str, plan["done"])))
        if plan.get("pending"):
            lines.append("pending: " + "; ".join(map(str, plan["pending"])))
        if plan.get("params"):
            lines.append("active params: " + ", ".join(f"{k}={v}" for k, v in plan["params"].items()))
        out[SlotName.PLANNER] = [SlotItem(text=line) for line in lines]
    notes = state.get("task_memory") or []
    if notes:
        out[SlotName.TASK_MEM] = [SlotItem(text=str(n)) for n in reversed(notes)]
    tools = state.get("tool_state") or {}
    if tools:
        lines = []
        if tools.get("available"):
            lines.append("available: " + ", ".join(map(str, tools["available"])))
        for call in tools.get("recent_calls", [])[-5:]:
            lines.append(f"{call.get('tool', '?')}: {call.get('status', '?')}")
        out[SlotName.TOOL_STATE] = [SlotItem(text=line) for line in lines]
    return out
