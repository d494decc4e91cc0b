"""The history of a memory (``GET /v1/memories/{id}/history``): the supersede chain it belongs
to, oldest first, each record with its validity (``valid_from``/``valid_to``).

The chain is walked from the asked record backwards through ``supersedes`` and forwards through
``superseded_by``, within the caller's scope only, at most :data:`MAX_CHAIN` records (a chain is
a record's versions of one fact; a merge may fold several into one, so every ``supersedes`` id
is followed).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import NotFound
from agentmem.ports import MemoryStore

MAX_CHAIN = 100


@dataclass
class HistoryService:
    store: MemoryStore

    def chain(self, scope: Scope, memory_id: str) -> list[MemoryRecord]:
        """The supersede chain through ``memory_id``, oldest first; NotFound when unknown."""
        start = self.store.get(scope, memory_id)
        if start is None:
            raise NotFound("memory not found", details={"memory_id": memory_id})
        found: dict[str, MemoryRecord] = {start.memory_id: start}
        frontier = [start]
        while frontier and len(found) < MAX_CHAIN:
            wanted = {
                other
                for record in frontier
                for other in (*record.supersedes, record.superseded_by)
                if other and other not in found
            }
            if not wanted:
                break
            more = self.store.get_many(scope, sorted(wanted), embeddings=False)
            frontier = [r for r in more.values() if r.memory_id not in found][: MAX_CHAIN - len(found)]
            found.update({r.memory_id: r for r in frontier})
        return sorted(found.values(), key=_when)


def _when(record: MemoryRecord) -> tuple[str, str]:
    at = record.valid_from or record.created_at
    return (at.isoformat() if at else "", record.memory_id)
