"""Services over the in-memory fakes, for unit tests: :func:`build` wires
:func:`agentmem.bootstrap.bootstrap` with a fake of every port, the hash embedder and a
:class:`~agentmem.clock.ManualClock`; :meth:`World.drain` plays the store's change stream into the
projector, as DynamoDB Streams or the local runner would. No SQLite, no moto, no threads of ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from agentmem.adapters import Adapters
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain import ids
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs, Status, Turn
from agentmem.ports import Put
from agentmem.services.projector import ProjectionReport
from agentmem.settings import load_settings
from support.fakes.conflicts import InMemoryConflictStore
from support.fakes.memory import (
    InMemoryAuditLog,
    InMemoryGraphStore,
    InMemoryMemoryStore,
    InMemoryRuntimeState,
    InMemorySearchIndex,
    InMemoryTurnLog,
    InMemoryTurnQueue,
)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
S = Scope("t1", "u1")


@dataclass
class World:
    """A container and the fakes under it, each typed as its fake (to switch it off, to read it)."""

    clock: ManualClock
    store: InMemoryMemoryStore
    turn_log: InMemoryTurnLog
    runtime_state: InMemoryRuntimeState
    audit: InMemoryAuditLog
    index: InMemorySearchIndex
    graph: InMemoryGraphStore
    queue: InMemoryTurnQueue
    c: Container = field(init=False)
    projected: int = 0  # changes of the stream the projector has seen

    def __post_init__(self) -> None:
        adapters = Adapters(
            store=self.store,
            ledger=self.store.ledger,
            turn_log=self.turn_log,
            runtime_state=self.runtime_state,
            audit=self.audit,
            embedder=HashEmbedder(),
            index=self.index,
            graph=self.graph,
            queue=self.queue,
            conflicts=InMemoryConflictStore(),
        )
        self.c = bootstrap(load_settings(embedder="hash"), adapters=adapters, clock=self.clock)

    def drain(self) -> ProjectionReport:
        """Project every change not projected yet (the ones projecting emits too), in order."""
        report = ProjectionReport()
        while self.projected < len(self.store.changes):
            change = self.store.changes[self.projected]
            self.c.projector.apply(change, report, now=self.clock.now())
            self.projected += 1
        return report

    def records(self, scope: Scope = S, *statuses: Status) -> list[MemoryRecord]:
        return self.store.list(scope, statuses=statuses or tuple(Status), limit=500).items

    def active(self, scope: Scope = S) -> list[MemoryRecord]:
        return self.records(scope, Status.ACTIVE)

    def actions(self, scope: Scope = S) -> list[str]:
        """Audit actions, oldest first."""
        return [e.action for e in reversed(self.audit.list(scope, limit=1000))]


def build(clock: ManualClock | None = None) -> World:
    clock = clock or ManualClock(T0)
    return World(
        clock=clock,
        store=InMemoryMemoryStore(),
        turn_log=InMemoryTurnLog(),
        runtime_state=InMemoryRuntimeState(clock.now),
        audit=InMemoryAuditLog(),
        index=InMemorySearchIndex(),
        graph=InMemoryGraphStore(),
        queue=InMemoryTurnQueue(capacity=1000),
    )


def turn(
    message_id: str,
    user: str,
    assistant: str = "",
    *,
    hours: float = 0,
    scope: Scope = S,
    session: str = "s1",
) -> Turn:
    return Turn(
        scope=scope,
        session_id=session,
        user=user,
        assistant=assistant,
        at=T0 + timedelta(hours=hours),
        message_id=message_id,
    )


def store_memories(
    world: World, texts: Sequence[str], times: Sequence[datetime], *, scope: Scope = S, tag: str = "filler"
) -> list[MemoryRecord]:
    """Write ``texts`` as episodic memories (hash vectors) at ``times`` straight into the store,
    in one transaction, and project them: a history around what a test ingests."""
    embedder = HashEmbedder()
    records = [
        MemoryRecord(
            scope=scope,
            memory_id=ids.memory_id(at, f"{tag}:{n}"),
            content=text,
            category=Category.EPISODIC,
            source_refs=SourceRefs(tag, (f"{tag}-{n}",)),
            embedding=tuple(float(x) for x in vector),
            embedding_model=embedder.model_id,
            created_at=at,
            updated_at=at,
            valid_from=at,
        )
        for n, (text, vector, at) in enumerate(
            zip(texts, embedder.embed_documents(list(texts)), times, strict=True)
        )
    ]
    world.store.transact([Put(r, None) for r in records])
    world.drain()
    return records
