"""Neptune :class:`~agentmem.ports.GraphStore` over gremlinpython (WebSocket, IAM SigV4).

Traversals come from :mod:`.neptune_traversals` (every one starts from the scope). Writes are
read–decide–write: the vertex's version state is read, the outcome decided in Python with the
embedded store's rules, and the write is guarded on the version that was read (``has('version',
expected)``), so a concurrent writer makes it match nothing instead of going backwards.

Every public method is one operation that :meth:`NeptuneGraphStore._retrying` may run again as a
whole (the re-run re-reads, so a write that did land before a disconnect is seen, not repeated),
with the jittered :class:`~.gremlin_client.Backoff`, on:

* a transient server error — Neptune's ``ConcurrentModificationException`` and the other
  :data:`~.gremlin_client.RETRYABLE_CODES`, Gremlin Server's 429/598;
* a broken connection (:func:`~.gremlin_client.is_transport_failure`: reset sockets, handshake
  errors, timeouts, the driver's "closed" errors): the connection is dropped first, so the retry
  dials anew, with fresh signatures (at most ``Backoff.redials`` times);
* a guarded write that matched nothing (:class:`_Raced`).

When the tries run out, or the server rejects the request itself (a malformed query), the failure
leaves as :class:`~agentmem.errors.StoreUnavailable` — callers degrade (recall drops the graph
channel), nothing raw escapes to a 500. The connection (:mod:`.gremlin_client`: a pool of one,
signed on every dial) is opened on first use.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Any, TypeVar

from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.remote_connection import RemoteConnection
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import Direction, T

from agentmem.adapters.aws import gremlin_client as gc
from agentmem.adapters.aws import neptune_traversals as nt
from agentmem.adapters.aws.gremlin_client import Backoff, connection_factory, signed_headers
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable, ValidationFailed
from agentmem.ports import Edge, Neighbour, ProjectionOutcome, ProjectionState

__all__ = ["Backoff", "NeptuneGraphStore", "connection_factory", "signed_headers"]
log = logging.getLogger(__name__)
R = TypeVar("R")
EDGE_TYPES = frozenset({"FOLLOWS", "SIMILAR_TO", "CAUSES", "BELONGS_TO"})
ERASE_BATCH = 500
ID_CHUNK = 200  # ids per g.V(...) call


class _Raced(Exception):  # internal retry signal
    """A version-guarded write matched nothing: another writer moved the vertex."""


class _Disconnected(Exception):  # internal retry signal
    """The connection broke (and has been dropped); ``cause`` is the driver's exception."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause


def _chunks(values: Sequence[str]) -> list[Sequence[str]]:
    return [values[i : i + ID_CHUNK] for i in range(0, len(values), ID_CHUNK)]


class NeptuneGraphStore:
    """:class:`agentmem.ports.GraphStore` on Neptune (or any TinkerPop server)."""

    def __init__(
        self,
        connect: Callable[[], RemoteConnection],
        *,
        max_expansion: int = 5000,
        sleep: Callable[[float], None] = time.sleep,
        backoff: Backoff | None = None,
    ) -> None:
        self._connect = connect
        self._conn: RemoteConnection | None = None
        self._g: GraphTraversalSource | None = None
        self._lock = threading.Lock()
        self._max_expansion = max(1, max_expansion)
        self._sleep = sleep
        self._backoff = backoff or Backoff()

    # ------------------------------------------------------------------ plumbing

    def _source(self) -> tuple[RemoteConnection, GraphTraversalSource]:
        with self._lock:
            if self._conn is None or self._g is None:
                self._conn = self._connect()
                self._g = traversal().with_remote(self._conn)
            return self._conn, self._g

    def _drop(self, conn: RemoteConnection | None) -> None:
        """Forget ``conn`` (only if it is still the current one: another thread may have redialled)."""
        with self._lock:
            if conn is None or conn is not self._conn:
                return
            self._conn, self._g = None, None
        closing: Any = conn  # the driver is untyped
        try:
            closing.close()
        except Exception as exc:  # a broken socket may fail to close in any way: it is gone either way
            if not gc.is_transport_failure(exc):
                raise
            log.debug("neptune.close_failed", extra={"error": type(exc).__name__})

    def _run(self, build: Callable[..., GraphTraversal], *args: Any) -> list[Any]:
        """Submit ``build(g, *args)``; a broken connection is dropped and raised as :class:`_Disconnected`."""
        conn: RemoteConnection | None = None
        try:
            conn, g = self._source()
            return list(build(g, *args).to_list())
        except GremlinServerError as exc:
            if gc.needs_redial(exc):
                self._drop(conn)
            raise
        except Exception as exc:  # only transport failures (the driver raises some as bare Exception)
            if not gc.is_transport_failure(exc):
                raise
            self._drop(conn)
            raise _Disconnected(exc) from exc

    def _retrying(self, operation: str, fn: Callable[[], R]) -> R:
        """Run ``fn`` (a whole read–decide–write), retrying transient failures with backoff."""
        redials = 0
        last = self._backoff.attempts - 1
        for attempt in range(self._backoff.attempts):
            try:
                return fn()
            except GremlinServerError as exc:
                reason = gc.transient_code(exc)
                if reason is None or attempt == last:
                    code = gc.neptune_code(exc) or exc.status_code
                    raise StoreUnavailable(
                        f"neptune failed during {operation}: {exc.status_code}",
                        details={"store": "neptune", "operation": operation, "code": code},
                    ) from exc
            except _Disconnected as exc:
                redials += 1
                reason = type(exc.cause).__name__
                if redials > self._backoff.redials or attempt == last:
                    raise StoreUnavailable(
                        f"neptune unreachable during {operation}: {reason}",
                        details={"store": "neptune", "operation": operation, "error": reason},
                    ) from exc.cause
            except _Raced as exc:
                reason = "raced"
                if attempt == last:
                    raise StoreUnavailable(
                        f"neptune: {operation} kept racing",
                        details={"store": "neptune", "operation": operation},
                    ) from exc
            delay = self._backoff.delay(attempt)
            log.info(
                "neptune.retry",
                extra={"operation": operation, "attempt": attempt + 1, "reason": reason, "delay_s": delay},
            )
            self._sleep(delay)
        raise AssertionError("unreachable")

    def _state(self, scope: Scope, memory_id: str) -> dict[Any, Any] | None:
        rows = self._run(nt.vertex_states, scope, [nt.memory_vid(scope, memory_id)])
        return rows[0] if rows else None

    # ------------------------------------------------------------------ writes

    def upsert_memory(self, record: MemoryRecord) -> ProjectionOutcome:
        return self._retrying("upsert_memory", lambda: self._upsert_once(record))

    def _upsert_once(self, record: MemoryRecord) -> ProjectionOutcome:
        scope, vid = record.scope, nt.memory_vid(record.scope, record.memory_id)
        state = self._state(scope, record.memory_id)
        expected = 0
        if state is not None:
            current = int(state["version"])
            if state.get("tombstone"):
                if record.version <= current:  # deleted at this version or later
                    return ProjectionOutcome.STALE
            elif record.version < current:
                return ProjectionOutcome.STALE
            elif record.version == current:
                same = state.get("content_hash") == record.content_hash
                return ProjectionOutcome.STALE if same else ProjectionOutcome.CONFLICT
            expected = current
        if not self._run(nt.write_memory, record, expected):
            raise _Raced(record.memory_id)
        wanted = {nt.entity_vid(scope, e) for e in record.entities if nt.normalise_entity(e)}
        linked = set(self._run(nt.linked_entities, scope, vid))
        for gone in sorted(linked - wanted):
            self._run(nt.drop_edge, scope, vid, "BELONGS_TO", gone)
        self._link_entities(scope, vid, record.entities)
        if linked - wanted:
            self._run(nt.drop_orphan_entities, scope, sorted(linked - wanted))
        return ProjectionOutcome.APPLIED

    def delete_memory(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        return self._retrying("delete_memory", lambda: self._delete_once(scope, memory_id, version))

    def _delete_once(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        state = self._state(scope, memory_id)
        if state is None or state.get("tombstone"):
            current = 0 if state is None else int(state["version"])
            # remember the highest deleted version
            if (state is None or version > current) and not self._run(
                nt.write_tombstone, scope, memory_id, version, current
            ):
                raise _Raced(memory_id)
            return ProjectionOutcome.STALE
        current = int(state["version"])
        if current > version:
            return ProjectionOutcome.STALE
        vid = nt.memory_vid(scope, memory_id)
        touched = self._run(nt.neighbour_entities, scope, vid)
        if not self._run(nt.write_tombstone, scope, memory_id, version, current):
            raise _Raced(memory_id)
        if touched:
            self._run(nt.drop_orphan_entities, scope, sorted(set(touched)))
        return ProjectionOutcome.APPLIED

    def link(self, scope: Scope, edges: Sequence[Edge]) -> int:
        """Edges whose endpoints are not both live memory vertices of ``scope`` are skipped."""
        for edge in edges:
            if edge.type not in EDGE_TYPES:
                raise ValidationFailed(f"unknown edge type {edge.type!r}", details={"type": edge.type})
        wanted = [e for e in edges if e.src != e.dst]
        if not wanted:
            return 0
        vids = sorted({nt.memory_vid(scope, m) for e in wanted for m in (e.src, e.dst)})

        def once() -> int:
            live: set[str] = set()
            for part in _chunks(vids):
                live.update(self._run(nt.live_ids, scope, part))
            created = 0
            for e in wanted:
                src, dst = nt.memory_vid(scope, e.src), nt.memory_vid(scope, e.dst)
                if src in live and dst in live:
                    created += sum(
                        1 for r in self._run(nt.add_edge, scope, src, e.type, dst, e.weight) if r is True
                    )
            return created

        return self._retrying("link", once)

    def link_entities(self, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        """Returns the number of new BELONGS_TO edges; 0 when the memory vertex is absent."""
        vid = nt.memory_vid(scope, memory_id)

        def once() -> int:
            if not self._run(nt.live_ids, scope, [vid]):
                return 0
            return self._link_entities(scope, vid, entities)

        return self._retrying("link_entities", once)

    def _link_entities(self, scope: Scope, vid: str, entities: Sequence[str]) -> int:
        created = 0
        for name in dict.fromkeys(nt.normalise_entity(e) for e in entities):
            if not name:
                continue
            self._run(nt.upsert_entity, scope, name)
            evid = nt.entity_vid(scope, name)
            result = self._run(nt.add_edge, scope, vid, "BELONGS_TO", evid, 1.0)
            created += sum(1 for r in result if r is True)
        return created

    def erase_scope(self, scope: Scope) -> int:
        def once() -> int:
            count = int(self._run(nt.count_live, scope)[0])
            while int(self._run(nt.count_scope, scope, 1)[0]):
                self._run(nt.drop_scope_batch, scope, ERASE_BATCH)
            return count

        return self._retrying("erase_scope", once)

    # ------------------------------------------------------------------ queries

    def neighbours(
        self,
        scope: Scope,
        seed_ids: Sequence[str],
        hops: int,
        limit: int,
        via: Collection[str] | None = None,
    ) -> list[Neighbour]:
        """Hops outside 1–2 are clamped. Within a hop: strongest edge first, then newer id;
        ``via``: only edges with these labels (``bothE(labels...)``)."""
        hops = min(2, max(1, hops))
        seeds = [nt.memory_vid(scope, m) for m in dict.fromkeys(seed_ids)]
        labels = None if via is None else tuple(sorted(set(via)))
        if not seeds or limit <= 0 or labels == ():
            return []
        return self._retrying("neighbours", lambda: self._walk(scope, seeds, hops, limit, labels))

    def _walk(
        self, scope: Scope, seeds: list[str], hops: int, limit: int, labels: tuple[str, ...] | None
    ) -> list[Neighbour]:
        found: list[Neighbour] = []
        seen = set(seeds)
        frontier = seeds
        for hop in range(1, hops + 1):
            reached: dict[str, tuple[float, str]] = {}
            for part in _chunks(frontier):
                edges = self._run(nt.frontier_edges, scope, part, self._max_expansion, labels)
                members = set(part)
                for e in edges:
                    out_id, in_id = e[Direction.OUT][T.id], e[Direction.IN][T.id]
                    for frm, other in ((out_id, in_id), (in_id, out_id)):
                        if frm not in members or other in seen:
                            continue
                        weight = float(e.get("weight", 1.0))
                        best = reached.get(other)
                        if best is None or weight > best[0]:
                            reached[other] = (weight, str(e[T.label]))
            if not reached:
                break
            seen.update(reached)
            kinds: dict[str, dict[Any, Any]] = {}
            for part in _chunks(sorted(reached)):
                kinds.update({row[T.id]: row for row in self._run(nt.vertex_kinds, scope, part)})
            ordered = sorted(reached.items(), key=lambda kv: nt.local_id(scope, kv[0]), reverse=True)
            ordered.sort(key=lambda kv: -kv[1][0])
            for vid, (_w, edge_type) in ordered:
                row = kinds.get(vid, {})
                live = (
                    row.get(T.label) == nt.MEMORY
                    and row.get("status") == Status.ACTIVE.value
                    and not row.get("tombstone")
                )
                if live:
                    found.append(Neighbour(memory_id=nt.local_id(scope, vid), hops=hop, via=edge_type))
            if len(found) >= limit:
                break
            frontier = list(reached)
        return found[:limit]

    def previous_in_session(self, scope: Scope, session_id: str, memory_id: str) -> str | None:
        """By (created_at, id); if ``memory_id`` has no live vertex yet, by id."""

        def once() -> str | None:
            state = self._state(scope, memory_id)
            own = None if state is None or state.get("tombstone") else str(state.get("created_at", ""))
            if own is None:
                found = self._run(nt.session_previous, scope, session_id, None, memory_id)
            else:
                found = self._run(nt.session_previous, scope, session_id, own, memory_id)
                if not found:
                    found = self._run(nt.session_previous, scope, session_id, own, None)
            return str(found[0]) if found else None

        return self._retrying("previous_in_session", once)

    def degree(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, int]:
        """Every requested id gets a count (0 when it has no edges or no vertex)."""
        wanted = list(dict.fromkeys(memory_ids))
        counts: dict[str, int] = dict.fromkeys(wanted, 0)
        vids = [nt.memory_vid(scope, m) for m in wanted]
        for part in _chunks(vids):
            rows = self._retrying("degree", partial(self._run, nt.degrees, scope, part))
            for row in rows:
                counts[nt.local_id(scope, str(row["id"]))] = int(row["degree"])
        return counts

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        wanted = list(dict.fromkeys(memory_ids))
        found: dict[str, ProjectionState] = {}
        for part in _chunks([nt.memory_vid(scope, m) for m in wanted]):
            rows = self._retrying("states", partial(self._run, nt.live_states, scope, part))
            for row in rows:
                found[str(row["memory_id"])] = ProjectionState(
                    str(row["memory_id"]), int(row["version"]), str(row["content_hash"])
                )
        return {m: found[m] for m in wanted if m in found}

    def all_states(self, scope: Scope) -> list[ProjectionState]:
        rows = self._retrying("all_states", partial(self._run, nt.live_states, scope, None))
        states = [
            ProjectionState(str(r["memory_id"]), int(r["version"]), str(r["content_hash"])) for r in rows
        ]
        return sorted(states, key=lambda s: s.memory_id)
