"""Typed ports: what services need from the outside world. Adapters implement them.

Every method that reads or writes memory takes a :class:`~agentmem.domain.models.Scope`; keys and
filters are built inside the adapter so a caller cannot forget them. Vendor errors surface as
:class:`~agentmem.errors.StoreUnavailable` (and friends), never as a vendor type.

The value types the ports pass live in :mod:`agentmem.port_types`, the ports of the event sources
(the turn queue, its dead letters, the change feed) in :mod:`agentmem.event_ports`; both are
re-exported here, so ``agentmem.ports`` stays the one contract an adapter reads.
The module runs over 400 lines on purpose: every store's port in one place.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentmem.domain.models import AuditEvent, MemoryRecord, Scope, Status
from agentmem.domain.scope_walk import ReconcileCursor
from agentmem.event_ports import (  # the queue and change-feed ports, re-exported
    PROJECTOR_CHECKPOINT,
    Backlog,
    BacklogState,
    ChangeFeed,
    DeadLetterQueue,
    OutboxChange,
    QueueConsumer,
    QueuedTurns,
    ReceivedMessage,
    StreamBacklog,
    TurnQueue,
)
from agentmem.port_types import (  # the ports' value types, re-exported
    Change,
    DeadLetterEntry,
    DeadLetterPage,
    Edge,
    Hit,
    IdempotencyRecord,
    Neighbour,
    Page,
    ProjectionOutcome,
    ProjectionState,
    Put,
    RawTurnRecord,
    Reading,
    ReindexProgress,
    RetentionPolicy,
    StagedVector,
)

__all__ = [  # the protocols, and the value types they pass (from port_types)
    "LLM",
    "PROJECTOR_CHECKPOINT",
    "AuditLog",
    "AuditedWrites",
    "Backlog",
    "BacklogState",
    "CardStore",
    "Change",
    "ChangeFeed",
    "Clock",
    "Compactable",
    "ConflictStore",
    "DeadLetterEntry",
    "DeadLetterPage",
    "DeadLetterQueue",
    "Edge",
    "Embedder",
    "GraphStore",
    "Hit",
    "IdempotencyRecord",
    "IdempotencyStore",
    "MemoryStore",
    "Neighbour",
    "OutboxChange",
    "Page",
    "Projection",
    "ProjectionOutcome",
    "ProjectionState",
    "Put",
    "QueueConsumer",
    "QueuedTurns",
    "RawTurnRecord",
    "Reading",
    "ReceivedMessage",
    "ReindexJournal",
    "ReindexProgress",
    "Retained",
    "RetentionPolicy",
    "RuntimeStateStore",
    "ScopeLedger",
    "SearchIndex",
    "SessionSummaryStore",
    "StagedVector",
    "StreamBacklog",
    "TurnLog",
    "TurnQueue",
]

if TYPE_CHECKING:  # annotations only: importing the ports must not import numpy or the guards
    import numpy as np

    from agentmem.domain.llm_facts import LlmFact
    from agentmem.domain.pending import ConflictStatus, PendingConflict
    from agentmem.domain.runtime_state import RuntimeState
    from agentmem.domain.similarity import Calibration
    from agentmem.domain.summary import LatestSession, SceneLog, SceneSummary


class MemoryStore(Protocol):
    """The source of truth for memory records (DynamoDB; SQLite locally): the record operations.
    Every successful write also emits a change (DynamoDB Streams / the local outbox) in the same
    atomic step. What is kept per scope beside the records is the :class:`ScopeLedger`."""

    def create(self, record: MemoryRecord) -> None:
        """Insert ``record`` (version 1). Raises VersionConflict if the id exists."""

    def update(self, record: MemoryRecord, expected_version: int) -> None:
        """Replace the stored record if its version is ``expected_version``; else VersionConflict.
        Raises NotFound if it does not exist."""

    def transact(self, puts: Sequence[Put]) -> None:
        """Apply all puts or none (supersede, merge). Raises VersionConflict naming the first
        failed id in ``details['memory_id']``."""

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        """The record, or None when absent in this scope (another scope's id is absent too)."""

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, embeddings: bool = True
    ) -> dict[str, MemoryRecord]:
        """Records by id; absent ids are left out. ``embeddings=False``: the caller reads no vectors,
        so the store may leave them out (``embedding`` None, ``embedding_model`` kept)."""

    def list(
        self,
        scope: Scope,
        *,
        statuses: Iterable[Status] = (Status.ACTIVE,),
        category: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        embeddings: bool = True,
    ) -> Page:
        """Newest first, paginated by an opaque cursor (``embeddings`` as in :meth:`get_many`)."""

    def find_by_key(self, scope: Scope, key: str) -> builtins.list[MemoryRecord]:
        """Active records carrying this key (for same-key conflicts)."""

    def scan_active(
        self, scope: Scope, limit: int, *, embeddings: bool = True
    ) -> builtins.list[MemoryRecord]:
        """Up to ``limit`` active records, newest first: the bounded fallback when the search
        index is down, and the consolidation working set (``embeddings`` as in :meth:`get_many`)."""

    def hard_delete(self, scope: Scope, memory_id: str) -> bool:
        """Erase one record for good (the change stream reports a REMOVE). True if it existed."""

    def erase_scope(self, scope: Scope) -> int:
        """Erase every record of the scope; returns how many were removed."""


class ScopeLedger(Protocol):
    """What is kept per scope beside its records, in the same table or file as the
    :class:`MemoryStore` (so the store checks the erase barrier in the same atomic step as a
    create): the writes waiting for consolidation, the registry of scopes the reconciler walks,
    the reconcile cursors and the erase barrier."""

    def mark_pending(self, scope: Scope, writes: int) -> int:
        """Count writes since the last consolidation of ``scope``; returns the new count."""

    def pending_scopes(self, limit: int) -> builtins.list[tuple[Scope, int]]:
        """Scopes with writes since their last consolidation, with their counts (order: scope_walk)."""

    def clear_pending(self, scope: Scope) -> None:
        """Consolidation of ``scope`` finished."""

    def all_scopes(
        self, limit: int, cursor: str | None = None, *, segment: int = 0, segments: int = 1
    ) -> tuple[builtins.list[Scope], str | None]:
        """Every scope that has records, paginated, of one segment (:mod:`.domain.scope_walk`)."""

    def reconcile_cursor(self, segment: int = 0, segments: int = 1) -> ReconcileCursor | None:
        """The saved walk of this segment of this many segments, or None."""

    def save_reconcile_cursor(self, cursor: ReconcileCursor) -> None:
        """Keep ``cursor`` for the next run of its segment (replacing the saved one)."""

    def set_erase_barrier(self, scope: Scope, at: datetime) -> datetime:
        """Record that ``scope`` was erased at ``at`` (kept apart from the records, so
        :meth:`MemoryStore.erase_scope` never removes it; a later barrier replaces an earlier one, an earlier
        one is ignored). From then on :meth:`MemoryStore.create` and :meth:`MemoryStore.transact` refuse, in the same
        atomic step, any new record of the scope created at or before the barrier
        (``VersionConflict`` with ``details["reason"] == "erased"``). Returns the barrier in force."""

    def erase_barrier(self, scope: Scope) -> datetime | None:
        """The scope's erase barrier (the time of its last erase), or None if never erased."""


class TurnLog(Protocol):
    """L0 raw log, session window and the idempotency marks of processed turns."""

    def append_raw(self, scope: Scope, turn: RawTurnRecord) -> bool:
        """Append one redacted turn. False if this message id was already logged (replay)."""

    def recent_turns(self, scope: Scope, session_id: str, limit: int) -> builtins.list[RawTurnRecord]:
        """The session window: the last ``limit`` turns of the session, oldest first."""

    def is_processed(self, scope: Scope, message_id: str) -> bool:
        """Whether this turn finished the write path already."""

    def mark_processed(self, scope: Scope, message_id: str, at: datetime, outcome: dict[str, Any]) -> None:
        """Record that the turn finished (the last step of the write path)."""

    def erase_scope(self, scope: Scope) -> int:
        """Remove the user's log, window and marks; returns the number of turns removed."""

    def forget_turn(self, scope: Scope, message_id: str) -> bool:
        """Remove one turn's log line and processed mark (a turn from before an erase that was
        written after it); True if a log line existed."""

    def processed_outcome(self, scope: Scope, message_id: str) -> dict[str, Any] | None:
        """The outcome :meth:`mark_processed` recorded (``TurnOutcome.to_dict``), or None."""


class RuntimeStateStore(Protocol):
    """Task state slot, task memory ring buffer and tool state, per (scope, session)."""

    def get(self, scope: Scope, session_id: str) -> RuntimeState | None:
        """The stored state, or None when there is none, it has expired, or the stored row no
        longer parses as a :class:`RuntimeState` (logged, never raised: one bad row must not
        break the session's context calls). Raises ``StoreUnavailable`` when the store cannot
        be reached."""

    def put(self, scope: Scope, session_id: str, state: RuntimeState, expires_at: datetime) -> None:
        """Replace the state (validated when it was built); it expires at ``expires_at``."""

    def erase_scope(self, scope: Scope) -> int:
        """Remove every session state of the scope; returns how many."""


class ConflictStore(Protocol):
    """Pending conflicts between a permanent/pinned memory and a proposed replacement, per scope
    (the DynamoDB session table; SQLite locally). Ids come from the proposal, so a put is
    idempotent."""

    def put(self, conflict: PendingConflict) -> bool:
        """Store a new conflict; False (nothing written) if its id is already stored."""

    def get(self, scope: Scope, conflict_id: str) -> PendingConflict | None:
        """The conflict, or None when absent in this scope."""

    def resolve(self, conflict: PendingConflict) -> None:
        """Replace the stored conflict with its resolved form if it is still pending; else
        VersionConflict (another resolution won). Raises NotFound if it does not exist."""

    def list(
        self,
        scope: Scope,
        *,
        status: ConflictStatus | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[builtins.list[PendingConflict], str | None]:
        """Newest first, optionally of one status; an opaque cursor for the next page or None."""

    def erase_scope(self, scope: Scope) -> int:
        """Remove every conflict of the scope; returns how many."""


class SessionSummaryStore(Protocol):
    """Scene logs, scene summaries and the latest session, per scope (the session table; SQLite
    locally): session memory across sessions (:mod:`agentmem.domain.summary`)."""

    def record_turn(
        self,
        scope: Scope,
        session_id: str,
        message_id: str,
        at: datetime,
        memory_ids: Sequence[str],
        withheld: Sequence[str] = (),
    ) -> str | None:
        """Add one processed turn to the session's scene log (idempotent per ``message_id``; a log
        at :data:`~agentmem.domain.summary.MAX_SCENE_TURNS` takes no more), mark the recorded
        turns of ``withheld`` (message ids of this session) as withheld, and make the session the
        scope's latest. Returns the session that was the latest before when it was another one
        (it has just closed: the caller summarises it), else None."""

    def scene(self, scope: Scope, session_id: str) -> SceneLog | None:
        """The session's scene log, or None when no turn of it was recorded."""

    def latest(self, scope: Scope) -> LatestSession | None:
        """The scope's latest session and the one before it, or None before any turn."""

    def put_summary(self, scope: Scope, summary: SceneSummary) -> None:
        """Keep ``summary`` (replacing the session's earlier one)."""

    def summary(self, scope: Scope, session_id: str) -> SceneSummary | None:
        """The session's stored summary, or None (none yet, or a row that no longer parses)."""

    def erase_scope(self, scope: Scope) -> int:
        """Remove every scene log, summary and the latest marker of the scope; returns how many
        items were removed."""


class Projection(Protocol):
    """What is asked of every projection of the store (the search index, the graph) by the
    reconciler and by erase: the version and hash it holds of each memory, and the scope gone."""

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        """The projected version and hash for each id present."""

    def all_states(self, scope: Scope) -> builtins.list[ProjectionState]:
        """Every memory the projection holds of the scope (for orphan detection)."""

    def erase_scope(self, scope: Scope) -> int:
        """Remove everything of the scope; returns how many memories it held."""


class CardStore(Protocol):
    """The copy of each memory the search index keeps beside its vector (a *card*: the record as
    the projector last wrote it, without the vector) and what was read from it by the rules: what
    a call scores and lists on before it confirms against the store (:mod:`agentmem.services.reads`)."""

    def readings(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, Reading]:
        """The attribute keys and pinned flag kept with each listed document
        (:mod:`agentmem.adapters.readings`), for the ids whose document holds a reading by the
        rules that run now; an id left out is unknown (the caller reads the memory itself)."""

    def stating(self, scope: Scope, keys: Sequence[str], k: int) -> builtins.list[str]:
        """The ids of the ``k`` newest active memories whose reading by the rules that run now
        has one of the attribute ``keys`` (:func:`~agentmem.domain.conflict.attribute_keys`)."""

    def cards(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Each listed memory as the projector last wrote it, vector left out (``embedding_model``
        kept): recall scores on these and the store confirms what is returned or shown
        (:mod:`agentmem.services.reads`). An id left out: the caller reads the store."""

    def listing(self, scope: Scope, category: str, limit: int) -> builtins.list[MemoryRecord] | None:
        """:meth:`MemoryStore.list` of ``category``'s active memories as the cards hold them (see
        :mod:`agentmem.services.slot_listings`); None: a document has no card or category."""


class SearchIndex(Projection, CardStore, Protocol):
    """k-NN + BM25 projection of active memories (OpenSearch; numpy + SQLite locally), which also
    keeps each memory's card (:class:`CardStore`)."""

    def upsert(self, record: MemoryRecord) -> ProjectionOutcome:
        """Write the record if its version is newer than the indexed one (external versioning)."""

    def upsert_many(self, records: Sequence[MemoryRecord]) -> builtins.list[ProjectionOutcome | None]:
        """``upsert`` of each in one request where the engine has one (a projector batch); None
        where that item failed transiently (the caller retries it alone)."""

    def delete(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        """Remove the document unless the index holds a newer version."""

    def knn(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> builtins.list[Hit]:
        """Nearest active memories by cosine (vectors of ``model`` only), best first."""

    def knn_many(
        self, scope: Scope, vectors: Sequence[np.ndarray], k: int, model: str
    ) -> builtins.list[builtins.list[Hit]]:
        """:meth:`knn` of each of ``vectors``, in order, answered together (one request; the
        embedded index scans once for a few of them): what a turn's facts or a batch's records
        ask at once."""

    def keyword(self, scope: Scope, text: str, k: int) -> builtins.list[Hit]:
        """BM25 over CJK-aware terms, best first."""

    def similarities(
        self, scope: Scope, vector: np.ndarray, memory_ids: Sequence[str], model: str
    ) -> dict[str, float]:
        """Cosine with each listed memory's indexed vector of ``model`` (ids without one left out)."""


class GraphStore(Projection, Protocol):
    """Graph of memories and entities (Neptune; SQLite adjacency tables locally)."""

    def upsert_memory(self, record: MemoryRecord) -> ProjectionOutcome:
        """Create/update the memory vertex; its version never goes backwards."""

    def delete_memory(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        """Remove the vertex and its edges unless the graph holds a newer version."""

    def link(self, scope: Scope, edges: Sequence[Edge]) -> int:
        """Create edges between memory vertices (idempotent); returns how many are new."""

    def link_entities(self, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        """Upsert entity vertices (scoped) and BELONGS_TO edges from the memory to each."""

    def neighbours(
        self,
        scope: Scope,
        seed_ids: Sequence[str],
        hops: int,
        limit: int,
        via: Collection[str] | None = None,
    ) -> builtins.list[Neighbour]:
        """Memories within ``hops`` (1 or 2) of the seeds, seeds excluded, nearest first;
        ``via``: walk only edges of these types (``None``: every type, entities included)."""

    def previous_in_session(self, scope: Scope, session_id: str, memory_id: str) -> str | None:
        """The memory of the same session written just before ``memory_id`` (FOLLOWS source)."""

    def degree(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, int]:
        """Number of edges touching each memory (hub protection)."""


@runtime_checkable
class Embedder(Protocol):
    """Text to vectors. Documents and queries may be embedded differently (e5's prefixes)."""

    @property
    def model_id(self) -> str:
        """Recorded on every memory; vectors of two models never mix."""

    @property
    def dimension(self) -> int: ...

    @property
    def calibration(self) -> Calibration:
        """Maps this model's raw cosines onto the calibrated scale thresholds are written in."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dimension) float32, L2-normalised. Raises EmbedderUnavailable."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dimension,) float32, L2-normalised. Raises EmbedderUnavailable."""


class AuditLog(Protocol):
    """Append-only audit trail: no update, no delete (erasure of a user is the one exception,
    and it is itself audited)."""

    def append(self, event: AuditEvent) -> None: ...

    def list(self, scope: Scope, limit: int = 100, action: str | None = None) -> builtins.list[AuditEvent]:
        """Newest first."""


class IdempotencyStore(Protocol):
    """The answers of explicit writes by ``Idempotency-Key``, per scope, until they expire."""

    def claim(self, scope: Scope, candidate: IdempotencyRecord, now: datetime) -> IdempotencyRecord:
        """The record of ``candidate.key`` in ``scope``: ``candidate`` itself when the key is new
        or its record expired before ``now`` (it is stored), else the record stored first."""

    def complete(self, scope: Scope, key: str, status: int, body: str) -> None:
        """Keep the answer of the request that claimed ``key`` (until its record expires)."""

    def prune_idempotency(self, now: datetime) -> int:
        """Drop the records expired before ``now``; how many."""

    def erase_scope(self, scope: Scope) -> int:
        """Drop the scope's records (an erase); how many."""


@runtime_checkable
class Retained(Protocol):
    """An adapter that keeps something only for a while (the embedded ones; in AWS, TTLs and the
    stream's 24 hours do it)."""

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """Drop what ``policy`` no longer keeps at ``now``; how many rows, by what they were."""


@runtime_checkable
class Compactable(Protocol):
    """An adapter over a file whose space a retention pass may give back."""

    def compact(self, min_free_fraction: float) -> bool:
        """Checkpoint the file, and vacuum it when at least ``min_free_fraction`` of it is free;
        True when it vacuumed."""


@runtime_checkable
class AuditedWrites(Protocol):
    """A memory store that keeps the audit trail in its own transactions (the embedded store:
    the trail is a table of its file). Where a store is not one, the write and its audit line are
    two steps (DynamoDB: the audit table is appended right after the write)."""

    def create_audited(self, record: MemoryRecord, events: Sequence[AuditEvent]) -> None:
        """:meth:`MemoryStore.create` and the append of ``events`` in one transaction: both or
        neither. Raises VersionConflict (nothing appended) if the id exists."""

    def transact_audited(self, puts: Sequence[Put], events: Sequence[AuditEvent]) -> None:
        """:meth:`MemoryStore.transact` and the append of ``events`` in one transaction: both or
        neither (a supersede and its line, a quarantine, a patch). Raises as ``transact`` does."""


class Clock(Protocol):
    """Where services get the time (domain code takes it as an argument)."""

    def now(self) -> datetime:
        """Timezone-aware current time."""


@runtime_checkable
class LLM(Protocol):
    """The optional model helpers of the write path (Bedrock Converse; absent by default).

    Rules always run first; the model only adds to what they found or settles what they left
    open. Every method answers None for "no answer: fall back to the rules" — throttling, an SDK
    error, an empty, truncated or malformed reply — and never raises for model trouble, so a
    degraded model degrades the write path to the rules, never breaks it. Inputs are already
    redacted; outputs are untrusted and go through the same guards as rule output.
    """

    def extract(self, question: str, answer: str, lang: str) -> builtins.list[LlmFact] | None:
        """Durable facts about the user from one exchange (``question`` is the user's message,
        ``answer`` the assistant's reply, ``lang`` "zh" or "en"), each an
        :class:`~agentmem.domain.llm_facts.LlmFact`: its ``content`` and, when the model gave
        them, a ``key``, ``value``, ``category`` (a :class:`~agentmem.domain.models.Category`
        value) and ``source`` ("user" or "exchange"). A reply that is not valid as a whole is
        None, not a partial list; a fact with blank content is passed on (the write path counts
        it as malformed). An empty list: nothing qualifies. None: no answer, fall back to the
        rules."""

    def classify(self, text: str, lang: str = "en") -> str | None:
        """One category value (:class:`~agentmem.domain.models.Category`) for ``text``. None: no
        answer, keep the rule category."""

    def judge_conflict(self, old: str, new: str, lang: str = "en") -> bool | None:
        """Whether ``new`` contradicts ``old`` about the same user, so ``old`` should be
        superseded. None: no answer, keep both (the rules' lean to "not a conflict")."""

    def summarise(self, facts: Sequence[str], lang: str = "en") -> str | None:
        """A short summary (at most three sentences) of one session from its ``facts`` (the
        extractive summary's, in the order they were said; redacted). None: no answer, keep the
        extractive summary alone. The reply is untrusted: the caller guards it."""


class PrototypeBanks(Protocol):
    """Where the semantic guard keeps its prototype banks once embedded, so a new process (a Lambda
    cold start) reads them instead of embedding every prototype again. Best effort: the guard
    embeds the bank itself when ``load`` finds nothing or raises."""

    def load(self, key: str) -> np.ndarray | None:
        """The vectors stored under ``key`` (float32, one row per prototype), or None."""
        ...

    def save(self, key: str, vectors: np.ndarray) -> None:
        """Store ``vectors`` under ``key``. Raises ``StoreUnavailable``."""
        ...


class ReindexJournal(Protocol):
    """What a reindex to one model keeps beside the records (docs/providers/README.md, "Changing
    the embedder of existing data"): each memory's staged vector of the target model, the scopes
    it staged (with when each was listed, so an erase that came later is swept), and the saved
    progress of the walk. Never read by the service's readers: staging changes nothing they use.
    Every method raises ``StoreUnavailable`` when the journal cannot be reached."""

    @property
    def model_id(self) -> str:
        """The target model every vector of this journal is of."""
        ...

    def staged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, StagedVector]:
        """The staged vectors of ``memory_ids`` (the ones never staged left out), each at the
        version it was staged at: the caller compares it with the memory's."""
        ...

    def keep(self, scope: Scope, rows: Sequence[StagedVector]) -> None:
        """Stage ``rows`` (replacing what was staged for the same memories)."""
        ...

    def mark_scope(self, scope: Scope, listed_at: datetime) -> None:
        """``scope`` was staged from a listing read at ``listed_at`` (replacing an earlier mark)."""
        ...

    def staged_scopes(
        self, limit: int, cursor: str | None = None
    ) -> tuple[builtins.list[tuple[Scope, datetime]], str | None]:
        """The marked scopes with their ``listed_at``, a page at a time (None: the last page)."""
        ...

    def discard_scope(self, scope: Scope) -> None:
        """Drop every staged vector of ``scope`` and its mark (the scope was erased)."""
        ...

    def progress(self) -> ReindexProgress | None:
        """The saved progress of the reindex to :attr:`model_id`, or None before the first run."""
        ...

    def save_progress(self, progress: ReindexProgress) -> ReindexProgress:
        """Save ``progress`` if the saved one is still at ``progress.revision`` (none saved:
        revision 0); returns it at the next revision. Raises ``VersionConflict`` when another run
        saved meanwhile."""
        ...
