"""Adapters: implementations of :mod:`agentmem.ports` (``aws`` for the cloud, ``embedded`` for a
laptop or CI), and :class:`Adapters`, the typed bundle a backend's builder returns
(:mod:`agentmem.backends`) and :func:`agentmem.bootstrap.bootstrap` wires into the services.

:mod:`agentmem.adapters.codec` is the one serializer of records that both backends share.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.ports import (
    LLM,
    AuditedWrites,
    AuditLog,
    ChangeFeed,
    ConflictStore,
    DeadLetterQueue,
    Embedder,
    GraphStore,
    IdempotencyStore,
    MemoryStore,
    PrototypeBanks,
    ReindexJournal,
    RuntimeStateStore,
    ScopeLedger,
    SearchIndex,
    SessionSummaryStore,
    TurnLog,
    TurnQueue,
)
from agentmem.webhook_ports import DeliveryOutbox, EventPublisher, WebhookRegistry


@dataclass(frozen=True, slots=True)
class Adapters:
    """One implementation of every port. ``llm`` is optional: absent, the rules decide alone;
    ``dead_letters`` too: absent (an AWS stack without AGENTMEM_DLQ_URL), the dead-letter
    routes and commands say it is not configured."""

    store: MemoryStore
    ledger: ScopeLedger  # kept beside the records, in the same table or file (the store's ``ledger``)
    turn_log: TurnLog
    runtime_state: RuntimeStateStore
    audit: AuditLog
    embedder: Embedder
    index: SearchIndex
    graph: GraphStore
    queue: TurnQueue
    conflicts: ConflictStore
    llm: LLM | None = None
    dead_letters: DeadLetterQueue | None = None
    # The store's change feed where no platform reads it (the embedded outbox, which the local
    # runner hands the projector); None in AWS: Lambda reads the table's stream.
    changes: ChangeFeed | None = None
    summaries: SessionSummaryStore | None = None  # absent: no scene summaries across sessions
    prototype_banks: PrototypeBanks | None = None  # absent: each process embeds the guard's banks
    # The store again when ``audit`` shares its transactions (embedded: both in memory.db), so an
    # explicit write and its audit line commit together; None: two steps.
    audited_writes: AuditedWrites | None = None
    idempotency: IdempotencyStore | None = None  # None: Idempotency-Key is not kept (every request runs)
    # Events (docs/events.md): None publishes none; deliveries None: the platform delivers them.
    events: EventPublisher | None = None
    webhooks: WebhookRegistry | None = None
    deliveries: DeliveryOutbox | None = None
    # A reindex to the embedder's model keeps its staged vectors and progress here (the reindex
    # function, docs/aws.md); None: the backend has no reindex function (locally the command
    # builds its own journal)
    reindex_journal: ReindexJournal | None = None
