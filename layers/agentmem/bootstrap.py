"""The composition root: validated settings in, wired services out, once per process (a Lambda
cold start, the local server, a test).

``bootstrap(settings, adapters=None, clock=None)`` is the one place that builds services. Each
argument given wins over what the settings would build (cosmicpython's ``bootstrap``): a test
passes fakes as ``adapters`` and a :class:`~agentmem.clock.ManualClock`; a Lambda passes nothing
and gets the backend ``AGENTMEM_BACKEND`` names (:mod:`agentmem.backends`). Adapters never import
this module.

Handlers take the container as an argument (``handler(event, context, container=None)``); only
when none is given do they use :func:`default_container`, built lazily once per process. Nothing
here is built at import time, and nothing swaps a process-global container.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

from agentmem.adapters import Adapters
from agentmem.adapters.guard_heads import load_directive_head
from agentmem.adapters.provider_usage import ProviderUsage
from agentmem.adapters.reader_heads import load_heads
from agentmem.backends import builder
from agentmem.clock import SystemClock
from agentmem.domain import lazy_re
from agentmem.domain.scoring import Scorer
from agentmem.ports import (
    LLM,
    PROJECTOR_CHECKPOINT,
    AuditLog,
    Backlog,
    BacklogState,
    Clock,
    Compactable,
    Embedder,
    GraphStore,
    MemoryStore,
    Retained,
    RuntimeStateStore,
    ScopeLedger,
    SearchIndex,
    StreamBacklog,
    TurnLog,
    TurnQueue,
)
from agentmem.services.admin import AdminService
from agentmem.services.caches import (
    NEIGHBOUR_RECORDS,
    QUERY_VECTORS,
    SCORE_BLOCKS,
    NeighbourRecords,
    QueryVectors,
    ScoreBlocks,
)
from agentmem.services.conflicts import ConflictService
from agentmem.services.consolidation import ConsolidationService
from agentmem.services.context import ContextService
from agentmem.services.events import EventEmitter, NoEvents
from agentmem.services.executors import InlineExecutor
from agentmem.services.explicit_write import ExplicitWriter
from agentmem.services.guard import WriteGuard
from agentmem.services.health import HealthService
from agentmem.services.history import HistoryService
from agentmem.services.idempotency import IdempotentRequests
from agentmem.services.ingest import IngestService
from agentmem.services.mcp import McpService
from agentmem.services.observer import NullObserver, PipelineObserver
from agentmem.services.operator import DeadLetterService
from agentmem.services.projector import Projector
from agentmem.services.recall import RecallService
from agentmem.services.reconcile import Reconciler
from agentmem.services.reindex import Reindexer
from agentmem.services.retention import RetentionService
from agentmem.services.semantic_guard import SemanticGuard
from agentmem.services.sessions import SessionStateService
from agentmem.services.summaries import SummaryService
from agentmem.services.transfer import TransferService
from agentmem.services.turns import TurnService, TurnStatusService
from agentmem.services.webhooks import DeliveryPolicy, WebhookDelivery, WebhookService
from agentmem.services.write_pipeline import WritePipeline
from agentmem.settings import Settings, load_settings

log = logging.getLogger(__name__)
CONTEXT_FETCHERS = 4  # threads a context call fetches its sources on (recall, listings, session sources)


@dataclass(frozen=True)
class Container:
    """The wired process: settings, clock, adapters and the services built on them."""

    settings: Settings
    clock: Clock
    adapters: Adapters
    scorer: Scorer
    pipeline: WritePipeline
    guard: WriteGuard
    explicit: ExplicitWriter
    turns: TurnService
    sessions: SessionStateService
    ingest: IngestService
    recall: RecallService
    context: ContextService
    projector: Projector
    admin: AdminService
    consolidation: ConsolidationService
    mcp: McpService
    reconciler: Reconciler
    conflicts: ConflictService
    history: HistoryService
    turn_status: TurnStatusService
    dead_letters: DeadLetterService
    transfer: TransferService
    health: HealthService
    idempotency: IdempotentRequests
    retention: RetentionService
    summaries: SummaryService | None = None  # scene summaries (None: the adapters keep none)
    events: EventEmitter = field(default_factory=lambda: EventEmitter(NoEvents()))
    webhooks: WebhookService = field(default_factory=lambda: WebhookService(None))
    webhook_delivery: WebhookDelivery | None = None  # local mode: the event sources deliver
    # a reindex to the embedder's model (the reindex function; None: the adapters keep no journal)
    reindexer: Reindexer | None = None

    # The adapters by name, for callers that need one port (the emulator, tests, benchmarks).
    @property
    def store(self) -> MemoryStore:
        return self.adapters.store

    @property
    def ledger(self) -> ScopeLedger:
        return self.adapters.ledger

    @property
    def turn_log(self) -> TurnLog:
        return self.adapters.turn_log

    @property
    def runtime_state(self) -> RuntimeStateStore:
        return self.adapters.runtime_state

    @property
    def audit(self) -> AuditLog:
        return self.adapters.audit

    @property
    def embedder(self) -> Embedder:
        return self.adapters.embedder

    @property
    def index(self) -> SearchIndex:
        return self.adapters.index

    @property
    def graph(self) -> GraphStore:
        return self.adapters.graph

    @property
    def queue(self) -> TurnQueue:
        return self.adapters.queue

    @property
    def llm(self) -> LLM | None:
        return self.adapters.llm

    def warm(self) -> None:
        """What a long-lived process (``agentmem serve``, its workers) does once before its first
        request, so that no request pays a first use: the embedder's first encode, the semantic
        guard's prototype banks, and every lazily compiled regular expression (~700 patterns,
        0.2–0.35 s; a Chinese question's first context call compiled ~30 of them, ~8 ms). A Lambda
        does not call this: its cold start stays short and each pattern is compiled on first use."""
        self.embedder.embed_query("warm up")
        self.guard.warm()
        lazy_re.compile_all()


def bootstrap(
    settings: Settings | None = None,
    adapters: Adapters | None = None,
    clock: Clock | None = None,
    *,
    embedder: Embedder | None = None,
    observer: PipelineObserver | None = None,
) -> Container:
    """Wire the services. ``settings`` default to the environment's; ``adapters`` default to the
    configured backend's (built with ``embedder`` when one is given); ``clock`` to the system's.
    ``observer`` watches the write pipeline's decisions (benchmarks, eval); it changes none."""
    settings = settings or load_settings()
    clock = clock or SystemClock()
    if adapters is None:
        adapters = builder(settings.backend)(settings, clock, embedder)
    elif embedder is not None:
        raise ValueError("pass the embedder inside adapters, or let bootstrap build them")
    a = adapters
    events = EventEmitter(a.events or NoEvents())
    scorer = settings.scorer()
    thresholds = settings.thresholds()
    conflicts = ConflictService(store=a.store, conflicts=a.conflicts, audit=a.audit)
    # One guard for every entrance; its semantic detector judges the vectors facts are stored with.
    guard = WriteGuard(
        SemanticGuard(a.embedder, stored=a.prototype_banks) if settings.semantic_guard else None,
        directive_head=load_directive_head() if settings.semantic_guard else None,
    )
    pipeline = WritePipeline(
        store=a.store,
        ledger=a.ledger,
        turn_log=a.turn_log,
        audit=a.audit,
        embedder=a.embedder,
        index=a.index,
        thresholds=thresholds,
        llm=a.llm,
        observer=observer or NullObserver(),
        guard=guard,
        conflicts=conflicts,
        reader_heads=load_heads(),
        audited=a.audited_writes,
        neighbour_cache=NeighbourRecords(NEIGHBOUR_RECORDS),
    )
    recall = RecallService(
        store=a.store,
        embedder=a.embedder,
        scorer=scorer,
        index=a.index,
        graph=a.graph,
        floor=settings.relevance(),
        query_vectors=QueryVectors(QUERY_VECTORS),
        score_blocks=ScoreBlocks(SCORE_BLOCKS),
    )
    projector = Projector(
        index=a.index,
        graph=a.graph,
        audit=a.audit,
        embedder=a.embedder,
        store=a.store,
        ledger=a.ledger,
        thresholds=thresholds,
    )
    summaries = (
        SummaryService(store=a.summaries, memories=a.store, llm=a.llm) if a.summaries is not None else None
    )
    explicit = ExplicitWriter(
        store=a.store,
        ledger=a.ledger,
        audit=a.audit,
        embedder=a.embedder,
        guard=guard,
        audited=a.audited_writes,
    )
    admin = AdminService(
        store=a.store,
        ledger=a.ledger,
        audit=a.audit,
        embedder=a.embedder,
        turn_log=a.turn_log,
        runtime=a.runtime_state,
        index=a.index,
        graph=a.graph,
        guard=guard,
        queue=a.queue,
        conflicts=conflicts.conflicts,
        summaries=a.summaries,
        idempotency=a.idempotency,
        audited=a.audited_writes,
        events=events,
    )
    return Container(
        settings=settings,
        clock=clock,
        adapters=a,
        scorer=scorer,
        pipeline=pipeline,
        guard=guard,
        explicit=explicit,
        turns=TurnService(queue=a.queue),
        sessions=SessionStateService(runtime=a.runtime_state, guard=guard),
        ingest=IngestService(pipeline=pipeline, audit=a.audit, summaries=summaries, events=events),
        recall=recall,
        context=ContextService(
            store=a.store,
            recall=recall,
            audit=a.audit,
            runtime=a.runtime_state,
            executor=_executor(settings),
            conflicts=conflicts,
            index=a.index,  # the slot listings from its cards, confirmed from the store
            turn_log=a.turn_log,
            summaries=summaries,
            window_turns=settings.session_window_turns,
            task_memory_tokens=settings.task_memory_tokens,
        ),
        projector=projector,
        admin=admin,
        consolidation=ConsolidationService(
            store=a.store,
            ledger=a.ledger,
            audit=a.audit,
            embedder=a.embedder,
            scorer=scorer,
            config=settings.consolidation(),
            graph=a.graph,
            trigger_every=settings.consolidate_every,
            clock=clock.now,
        ),
        mcp=McpService(writer=explicit, recall=recall, admin=admin),
        reconciler=Reconciler(
            store=a.store, ledger=a.ledger, index=a.index, graph=a.graph, projector=projector, clock=clock.now
        ),
        conflicts=conflicts,
        history=HistoryService(store=a.store),
        turn_status=TurnStatusService(
            turn_log=a.turn_log, queue=a.queue, audit=a.audit, dead_letters=a.dead_letters
        ),
        dead_letters=DeadLetterService(audit=a.audit, queue=a.dead_letters),
        transfer=TransferService(store=a.store, writer=explicit),
        health=HealthService(settings.health_max_backlog_age_s, _backlogs(a), _model_checks(a)),
        idempotency=IdempotentRequests(a.idempotency, timedelta(hours=settings.idempotency_ttl_hours)),
        retention=_retention(a, settings),
        summaries=summaries,
        events=events,
        webhooks=WebhookService(a.webhooks, a.deliveries),
        webhook_delivery=_delivery(a, settings),
        reindexer=Reindexer(
            store=a.store,
            ledger=a.ledger,
            embedder=a.embedder,
            journal=a.reindex_journal,
            clock=clock.now,
            index=a.index,  # the function's index is the new model's own (docs/aws.md)
            batch=settings.reindex_batch,
        )
        if a.reindex_journal is not None
        else None,
    )


def _delivery(a: Adapters, settings: Settings) -> WebhookDelivery | None:
    """The local delivery loop's step, where this process delivers (the embedded backend)."""
    if a.deliveries is None or a.webhooks is None:
        return None
    from agentmem.adapters.webhook_http import UrllibTransport

    policy = DeliveryPolicy(
        max_attempts=settings.webhook_max_attempts,
        base_s=settings.webhook_backoff_base_s,
        cap_s=settings.webhook_backoff_cap_s,
        timeout_s=settings.webhook_timeout_s,
    )
    return WebhookDelivery(a.deliveries, a.webhooks, UrllibTransport(), policy)


def _executor(settings: Settings) -> Executor:
    """Where the context call fetches its sources: on threads over remote stores (its latency is
    then the slowest fetch, not the sum), inline over the embedded ones (in-process CPU work
    under one GIL, where the threads' hand-offs cost more than they overlap)."""
    if settings.backend == "local":
        return InlineExecutor()
    return ThreadPoolExecutor(max_workers=CONTEXT_FETCHERS, thread_name_prefix="context")


def _backlogs(a: Adapters) -> dict[str, Callable[[], BacklogState]]:
    """What ``/v1/health`` watches: the ingest queue and the projector's stream, where the
    adapters can say what waits in them (the embedded ones)."""
    found: dict[str, Callable[[], BacklogState]] = {}
    if isinstance(a.queue, Backlog):
        found["ingest queue"] = a.queue.backlog
    if isinstance(a.changes, StreamBacklog):
        feed = a.changes
        found["projector stream"] = lambda: feed.outbox_backlog(PROJECTOR_CHECKPOINT)
    return found


MODEL_FAILURE_WINDOW_S = 60.0  # /v1/health says degraded while a provider failed this recently


def _model_checks(a: Adapters) -> dict[str, Callable[[], str | None]]:
    """What ``/v1/health`` asks the model providers that count their failures (the OpenAI-compatible
    LLM and embedder): the reason of a failure in the last minute, said as degraded."""
    found: dict[str, Callable[[], str | None]] = {}
    fallbacks = (
        ("llm", a.llm, "turns were left to the rules"),
        ("embedder", a.embedder, "recall answered without vectors, turns wait in the queue"),
    )
    for name, provider, effect in fallbacks:
        usage = getattr(provider, "usage", None)
        if isinstance(usage, ProviderUsage):
            found[name] = _recent_failure(usage, effect)
    return found


def _recent_failure(usage: ProviderUsage, effect: str) -> Callable[[], str | None]:
    def check() -> str | None:
        reason = usage.recent_failure(MODEL_FAILURE_WINDOW_S)
        return None if reason is None else f"{usage.provider} failed ({reason}): {effect}"

    return check


def _retention(a: Adapters, settings: Settings) -> RetentionService:
    """Every adapter that keeps something for a while, and every file (each once)."""
    parts = [
        a.store,
        a.changes,
        a.turn_log,
        a.runtime_state,
        a.audit,
        a.idempotency,
        a.summaries,
        a.queue,
        a.index,
        a.graph,
        a.deliveries,
    ]
    unique = list({id(p): p for p in parts if p is not None}.values())
    return RetentionService(
        settings.retention(),
        targets=[p for p in unique if isinstance(p, Retained)],
        files=[p for p in unique if isinstance(p, Compactable)],
    )


_default: Container | None = None
_default_lock = threading.Lock()


def default_container() -> Container:
    """The process's container, built from the environment on first use (the cold start). Used
    only by handlers that were given none; nothing replaces it once built."""
    global _default
    with _default_lock:
        if _default is None:
            _default = bootstrap()
            log.info("bootstrap.done", extra={"backend": _default.settings.backend})
        return _default
