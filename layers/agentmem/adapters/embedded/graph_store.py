"""Embedded graph of memories and entities: SQLite adjacency tables, its own file (a projection).

``vertices`` (pk, vertex_id, kind 'memory'|'entity', label, session_id, created_at, version,
content_hash, status) and ``edges`` (pk, src, dst, type, weight, unique per (pk, src, dst, type)),
indexed from both ends. Every statement filters by ``pk = scope.key``. A memory vertex's id is the
memory id, its label the category; an entity vertex's id is derived from the scope and the
normalised name (NFKC, casefolded, stripped), so the same name in two tenants is two vertices and
never links their memories. ``tombstones`` remember the version a memory vertex was deleted at,
so a late replay of an older version does not resurrect it (its version never goes backwards).

The graph mirrors every record the store holds, whatever its status (the status is part of the
content hash reconciliation compares); :meth:`LocalGraphStore.neighbours` returns only active
memories but walks through any vertex. An applied upsert syncs the memory's BELONGS_TO edges to
``record.entities``. A hop reads, for each vertex of its frontier, the strongest edges in both
directions over every edge type through two weight-ordered indexes (``edges_from``, ``edges_to``),
at most ``fan_out`` per direction: a hub entity costs what a small one does (at 10k memories an
unbounded walk through entity hubs took 8 ms, 42 ms at 50k). ``memory → entity ← memory`` is two
hops.

Walks are cached (:data:`WALK_CACHE` of them) under the file's change stamp
(:meth:`~agentmem.adapters.embedded.sqlite_base.SqliteDatabase.change_stamp`): any write to the
graph, by this process or another, starts the cache over, so a cached walk is the one the file's
current contents give. A recall walks from its five best memories, and a user's questions keep
reaching the same ones: between two projections a repeated walk is one pragma read instead of
the walk's indexed queries (1.1 ms of a context call at 10k memories on the peer benchmark's
data, 0.14 ms once its seeds were met).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from agentmem.adapters.codec import format_sortable
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase, chunks, placeholders, projection_states
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import ValidationFailed
from agentmem.ports import Edge, Neighbour, ProjectionOutcome, ProjectionState

EDGE_TYPES = frozenset({"FOLLOWS", "SIMILAR_TO", "CAUSES", "BELONGS_TO"})
WALK_CACHE = 4096  # walks kept between two changes of the file (then the cache starts over)
MEMORY, ENTITY = "memory", "entity"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vertices (
    pk TEXT NOT NULL, vertex_id TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('memory', 'entity')),
    label TEXT NOT NULL, session_id TEXT, created_at TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL DEFAULT 0, content_hash TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'active', PRIMARY KEY (pk, vertex_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vertices_by_session ON vertices (pk, session_id, created_at, vertex_id);
CREATE TABLE IF NOT EXISTS edges (
    pk TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0, UNIQUE (pk, src, dst, type)
);
DROP INDEX IF EXISTS edges_by_dst;
CREATE INDEX IF NOT EXISTS edges_from ON edges (pk, src, weight, dst);
CREATE INDEX IF NOT EXISTS edges_to ON edges (pk, dst, weight, src);
CREATE TABLE IF NOT EXISTS tombstones (
    pk TEXT NOT NULL, vertex_id TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (pk, vertex_id)
) WITHOUT ROWID;
"""

# A vertex's strongest edges from either end (then the newer other end): what one hop reads of it.
_OUT = (
    "SELECT dst, type, weight FROM edges INDEXED BY edges_from WHERE pk = ? AND src = ?"
    " ORDER BY weight DESC, dst DESC LIMIT ?"
)
_IN = (
    "SELECT src, type, weight FROM edges INDEXED BY edges_to WHERE pk = ? AND dst = ?"
    " ORDER BY weight DESC, src DESC LIMIT ?"
)


def _typed(sql: str, types: int) -> str:
    """``sql`` (:data:`_OUT` or :data:`_IN`) over edges of ``types`` given types only."""
    return sql.replace(" ORDER BY", f" AND type IN ({placeholders(types)}) ORDER BY")


def normalise_entity(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


def entity_vertex_id(scope: Scope, name: str) -> str:
    """Scoped id of an entity: the same name in another scope gives another id."""
    digest = hashlib.sha256(f"{scope.key}\x00{normalise_entity(name)}".encode()).hexdigest()
    return f"ENT#{digest[:32]}"


class LocalGraphStore:
    """:class:`agentmem.ports.GraphStore` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path, *, fan_out: int = 50) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="graph")
        self._fan_out = max(1, fan_out)  # edges read per vertex and direction in one hop (hub guard)
        self._walks: dict[tuple[Any, ...], list[Neighbour]] = {}  # under the db lock
        self._walks_stamp: tuple[int, int] | None = None

    def compact(self, min_free_fraction: float) -> bool:
        """:class:`agentmem.ports.Compactable`: this adapter's file."""
        return self._db.compact(min_free_fraction)

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ writes

    def upsert_memory(self, record: MemoryRecord) -> ProjectionOutcome:
        pk, memory_id = record.scope.key, record.memory_id
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT version, content_hash FROM vertices WHERE pk = ? AND vertex_id = ? AND kind = ?",
                (pk, memory_id, MEMORY),
            ).fetchone()
            if row is not None:
                if record.version < row[0]:
                    return ProjectionOutcome.STALE
                if record.version == row[0]:
                    same = row[1] == record.content_hash
                    return ProjectionOutcome.STALE if same else ProjectionOutcome.CONFLICT
            else:
                tomb = conn.execute(
                    "SELECT version FROM tombstones WHERE pk = ? AND vertex_id = ?", (pk, memory_id)
                ).fetchone()
                if tomb is not None and record.version <= tomb[0]:
                    return ProjectionOutcome.STALE
            conn.execute(
                "INSERT OR REPLACE INTO vertices (pk, vertex_id, kind, label, session_id, created_at,"
                " version, content_hash, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pk,
                    memory_id,
                    MEMORY,
                    record.category.value,
                    record.source_refs.session_id,
                    format_sortable(record.created_at),
                    record.version,
                    record.content_hash,
                    record.status.value,
                ),
            )
            conn.execute("DELETE FROM tombstones WHERE pk = ? AND vertex_id = ?", (pk, memory_id))
            wanted = {entity_vertex_id(record.scope, e) for e in record.entities if normalise_entity(e)}
            linked = {
                r[0]
                for r in conn.execute(
                    "SELECT e.dst FROM edges e WHERE e.pk = ? AND e.src = ? AND e.type = 'BELONGS_TO'"
                    " AND EXISTS (SELECT 1 FROM vertices v WHERE v.pk = e.pk AND v.vertex_id = e.dst"
                    " AND v.kind = 'entity')",
                    (pk, memory_id),
                )
            }
            for gone in linked - wanted:
                conn.execute(
                    "DELETE FROM edges WHERE pk = ? AND src = ? AND dst = ? AND type = 'BELONGS_TO'",
                    (pk, memory_id, gone),
                )
            self._link_entities(conn, record.scope, memory_id, record.entities)
            self._drop_orphan_entities(conn, pk, linked - wanted)
        return ProjectionOutcome.APPLIED

    def delete_memory(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        pk = scope.key
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT version FROM vertices WHERE pk = ? AND vertex_id = ? AND kind = ?",
                (pk, memory_id, MEMORY),
            ).fetchone()
            if row is not None and row[0] > version:
                return ProjectionOutcome.STALE
            conn.execute(
                "INSERT INTO tombstones (pk, vertex_id, version) VALUES (?, ?, ?)"
                " ON CONFLICT (pk, vertex_id) DO UPDATE SET version = MAX(version, excluded.version)",
                (pk, memory_id, version),
            )
            if row is None:
                return ProjectionOutcome.STALE
            touched = [
                r[0]
                for r in conn.execute(
                    "SELECT dst FROM edges WHERE pk = ?1 AND src = ?2 UNION SELECT src FROM edges"
                    " WHERE pk = ?1 AND dst = ?2",
                    (pk, memory_id),
                )
            ]
            # One indexed statement per end: "src = ? OR dst = ?" walks every edge of the user.
            conn.execute("DELETE FROM edges WHERE pk = ? AND src = ?", (pk, memory_id))
            conn.execute("DELETE FROM edges WHERE pk = ? AND dst = ?", (pk, memory_id))
            conn.execute("DELETE FROM vertices WHERE pk = ? AND vertex_id = ?", (pk, memory_id))
            self._drop_orphan_entities(conn, pk, set(touched))
        return ProjectionOutcome.APPLIED

    @staticmethod
    def _drop_orphan_entities(conn: Any, pk: str, candidates: set[str]) -> None:
        for vertex_id in candidates:
            conn.execute(
                "DELETE FROM vertices WHERE pk = ?1 AND vertex_id = ?2 AND kind = 'entity'"
                " AND NOT EXISTS (SELECT 1 FROM edges WHERE pk = ?1 AND src = ?2)"
                " AND NOT EXISTS (SELECT 1 FROM edges WHERE pk = ?1 AND dst = ?2)",
                (pk, vertex_id),
            )

    def link(self, scope: Scope, edges: Sequence[Edge]) -> int:
        """Edges whose endpoints are not both memory vertices of ``scope`` are skipped."""
        for edge in edges:
            if edge.type not in EDGE_TYPES:
                raise ValidationFailed(f"unknown edge type {edge.type!r}", details={"type": edge.type})
        created = 0
        with self._db.write() as conn:
            for edge in edges:
                if edge.src == edge.dst:
                    continue
                present = conn.execute(
                    "SELECT COUNT(*) FROM vertices WHERE pk = ? AND kind = 'memory' AND vertex_id IN (?, ?)",
                    (scope.key, edge.src, edge.dst),
                ).fetchone()[0]
                if present != 2:
                    continue
                created += conn.execute(
                    "INSERT OR IGNORE INTO edges (pk, src, dst, type, weight) VALUES (?, ?, ?, ?, ?)",
                    (scope.key, edge.src, edge.dst, edge.type, float(edge.weight)),
                ).rowcount
        return created

    def link_entities(self, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        """Returns the number of new BELONGS_TO edges; 0 when the memory vertex is absent."""
        with self._db.write() as conn:
            return self._link_entities(conn, scope, memory_id, entities)

    @staticmethod
    def _link_entities(conn: Any, scope: Scope, memory_id: str, entities: Sequence[str]) -> int:
        pk = scope.key
        exists = conn.execute(
            "SELECT 1 FROM vertices WHERE pk = ? AND vertex_id = ? AND kind = 'memory'", (pk, memory_id)
        ).fetchone()
        if exists is None:
            return 0
        created = 0
        for name in dict.fromkeys(normalise_entity(e) for e in entities):
            if not name:
                continue
            vertex_id = entity_vertex_id(scope, name)
            conn.execute(
                "INSERT OR IGNORE INTO vertices (pk, vertex_id, kind, label) VALUES (?, ?, 'entity', ?)",
                (pk, vertex_id, name),
            )
            created += conn.execute(
                "INSERT OR IGNORE INTO edges (pk, src, dst, type, weight) VALUES (?, ?, ?, 'BELONGS_TO', 1.0)",
                (pk, memory_id, vertex_id),
            ).rowcount
        return int(created)

    def erase_scope(self, scope: Scope) -> int:
        with self._db.write() as conn:
            count = conn.execute(
                "SELECT COUNT(*) FROM vertices WHERE pk = ? AND kind = 'memory'", (scope.key,)
            ).fetchone()[0]
            for table in ("edges", "vertices", "tombstones"):
                conn.execute(f"DELETE FROM {table} WHERE pk = ?", (scope.key,))
        self._db.checkpoint()  # no page image of the erased text is left in the WAL
        return int(count)

    # ------------------------------------------------------------------ queries

    def _step(
        self, conn: Any, pk: str, frontier: Sequence[str], per_vertex: int, via: tuple[str, ...] | None
    ) -> list[tuple[str, str, float, str, str]]:
        """(other, type, weight, other's kind, other's status) of each frontier vertex's
        ``per_vertex`` strongest edges (of the types ``via``, all when None) in each direction,
        read through the weight-ordered indexes: an entity shared by thousands of memories costs
        what a small one does."""
        edges: list[tuple[str, str, float]] = []
        types: tuple[str, ...]
        if via is None:
            out_sql, in_sql, types = _OUT, _IN, ()
        else:
            out_sql, in_sql, types = _typed(_OUT, len(via)), _typed(_IN, len(via)), via
        for vertex in frontier:
            edges += conn.execute(out_sql, (pk, vertex, *types, per_vertex)).fetchall()
            edges += conn.execute(in_sql, (pk, vertex, *types, per_vertex)).fetchall()
        kinds: dict[str, tuple[str, str]] = {}
        others = list(dict.fromkeys(e[0] for e in edges))
        for part in chunks(others):
            for vertex_id, kind, status in conn.execute(
                f"SELECT vertex_id, kind, status FROM vertices WHERE pk = ? AND vertex_id IN ({placeholders(len(part))})",
                (pk, *part),
            ):
                kinds[vertex_id] = (kind, status)
        return [(o, t, float(w), *kinds[o]) for o, t, w in edges if o in kinds]

    def neighbours(
        self,
        scope: Scope,
        seed_ids: Sequence[str],
        hops: int,
        limit: int,
        via: Collection[str] | None = None,
    ) -> list[Neighbour]:
        """Hops outside 1–2 are clamped. Within a hop: strongest edge first, then newer id. Each
        vertex contributes at most its ``fan_out`` strongest edges per direction and hop (plus
        room for the vertices already reached), so the top of a hop is exact below that fan-out
        and a hub is cut, not walked."""
        hops = min(2, max(1, hops))
        seeds = list(dict.fromkeys(seed_ids))
        if not seeds or limit <= 0:
            return []
        types = None if via is None else tuple(sorted(set(via)))
        if types == ():
            return []
        with self._db.read() as conn:
            stamp = self._db.change_stamp(conn)
            if stamp != self._walks_stamp or len(self._walks) >= WALK_CACHE:
                self._walks.clear()
                self._walks_stamp = stamp
            key = (scope.key, tuple(seeds), hops, limit, types)
            cached = self._walks.get(key)
            if cached is None:
                cached = self._walks[key] = self._walk(conn, scope.key, seeds, hops, limit, types)
        return list(cached)

    def _walk(
        self, conn: Any, pk: str, seeds: list[str], hops: int, limit: int, types: tuple[str, ...] | None
    ) -> list[Neighbour]:
        """What :meth:`neighbours` answers, read on ``conn``."""
        found: list[Neighbour] = []
        seen = set(seeds)
        frontier = seeds
        for hop in range(1, hops + 1):
            per_vertex = min(self._fan_out, limit) + len(seen)
            reached: dict[str, tuple[float, str, str, str]] = {}
            for other, edge_type, weight, kind, status in self._step(conn, pk, frontier, per_vertex, types):
                if other in seen:
                    continue
                best = reached.get(other)
                if best is None or weight > best[0]:
                    reached[other] = (weight, edge_type, kind, status)
            seen.update(reached)
            ordered = sorted(reached.items(), key=lambda kv: kv[0], reverse=True)
            ordered.sort(key=lambda kv: -kv[1][0])
            for vertex_id, (_w, edge_type, kind, status) in ordered:
                if kind == MEMORY and status == Status.ACTIVE.value:
                    found.append(Neighbour(memory_id=vertex_id, hops=hop, via=edge_type))
            if len(found) >= limit or not reached:
                break
            frontier = list(reached)
        return found[:limit]

    def previous_in_session(self, scope: Scope, session_id: str, memory_id: str) -> str | None:
        """By (created_at, id); if ``memory_id`` has no vertex yet, by id (ids are time-sortable)."""
        with self._db.read() as conn:
            own = conn.execute(
                "SELECT created_at FROM vertices WHERE pk = ? AND vertex_id = ? AND kind = 'memory'",
                (scope.key, memory_id),
            ).fetchone()
            if own is not None:
                row = conn.execute(
                    "SELECT vertex_id FROM vertices WHERE pk = ? AND kind = 'memory' AND session_id = ?"
                    " AND (created_at, vertex_id) < (?, ?) ORDER BY created_at DESC, vertex_id DESC LIMIT 1",
                    (scope.key, session_id, own[0], memory_id),
                ).fetchone()
            else:
                row = conn.execute(
                    "SELECT vertex_id FROM vertices WHERE pk = ? AND kind = 'memory' AND session_id = ?"
                    " AND vertex_id < ? ORDER BY vertex_id DESC LIMIT 1",
                    (scope.key, session_id, memory_id),
                ).fetchone()
        return None if row is None else str(row[0])

    def degree(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, int]:
        """Every requested id gets a count (0 when it has no edges or no vertex)."""
        with self._db.read() as conn:
            return {
                m: int(
                    conn.execute(
                        "SELECT (SELECT COUNT(*) FROM edges WHERE pk = ?1 AND src = ?2)"
                        " + (SELECT COUNT(*) FROM edges WHERE pk = ?1 AND dst = ?2)",
                        (scope.key, m),
                    ).fetchone()[0]
                )
                for m in dict.fromkeys(memory_ids)
            }

    _STATES = "SELECT vertex_id, version, content_hash FROM vertices WHERE pk = ? AND kind = 'memory'"

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        return {s.memory_id: s for s in projection_states(self._db, self._STATES, scope.key, memory_ids)}

    def all_states(self, scope: Scope) -> list[ProjectionState]:
        return projection_states(self._db, self._STATES, scope.key)
