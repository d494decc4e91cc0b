"""``build_embedded``: the embedded backend (``AGENTMEM_BACKEND=local``, :mod:`agentmem.backends`):
every port over SQLite files under ``AGENTMEM_DATA_DIR``, the search index with numpy vectors,
the offline embedder."""

from __future__ import annotations

from pathlib import Path

from agentmem.adapters import Adapters
from agentmem.adapters.embedded.audit_log import SqliteAuditLog, import_legacy_file
from agentmem.adapters.embedded.conflict_store import SqliteConflictStore
from agentmem.adapters.embedded.graph_store import LocalGraphStore
from agentmem.adapters.embedded.idempotency import SqliteIdempotencyStore
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.adapters.embedded.runtime_state import SqliteRuntimeState
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedded.summary_store import SqliteSummaryStore
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.adapters.embedded.webhooks import SqliteWebhooks
from agentmem.adapters.embedders import build_embedder
from agentmem.adapters.providers import build_embedder_for, build_llm
from agentmem.errors import ConfigurationError
from agentmem.ports import Clock, Embedder
from agentmem.settings import Settings


def build_embedded(settings: Settings, clock: Clock, embedder: Embedder | None = None) -> Adapters:
    """Embedded adapters over ``settings.data_dir`` (created if absent). ``embedder`` overrides
    the configured one (tests, benchmarks)."""
    data = Path(settings.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    if embedder is None:
        embedder = build_embedder_for(settings)  # a remote provider (docs/providers/), else None
    if embedder is None:
        if settings.embedder == "bedrock":
            raise ConfigurationError(
                "the bedrock embedder needs AGENTMEM_BACKEND=aws", details={"setting": "AGENTMEM_EMBEDDER"}
            )
        embedder = build_embedder(settings.embedder, num_threads=settings.embedder_threads)
    queue = SqliteTurnQueue(
        data / "queue.db",
        capacity=settings.queue_capacity,
        max_receives=settings.queue_max_receives,
        clock=clock.now,
        tenant_capacity=settings.tenant_queue_capacity(),
    )
    store = SqliteMemoryStore(data / "memory.db")
    audit = SqliteAuditLog(data / "memory.db")  # the trail shares the store's transactions
    import_legacy_file(audit.database, data / "audit.db")  # a data dir from before: once
    webhooks = SqliteWebhooks(data / "events.db")  # events outbox, webhooks, their deliveries
    return Adapters(
        store=store,
        ledger=store.ledger,
        audited_writes=store,
        changes=store.outbox,  # the outbox the store's transactions append to
        idempotency=SqliteIdempotencyStore(data / "memory.db"),
        turn_log=SqliteTurnLog(data / "memory.db"),
        runtime_state=SqliteRuntimeState(data / "memory.db", clock=clock.now),
        audit=audit,
        embedder=embedder,
        index=LocalSearchIndex(data / "search.db"),
        graph=LocalGraphStore(data / "graph.db"),
        queue=queue,
        dead_letters=queue,  # the local queue keeps its dead letters in its own table
        conflicts=SqliteConflictStore(data / "memory.db"),
        summaries=SqliteSummaryStore(data / "memory.db"),
        llm=build_llm(settings),
        events=webhooks,
        webhooks=webhooks,
        deliveries=webhooks,
    )
