"""Session (task) state: the plan, task memory and tool state the tool/react context modes read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from agentmem.domain.models import Scope
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import NotFound
from agentmem.ports import RuntimeStateStore


@dataclass
class SessionStateService:
    runtime: RuntimeStateStore

    def put(
        self, scope: Scope, session_id: str, state: RuntimeState, *, ttl_hours: float, now: datetime
    ) -> RuntimeState:
        """Replace the state of ``session_id``; it expires ``ttl_hours`` from ``now``."""
        self.runtime.put(scope, session_id, state, now + timedelta(hours=ttl_hours))
        return state

    def get(self, scope: Scope, session_id: str) -> RuntimeState:
        """The stored state. Raises NotFound when there is none (or it expired)."""
        state = self.runtime.get(scope, session_id)
        if state is None:
            raise NotFound(f"no state for session {session_id}")
        return state
