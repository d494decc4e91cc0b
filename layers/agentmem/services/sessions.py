"""Session (task) state: the plan, task memory and tool state the tool/react context modes read.

Every text of a state (goals, steps, notes, parameter names and values, tool names, call
statuses) goes through the one guard before it is stored, like a memory: a text that reads as an
injection refuses the whole state (422 naming the fields), PII is redacted. The state is not
embedded, so the guard's rules judge it, not its semantic detector.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agentmem.domain.models import Scope
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import NotFound
from agentmem.ports import RuntimeStateStore
from agentmem.services.guard import WriteGuard


@dataclass
class SessionStateService:
    runtime: RuntimeStateStore
    guard: WriteGuard = field(default_factory=WriteGuard)

    def put(
        self, scope: Scope, session_id: str, state: RuntimeState, *, ttl_hours: float, now: datetime
    ) -> RuntimeState:
        """Replace the state of ``session_id`` with its guarded form (returned); it expires
        ``ttl_hours`` from ``now``. Raises ValidationFailed when a text reads as an injection."""
        data = state.to_dict()
        texts = list(_texts(data, "state"))
        cleaned = iter(self.guard.clean_texts(texts))
        guarded = RuntimeState.from_dict(_rebuilt(data, cleaned))
        self.runtime.put(scope, session_id, guarded, now + timedelta(hours=ttl_hours))
        return guarded

    def get(self, scope: Scope, session_id: str) -> RuntimeState:
        """The stored state. Raises NotFound when there is none (or it expired)."""
        state = self.runtime.get(scope, session_id)
        if state is None:
            raise NotFound(f"no state for session {session_id}")
        return state


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string of plain data with its dotted path, dict keys before their values, in the
    order :func:`_rebuilt` visits them."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}", str(key)
            yield from _texts(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}.{index}")


def _rebuilt(value: Any, cleaned: Iterator[str]) -> Any:
    """``value`` with each string replaced by the next of ``cleaned`` (the order of :func:`_texts`)."""
    if isinstance(value, str):
        return next(cleaned)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for item in value.values():
            new_key = next(cleaned)  # the key's text comes first
            out[new_key] = _rebuilt(item, cleaned)
        return out
    if isinstance(value, list | tuple):
        return [_rebuilt(item, cleaned) for item in value]
    return value
