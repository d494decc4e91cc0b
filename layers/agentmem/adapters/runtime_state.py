"""What every :class:`~agentmem.ports.RuntimeStateStore` adapter does with a stored row: parse it
as a :class:`~agentmem.domain.runtime_state.RuntimeState`, and treat a row that no longer parses
(written before the state was typed, or by another version) as absent, logged, never raised."""

from __future__ import annotations

import logging

from agentmem.domain.runtime_state import InvalidRuntimeState, RuntimeState

log = logging.getLogger(__name__)


def parse_stored_state(raw: str | bytes, *, store: str, session_id: str) -> RuntimeState | None:
    """The state of a stored JSON row, or None (logged with the reason, not the content)."""
    try:
        return RuntimeState.from_json(raw)
    except InvalidRuntimeState as exc:
        log.warning(
            "runtime_state.unreadable",
            extra={
                "store": store,
                "session_id": session_id,
                "reason": exc.details.get("reason"),
                "fields": exc.details.get("fields", []),
            },
        )
        return None
