"""In-memory fakes of every port (:mod:`agentmem.ports`): plain dicts and lists, the scope's key
in every key, and the semantics the port docstrings promise — optimistic versions, opaque cursors,
the change stream of the source of truth, version-guarded projections with tombstones.

They are test doubles for service unit tests (``tests/unit/services``), and they are honest
because the contract suites (``tests/integration/contracts``) run over them as one more
implementation next to the embedded and AWS adapters.

Every fake can be switched off: ``fake.down = True`` makes each call raise
:class:`~agentmem.errors.StoreUnavailable`, and ``fake.fail("method", times=1)`` fails only the
next calls of one method (a crash in the middle of the write path, say). What a real store keeps
as JSON (audit details, processed outcomes, runtime state, raw-turn extras) goes through a JSON
round trip here too, and embeddings come back as float32, as the codec stores them, so a service
cannot pass on a fake with a value a real adapter would change.

The :class:`~agentmem.ports.Embedder` has no fake here: :class:`agentmem.adapters.embedders.HashEmbedder`
is deterministic, offline and cheap, and it is what the unit tests wire.
"""

from __future__ import annotations

import builtins
import itertools
import json
import threading
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import numpy as np

from agentmem.adapters.embedded.text_index import bm25_terms
from agentmem.adapters.runtime_state import parse_stored_state
from agentmem.domain.conflict import attribute_keys
from agentmem.domain.models import AuditEvent, MemoryRecord, Scope, Status
from agentmem.domain.runtime_state import RuntimeState
from agentmem.errors import NotFound, QueueFull, StoreUnavailable, ValidationFailed, VersionConflict
from agentmem.messages import TurnMessage
from agentmem.ports import (
    AuditLog,
    Change,
    Edge,
    GraphStore,
    Hit,
    MemoryStore,
    Neighbour,
    Page,
    ProjectionOutcome,
    ProjectionState,
    Put,
    QueuedTurns,
    RawTurnRecord,
    Reading,
    RuntimeStateStore,
    SearchIndex,
    TurnLog,
    TurnQueue,
)
from support.fakes.cursors import decode_cursor, encode_cursor
from support.fakes.scope_ledger import InMemoryScopeLedger

EDGE_TYPES = frozenset({"FOLLOWS", "SIMILAR_TO", "CAUSES", "BELONGS_TO"})


def _drop_scope(rows: dict[Any, Any], scope: Scope) -> int:
    """Delete the rows keyed ``(scope.key, ...)``; how many there were."""
    mine = [key for key in rows if key[0] == scope.key]
    for key in mine:
        del rows[key]
    return len(mine)


def _json(value: Any) -> Any:
    """What a JSON column gives back (tuples become lists, datetimes strings)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _vectors(record: MemoryRecord, embeddings: bool) -> MemoryRecord:
    """The record as a read returns it: without its vector when the caller said it needs none
    (the embedded store leaves it out too, so a service cannot rely on it being there)."""
    return record if embeddings or record.embedding is None else replace(record, embedding=None)


class Switchable:
    """Fault injection shared by the fakes: an outage, or the next ``times`` calls of one method."""

    store_name = "fake"

    def __init__(self) -> None:
        self.down = False
        self._failures: dict[str, int] = {}
        self._lock = threading.RLock()  # services fan out to threads (the context slots)

    def fail(self, method: str, times: int = 1) -> None:
        self._failures[method] = self._failures.get(method, 0) + times

    def _enter(self, method: str) -> None:
        left = self._failures.get(method, 0)
        if left:
            self._failures[method] = left - 1
        if self.down or left:
            raise StoreUnavailable(
                f"{self.store_name} is unavailable", details={"store": self.store_name, "operation": method}
            )


# ---------------------------------------------------------------------------- source of truth


def _stored(record: MemoryRecord) -> MemoryRecord:
    """The record as a store gives it back: the embedding is kept as float32."""
    if record.embedding is None:
        return record
    embedding = tuple(float(x) for x in np.asarray(record.embedding, dtype="<f4"))
    return record if embedding == record.embedding else replace(record, embedding=embedding)


class InMemoryMemoryStore(Switchable, MemoryStore):
    """:class:`~agentmem.ports.MemoryStore`; ``changes`` is its change stream (oldest first),
    appended in the same step as each write, as DynamoDB Streams / the SQLite outbox are.
    ``ledger`` is its :class:`~support.fakes.scope_ledger.InMemoryScopeLedger`, over the same
    state (as the real ledgers share the store's table or file)."""

    store_name = "memory-store"

    def __init__(self) -> None:
        super().__init__()
        self._records: dict[tuple[str, str], MemoryRecord] = {}
        self._scopes: dict[str, Scope] = {}
        self.changes: builtins.list[Change] = []
        self.ledger = InMemoryScopeLedger(self)

    def _check_barrier(self, records: Iterable[MemoryRecord]) -> None:
        for record in records:
            barrier = self.ledger.barriers.get(record.scope.key)
            if barrier is not None and record.created_at is not None and record.created_at <= barrier:
                raise VersionConflict(
                    "the scope was erased after this record was created",
                    details={
                        "memory_id": record.memory_id,
                        "reason": "erased",
                        "erased_at": barrier.isoformat(),
                    },
                )

    def _emit(
        self, event: str, scope: Scope, memory_id: str, new: MemoryRecord | None, old: MemoryRecord | None
    ) -> None:
        self.changes.append(Change(event, scope, memory_id, new, old, sequence=str(len(self.changes) + 1)))

    def _write(self, record: MemoryRecord) -> None:
        key = (record.scope.key, record.memory_id)
        old = self._records.get(key)
        stored = _stored(record)
        self._records[key] = stored
        self._scopes[record.scope.key] = record.scope
        self._emit("INSERT" if old is None else "MODIFY", record.scope, record.memory_id, stored, old)

    def create(self, record: MemoryRecord) -> None:
        with self._lock:
            self._enter("create")
            if (record.scope.key, record.memory_id) in self._records:
                raise VersionConflict(
                    "memory already exists", details={"memory_id": record.memory_id, "expected": None}
                )
            self._check_barrier([record])
            self._write(record)

    def update(self, record: MemoryRecord, expected_version: int) -> None:
        with self._lock:
            self._enter("update")
            current = self._records.get((record.scope.key, record.memory_id))
            if current is None:
                raise NotFound("memory not found", details={"memory_id": record.memory_id})
            if current.version != expected_version:
                raise VersionConflict(
                    "memory changed concurrently",
                    details={
                        "memory_id": record.memory_id,
                        "expected": expected_version,
                        "actual": current.version,
                    },
                )
            self._write(record)

    def transact(self, puts: Sequence[Put]) -> None:
        with self._lock:
            self._enter("transact")
            keys = [(p.record.scope.key, p.record.memory_id) for p in puts]
            if len(set(keys)) != len(keys):
                raise ValidationFailed("a transaction may touch each memory only once")
            for put, key in zip(puts, keys, strict=True):
                current = self._records.get(key)
                actual = None if current is None else current.version
                if actual != put.expected_version:
                    raise VersionConflict(
                        "transaction cancelled: version check failed",
                        details={"memory_id": key[1], "expected": put.expected_version, "actual": actual},
                    )
            self._check_barrier([p.record for p in puts if p.expected_version is None])
            for put in puts:
                self._write(put.record)

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        with self._lock:
            self._enter("get")
            return self._records.get((scope.key, memory_id))

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, embeddings: bool = True
    ) -> dict[str, MemoryRecord]:
        with self._lock:
            self._enter("get_many")
            found = {m: self._records.get((scope.key, m)) for m in dict.fromkeys(memory_ids)}
            return {m: _vectors(r, embeddings) for m, r in found.items() if r is not None}

    def _newest_first(self, scope: Scope) -> builtins.list[MemoryRecord]:
        # Memory ids are time-sortable: newest first is the id order, descending.
        mine = [r for (pk, _), r in self._records.items() if pk == scope.key]
        return sorted(mine, key=lambda r: r.memory_id, reverse=True)

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
        with self._lock:
            self._enter("list")
            wanted = {Status(s) for s in statuses}
            after = decode_cursor("list", cursor) if cursor is not None else None
            if not wanted or limit <= 0:
                return Page(items=[], next_cursor=None)
            rows = [
                r
                for r in self._newest_first(scope)
                if r.status in wanted
                and (category is None or r.category.value == str(category))
                and (after is None or r.memory_id < after)
            ]
            items = [_vectors(r, embeddings) for r in rows[:limit]]
            more = len(rows) > limit
            return Page(items=items, next_cursor=encode_cursor("list", items[-1].memory_id) if more else None)

    def find_by_key(self, scope: Scope, key: str) -> builtins.list[MemoryRecord]:
        with self._lock:
            self._enter("find_by_key")
            return [r for r in self._newest_first(scope) if r.key == key and r.is_active]

    def scan_active(
        self, scope: Scope, limit: int, *, embeddings: bool = True
    ) -> builtins.list[MemoryRecord]:
        with self._lock:
            self._enter("scan_active")
            active = [r for r in self._newest_first(scope) if r.is_active][: max(0, limit)]
            return [_vectors(r, embeddings) for r in active]

    def hard_delete(self, scope: Scope, memory_id: str) -> bool:
        with self._lock:
            self._enter("hard_delete")
            old = self._records.pop((scope.key, memory_id), None)
            if old is None:
                return False
            self._emit("REMOVE", scope, memory_id, None, old)
            return True

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            mine = sorted(self._newest_first(scope), key=lambda r: r.memory_id)
            for record in mine:
                del self._records[(scope.key, record.memory_id)]
                self._emit("REMOVE", scope, record.memory_id, None, record)
            self.ledger.pending.pop(scope.key, None)
            return len(mine)


# ---------------------------------------------------------------------------- turn log, state, audit


class InMemoryTurnLog(Switchable, TurnLog):
    """:class:`~agentmem.ports.TurnLog`: raw turns by (scope, message id), in arrival order."""

    store_name = "turn-log"

    def __init__(self) -> None:
        super().__init__()
        self._turns: dict[tuple[str, str], tuple[int, RawTurnRecord]] = {}
        self._processed: dict[tuple[str, str], tuple[datetime, Any]] = {}
        self._arrival = itertools.count()

    def append_raw(self, scope: Scope, turn: RawTurnRecord) -> bool:
        with self._lock:
            self._enter("append_raw")
            key = (scope.key, turn.message_id)
            if key in self._turns:
                return False
            self._turns[key] = (next(self._arrival), replace(turn, extra=_json(turn.extra)))
            return True

    def recent_turns(self, scope: Scope, session_id: str, limit: int) -> builtins.list[RawTurnRecord]:
        with self._lock:
            self._enter("recent_turns")
            if limit <= 0:
                return []
            session = sorted(
                (
                    (t.at, arrival, t)
                    for (pk, _), (arrival, t) in self._turns.items()
                    if pk == scope.key and t.session_id == session_id
                ),
                key=lambda row: (row[0], row[1]),
            )
            return [t for _, _, t in session[-limit:]]

    def is_processed(self, scope: Scope, message_id: str) -> bool:
        with self._lock:
            self._enter("is_processed")
            return (scope.key, message_id) in self._processed

    def mark_processed(self, scope: Scope, message_id: str, at: datetime, outcome: dict[str, Any]) -> None:
        """Idempotent; a repeated mark replaces the outcome."""
        with self._lock:
            self._enter("mark_processed")
            self._processed[(scope.key, message_id)] = (at, _json(outcome))

    def processed_outcome(self, scope: Scope, message_id: str) -> dict[str, Any] | None:
        """The outcome recorded by :meth:`mark_processed` (as both adapters offer; not in the port)."""
        with self._lock:
            found = self._processed.get((scope.key, message_id))
            return None if found is None else dict(found[1])

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            _drop_scope(self._processed, scope)
            return _drop_scope(self._turns, scope)

    def forget_turn(self, scope: Scope, message_id: str) -> bool:
        with self._lock:
            self._enter("forget_turn")
            self._processed.pop((scope.key, message_id), None)
            return self._turns.pop((scope.key, message_id), None) is not None


class InMemoryRuntimeState(Switchable, RuntimeStateStore):
    """:class:`~agentmem.ports.RuntimeStateStore`: the typed state kept as the JSON the stores
    keep; an expired state reads as absent by the injected clock."""

    store_name = "runtime-state"

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        self._clock = clock or (lambda: datetime.now(UTC))
        self._states: dict[tuple[str, str], tuple[str, datetime]] = {}

    def get(self, scope: Scope, session_id: str) -> RuntimeState | None:
        with self._lock:
            self._enter("get")
            found = self._states.get((scope.key, session_id))
            if found is None or found[1] <= self._clock():
                return None
            return parse_stored_state(found[0], store=self.store_name, session_id=session_id)

    def put(self, scope: Scope, session_id: str, state: RuntimeState, expires_at: datetime) -> None:
        with self._lock:
            self._enter("put")
            self._states[(scope.key, session_id)] = (state.to_json(), expires_at)

    def write_raw(self, scope: Scope, session_id: str, raw: str, expires_at: datetime) -> None:
        """Store a row behind the port's back (one written by another version)."""
        self._states[(scope.key, session_id)] = (raw, expires_at)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            return _drop_scope(self._states, scope)


def new_event_id(event: AuditEvent) -> str:
    """Time-sortable, as both adapters make them: ``<epoch ms, 13 digits>-<8 hex>``."""
    return f"{max(0, int(event.at.timestamp() * 1000)):013d}-{uuid4().hex[:8]}"


class InMemoryAuditLog(Switchable, AuditLog):
    """:class:`~agentmem.ports.AuditLog`: append-only; an event id already stored is a no-op."""

    store_name = "audit"

    def __init__(self) -> None:
        super().__init__()
        self._events: dict[tuple[str, str], AuditEvent] = {}

    def append(self, event: AuditEvent) -> None:
        with self._lock:
            self._enter("append")
            stored = replace(
                event, event_id=event.event_id or new_event_id(event), details=_json(event.details)
            )
            self._events.setdefault((event.scope.key, stored.event_id), stored)

    def list(self, scope: Scope, limit: int = 100, action: str | None = None) -> builtins.list[AuditEvent]:
        with self._lock:
            self._enter("list")
            if limit <= 0:
                return []
            mine = [
                e
                for (pk, _), e in self._events.items()
                if pk == scope.key and (action is None or e.action == action)
            ]
            mine.sort(key=lambda e: (e.at, e.event_id), reverse=True)
            return [replace(e, details=_json(e.details)) for e in mine[:limit]]


# ---------------------------------------------------------------------------- projections


@dataclass
class _Doc:
    version: int
    content_hash: str
    model: str | None
    vector: np.ndarray | None  # L2-normalised float32
    terms: frozenset[str]
    reading: Reading | None = None
    card: MemoryRecord | None = None  # the record as indexed, its vector left out


def _unit(vector: Any) -> np.ndarray | None:
    array = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(array))
    if array.size == 0 or not np.isfinite(norm) or norm == 0:
        return None
    unit: np.ndarray = array / norm
    return unit


class InMemorySearchIndex(Switchable, SearchIndex):
    """:class:`~agentmem.ports.SearchIndex`: exact cosine k-NN over numpy, and a keyword channel
    that scores by how many distinct query terms a document holds (the terms of the embedded
    index's analyzer, :func:`~agentmem.adapters.embedded.text_index.bm25_terms`; not BM25 scores). External versioning with tombstones, as OpenSearch and the embedded index keep it."""

    store_name = "search-index"

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[tuple[str, str], _Doc] = {}
        self._tombstones: dict[tuple[str, str], int] = {}

    def _guard(self, record: MemoryRecord) -> ProjectionOutcome | None:
        """STALE / CONFLICT when this version may not be written; None when it may."""
        key = (record.scope.key, record.memory_id)
        held = self._docs.get(key)
        if held is not None:
            if record.version < held.version:
                return ProjectionOutcome.STALE
            if record.version == held.version:
                same = held.content_hash == record.content_hash
                return ProjectionOutcome.STALE if same else ProjectionOutcome.CONFLICT
            return None
        if record.version <= self._tombstones.get(key, 0):
            return ProjectionOutcome.STALE
        return None

    def _bury(self, key: tuple[str, str], version: int) -> None:
        self._tombstones[key] = max(version, self._tombstones.get(key, 0))

    def upsert_many(self, records: Sequence[MemoryRecord]) -> list[ProjectionOutcome | None]:
        return [self.upsert(r) for r in records]

    def upsert(self, record: MemoryRecord) -> ProjectionOutcome:
        with self._lock:
            self._enter("upsert")
            refused = self._guard(record)
            if refused is not None:
                return refused
            key = (record.scope.key, record.memory_id)
            if not record.is_active:  # not indexed: the upsert removes the document
                existed = self._docs.pop(key, None) is not None
                self._bury(key, record.version)
                return ProjectionOutcome.APPLIED if existed else ProjectionOutcome.STALE
            vector = None if record.embedding is None else _unit(record.embedding)
            text = " ".join([record.content, record.key or "", *record.tags])
            self._docs[key] = _Doc(
                version=record.version,
                content_hash=record.content_hash,
                model=record.embedding_model if vector is not None else None,
                vector=vector,
                terms=frozenset(bm25_terms(text)),
                reading=Reading(attribute_keys(record.content), record.pinned),
                card=replace(record, embedding=None),
            )
            self._tombstones.pop(key, None)
            return ProjectionOutcome.APPLIED

    def delete(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        with self._lock:
            self._enter("delete")
            key = (scope.key, memory_id)
            held = self._docs.get(key)
            if held is not None and held.version > version:
                return ProjectionOutcome.STALE
            self._bury(key, version)
            if held is None:
                return ProjectionOutcome.STALE
            del self._docs[key]
            return ProjectionOutcome.APPLIED

    def _mine(self, scope: Scope) -> builtins.list[tuple[str, _Doc]]:
        return [(m, d) for (pk, m), d in self._docs.items() if pk == scope.key]

    @staticmethod
    def _best(scored: builtins.list[Hit], k: int) -> builtins.list[Hit]:
        scored.sort(key=lambda h: h.memory_id, reverse=True)  # ties: the larger (newer) id
        scored.sort(key=lambda h: -h.score)
        return scored[: max(0, k)]

    def knn_many(
        self, scope: Scope, vectors: Sequence[np.ndarray], k: int, model: str
    ) -> builtins.list[builtins.list[Hit]]:
        with self._lock:
            self._enter("knn")  # one call: fails (or not) as a whole
            return [self._knn(scope, v, k, model) for v in vectors]

    def knn(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> builtins.list[Hit]:
        with self._lock:
            self._enter("knn")
            return self._knn(scope, vector, k, model)

    def _knn(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> builtins.list[Hit]:
        """Under the caller's lock."""
        query = _unit(vector)
        if k <= 0 or query is None:
            return []
        hits = [
            Hit(m, float(np.dot(d.vector, query)))
            for m, d in self._mine(scope)
            if d.vector is not None and d.model == model and d.vector.size == query.size
        ]
        return self._best(hits, k)

    def similarities(
        self, scope: Scope, vector: np.ndarray, memory_ids: Sequence[str], model: str
    ) -> dict[str, float]:
        with self._lock:
            self._enter("similarities")
            query = _unit(vector)
            if query is None:
                return {}
            found = {m: self._docs.get((scope.key, m)) for m in dict.fromkeys(memory_ids)}
            return {
                m: float(np.dot(d.vector, query))
                for m, d in found.items()
                if d is not None and d.vector is not None and d.model == model and d.vector.size == query.size
            }

    def keyword(self, scope: Scope, text: str, k: int) -> builtins.list[Hit]:
        with self._lock:
            self._enter("keyword")
            wanted = set(bm25_terms(text))
            if k <= 0 or not wanted:
                return []
            hits = [Hit(m, float(len(wanted & d.terms))) for m, d in self._mine(scope) if wanted & d.terms]
            return self._best(hits, k)

    def readings(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, Reading]:
        with self._lock:
            self._enter("readings")
            found = {m: self._docs.get((scope.key, m)) for m in dict.fromkeys(memory_ids)}
            return {m: d.reading for m, d in found.items() if d is not None and d.reading is not None}

    def cards(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        with self._lock:
            self._enter("cards")
            found = {m: self._docs.get((scope.key, m)) for m in dict.fromkeys(memory_ids)}
            return {m: d.card for m, d in found.items() if d is not None and d.card is not None}

    def listing(self, scope: Scope, category: str, limit: int) -> builtins.list[MemoryRecord] | None:
        with self._lock:
            self._enter("listing")
            docs = self._mine(scope)
            if any(d.card is None for _, d in docs):
                return None
            found = sorted(
                (m for m, d in docs if d.card is not None and d.card.category.value == category), reverse=True
            )
            return [c for m in found[: max(0, limit)] if (c := self._docs[(scope.key, m)].card) is not None]

    def stating(self, scope: Scope, keys: Sequence[str], k: int) -> builtins.list[str]:
        with self._lock:
            self._enter("stating")
            wanted = set(keys)
            found = [m for m, d in self._mine(scope) if d.reading is not None and d.reading.keys & wanted]
            return sorted(found, reverse=True)[: max(0, k)]

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        with self._lock:
            self._enter("states")
            found = {m: self._docs.get((scope.key, m)) for m in dict.fromkeys(memory_ids)}
            return {
                m: ProjectionState(m, d.version, d.content_hash) for m, d in found.items() if d is not None
            }

    def all_states(self, scope: Scope) -> builtins.list[ProjectionState]:
        with self._lock:
            self._enter("all_states")
            return [
                ProjectionState(m, d.version, d.content_hash)
                for m, d in sorted(self._mine(scope), key=lambda md: md[0])
            ]

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            _drop_scope(self._tombstones, scope)
            return _drop_scope(self._docs, scope)


@dataclass
class _Vertex:
    kind: str  # memory | entity
    version: int = 0
    content_hash: str = ""
    status: Status = Status.ACTIVE
    session_id: str | None = None
    created_at: datetime | None = None
    name: str = ""  # an entity's normalised name


def _entity(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


def _when(vertex: _Vertex) -> float:
    return vertex.created_at.timestamp() if vertex.created_at is not None else float("-inf")


class InMemoryGraphStore(Switchable, GraphStore):
    """:class:`~agentmem.ports.GraphStore`: memory and entity vertices and typed edges per scope.

    The graph mirrors every record whatever its status; :meth:`neighbours` walks through any
    vertex and returns active memories only, nearest hop first, then the strongest edge, then the
    larger (newer) id. An entity vertex is keyed by its normalised name inside the scope's key, so
    two tenants' "Alice" are two vertices; an entity left without edges is dropped.
    """

    store_name = "graph"

    def __init__(self) -> None:
        super().__init__()
        self._vertices: dict[tuple[str, str], _Vertex] = {}
        self._edges: dict[tuple[str, str, str, str], float] = {}  # (pk, src, dst, type) -> weight
        self._tombstones: dict[tuple[str, str], int] = {}

    def _memory(self, pk: str, memory_id: str) -> _Vertex | None:
        vertex = self._vertices.get((pk, memory_id))
        return vertex if vertex is not None and vertex.kind == "memory" else None

    def _touching(self, pk: str, vertex_id: str) -> builtins.list[tuple[str, str, str, str]]:
        return [e for e in self._edges if e[0] == pk and vertex_id in (e[1], e[2])]

    def _drop_orphans(self, pk: str, candidates: Iterable[str]) -> None:
        for vertex_id in set(candidates):
            vertex = self._vertices.get((pk, vertex_id))
            if vertex is not None and vertex.kind == "entity" and not self._touching(pk, vertex_id):
                del self._vertices[(pk, vertex_id)]

    def _link_entities(self, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        pk = scope.key
        if self._memory(pk, memory_id) is None:
            return 0
        created = 0
        for name in dict.fromkeys(_entity(e) for e in entities):
            if not name:
                continue
            vertex_id = f"ENT#{name}"
            self._vertices.setdefault((pk, vertex_id), _Vertex(kind="entity", name=name))
            edge = (pk, memory_id, vertex_id, "BELONGS_TO")
            if edge not in self._edges:
                self._edges[edge] = 1.0
                created += 1
        return created

    def upsert_memory(self, record: MemoryRecord) -> ProjectionOutcome:
        with self._lock:
            self._enter("upsert_memory")
            pk, memory_id = record.scope.key, record.memory_id
            held = self._memory(pk, memory_id)
            if held is not None:
                if record.version < held.version:
                    return ProjectionOutcome.STALE
                if record.version == held.version:
                    same = held.content_hash == record.content_hash
                    return ProjectionOutcome.STALE if same else ProjectionOutcome.CONFLICT
            elif record.version <= self._tombstones.get((pk, memory_id), 0):
                return ProjectionOutcome.STALE
            self._vertices[(pk, memory_id)] = _Vertex(
                kind="memory",
                version=record.version,
                content_hash=record.content_hash,
                status=record.status,
                session_id=record.source_refs.session_id,
                created_at=record.created_at,
            )
            self._tombstones.pop((pk, memory_id), None)
            wanted = {f"ENT#{_entity(e)}" for e in record.entities if _entity(e)}
            linked = {e[2] for e in self._edges if e[0] == pk and e[1] == memory_id and e[3] == "BELONGS_TO"}
            gone = {
                v
                for v in linked - wanted
                if (pk, v) in self._vertices and self._vertices[(pk, v)].kind == "entity"
            }
            for vertex_id in gone:
                del self._edges[(pk, memory_id, vertex_id, "BELONGS_TO")]
            self._link_entities(record.scope, memory_id, record.entities)
            self._drop_orphans(pk, gone)
            return ProjectionOutcome.APPLIED

    def delete_memory(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        with self._lock:
            self._enter("delete_memory")
            pk = scope.key
            held = self._memory(pk, memory_id)
            if held is not None and held.version > version:
                return ProjectionOutcome.STALE
            key = (pk, memory_id)
            self._tombstones[key] = max(version, self._tombstones.get(key, 0))
            if held is None:
                return ProjectionOutcome.STALE
            touching = self._touching(pk, memory_id)
            for edge in touching:
                del self._edges[edge]
            del self._vertices[key]
            self._drop_orphans(pk, {v for e in touching for v in (e[1], e[2])})
            return ProjectionOutcome.APPLIED

    def link(self, scope: Scope, edges: Sequence[Edge]) -> int:
        """Edges whose ends are not both memory vertices of ``scope`` are skipped."""
        with self._lock:
            self._enter("link")
            for edge in edges:
                if edge.type not in EDGE_TYPES:
                    raise ValidationFailed(f"unknown edge type {edge.type!r}", details={"type": edge.type})
            created = 0
            for edge in edges:
                key = (scope.key, edge.src, edge.dst, edge.type)
                if edge.src == edge.dst or key in self._edges:
                    continue
                if self._memory(scope.key, edge.src) is None or self._memory(scope.key, edge.dst) is None:
                    continue
                self._edges[key] = float(edge.weight)
                created += 1
            return created

    def link_entities(self, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        with self._lock:
            self._enter("link_entities")
            return self._link_entities(scope, memory_id, entities)

    def neighbours(
        self,
        scope: Scope,
        seed_ids: Sequence[str],
        hops: int,
        limit: int,
        via: Collection[str] | None = None,
    ) -> builtins.list[Neighbour]:
        with self._lock:
            self._enter("neighbours")
            pk = scope.key
            hops = min(2, max(1, hops))
            seeds = list(dict.fromkeys(seed_ids))
            if not seeds or limit <= 0:
                return []
            found: builtins.list[Neighbour] = []
            seen = set(seeds)
            frontier = set(seeds)
            for hop in range(1, hops + 1):
                reached: dict[str, tuple[float, str]] = {}  # vertex -> (weight, edge type)
                for (edge_pk, src, dst, edge_type), weight in self._edges.items():
                    if edge_pk != pk or (via is not None and edge_type not in via):
                        continue
                    for here, other in ((src, dst), (dst, src)):
                        if here in frontier and other not in seen and (pk, other) in self._vertices:
                            best = reached.get(other)
                            if best is None or weight > best[0]:
                                reached[other] = (weight, edge_type)
                seen.update(reached)
                ordered = sorted(reached.items(), key=lambda kv: kv[0], reverse=True)
                ordered.sort(key=lambda kv: -kv[1][0])
                for vertex_id, (_, edge_type) in ordered:
                    vertex = self._vertices[(pk, vertex_id)]
                    if vertex.kind == "memory" and vertex.status is Status.ACTIVE:
                        found.append(Neighbour(memory_id=vertex_id, hops=hop, via=edge_type))
                if len(found) >= limit or not reached:
                    break
                frontier = set(reached)
            return found[:limit]

    def previous_in_session(self, scope: Scope, session_id: str, memory_id: str) -> str | None:
        """By (created_at, id); when ``memory_id`` has no vertex yet, by id (ids are time-sortable)."""
        with self._lock:
            self._enter("previous_in_session")
            pk = scope.key
            same = [
                (vertex_id, v)
                for (vpk, vertex_id), v in self._vertices.items()
                if vpk == pk and v.kind == "memory" and v.session_id == session_id
            ]
            own = self._memory(pk, memory_id)
            if own is not None:
                mark = (_when(own), memory_id)
                earlier = [(_when(v), m) for m, v in same if (_when(v), m) < mark]
            else:
                earlier = [(0.0, m) for m, _ in same if m < memory_id]
            return max(earlier)[1] if earlier else None

    def degree(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, int]:
        with self._lock:
            self._enter("degree")
            return {m: len(self._touching(scope.key, m)) for m in dict.fromkeys(memory_ids)}

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        with self._lock:
            self._enter("states")
            found = {m: self._memory(scope.key, m) for m in dict.fromkeys(memory_ids)}
            return {
                m: ProjectionState(m, v.version, v.content_hash) for m, v in found.items() if v is not None
            }

    def all_states(self, scope: Scope) -> builtins.list[ProjectionState]:
        with self._lock:
            self._enter("all_states")
            return [
                ProjectionState(m, v.version, v.content_hash)
                for (pk, m), v in sorted(self._vertices.items())
                if pk == scope.key and v.kind == "memory"
            ]

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            pk = scope.key
            count = sum(1 for (vpk, _), v in self._vertices.items() if vpk == pk and v.kind == "memory")
            for key in [k for k in self._vertices if k[0] == pk]:
                del self._vertices[key]
            for edge in [e for e in self._edges if e[0] == pk]:
                del self._edges[edge]
            for key in [k for k in self._tombstones if k[0] == pk]:
                del self._tombstones[key]
            return count

    def entity_names(self, scope: Scope) -> builtins.list[str]:
        """The scope's entity vertices by name (white-box, for orphan checks)."""
        with self._lock:
            return sorted(
                v.name for (pk, _), v in self._vertices.items() if pk == scope.key and v.kind == "entity"
            )


# ---------------------------------------------------------------------------- queue


class InMemoryTurnQueue(Switchable, TurnQueue, QueuedTurns):
    """:class:`~agentmem.ports.TurnQueue`, the send side: bodies are
    :meth:`~agentmem.messages.TurnMessage.to_body`, a turn already queued for its scope is not
    queued twice, and with a ``capacity`` a batch that would exceed it is refused whole. It knows
    when it accepted each turn (:class:`~agentmem.ports.QueuedTurns`) and keeps the turns that
    failed every delivery in :attr:`dead` (their port is
    :class:`~support.fakes.dead_letters.InMemoryDeadLetters`, over this queue's state)."""

    store_name = "turn-queue"

    def __init__(
        self,
        capacity: int | None = None,
        tenant_capacity: int | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.capacity = capacity
        self.tenant_capacity = tenant_capacity
        self.clock = clock or (lambda: datetime.now(UTC))
        self._messages: dict[tuple[str, str], str] = {}  # (scope key, message id) -> body, in order
        self._accepted: dict[tuple[str, str], datetime] = {}  # (scope key, message id) -> last sent
        # (scope key, message id) -> (body, reason, attempts, failed at), oldest failure first
        self.dead: dict[tuple[str, str], tuple[str, str, int, datetime]] = {}
        self.refused = 0

    def send(self, turns: Sequence[TurnMessage]) -> builtins.list[str]:
        with self._lock:
            self._enter("send")
            fresh = {(t.scope.key, t.message_id) for t in turns} - set(self._messages)
            if self.tenant_capacity is not None:
                for tenant in sorted({t.tenant_id for t in turns}):
                    prefix = Scope(tenant, "_").key.removesuffix("_")
                    held = sum(1 for pk, _ in self._messages if pk.startswith(prefix))
                    if held + sum(1 for pk, _ in fresh if pk.startswith(prefix)) > self.tenant_capacity:
                        self.refused += len(turns)
                        raise QueueFull(
                            "the tenant's share of the turn queue is full",
                            details={"limit": "tenant", "tenant_capacity": self.tenant_capacity,
                                     "capacity": self.capacity, "queued": held, "requested": len(turns)},
                        )  # fmt: skip
            if self.capacity is not None and len(self._messages) + len(fresh) > self.capacity:
                self.refused += len(turns)
                raise QueueFull(
                    "turn queue is full",
                    details={
                        "capacity": self.capacity,
                        "queued": len(self._messages),
                        "requested": len(turns),
                    },
                )
            now = self.clock()
            for turn in turns:
                self._messages.setdefault((turn.scope.key, turn.message_id), turn.to_body())
                self._accepted[(turn.scope.key, turn.message_id)] = now
            return [t.message_id for t in turns]

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        with self._lock:
            self._enter("queued_at")
            return self._accepted.get((scope.key, message_id))

    def purge_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("purge_scope")
            _drop_scope(self._accepted, scope)
            return _drop_scope(self._messages, scope) + _drop_scope(self.dead, scope)

    def take_bodies(self) -> builtins.list[str]:
        """Remove and return every queued body, oldest first (a consumer's receive + delete)."""
        with self._lock:
            taken = list(self._messages.values())
            self._messages.clear()
            return taken

    def fail_all(self, reason: str, attempts: int = 1) -> int:
        """Every queued turn failed its last delivery (a consumer gave up on it): moved to the
        dead letters, stamped with the clock; how many."""
        with self._lock:
            now = self.clock()
            for key, body in self._messages.items():
                self.dead.pop(key, None)  # a turn failed again: its newest failure counts
                self.dead[key] = (body, reason, attempts, now)
            failed = len(self._messages)
            self._messages.clear()
            return failed
