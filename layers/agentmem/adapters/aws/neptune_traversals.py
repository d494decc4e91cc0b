"""The Gremlin traversals the Neptune adapter sends — pure builders over a traversal source, so
tests can translate them to Groovy text and a fake server can execute their bytecode.

Graph model (docs/aws.md): vertex ids embed the scope key (``<scope key>#MEM#<memory id>``,
``<scope key>#ENT#<hash of the normalised name>``), every vertex and edge carries ``pk`` = the
scope key and every traversal starts with ``has('pk', scope key)`` right after its ids. Memory
vertices (label ``memory``) hold ``memory_id``, ``version``, ``content_hash``, ``status``,
``session_id`` ('' when none), ``created_at`` (sortable text), ``category`` and ``tombstone``
(a deleted memory keeps its vertex, edgeless, with the version it was deleted at, so a late replay
cannot resurrect it). Entity vertices (label ``entity``) hold ``name``. Edge ids are
``<src id>|<type>|<dst id>``, so adding one is idempotent. Single-valued properties are always
written with ``Cardinality.single`` (Neptune's default cardinality is ``set``). Versions go over
the wire as 64-bit longs: gremlinpython sends a plain ``int`` as a 32-bit Int, and the projector's
tombstone version (2**53) does not fit one (found by the real Gremlin Server; the fake accepted it).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import Cardinality, Order, P, T
from gremlin_python.statics import long

from agentmem.adapters.codec import format_sortable
from agentmem.domain.models import MemoryRecord, Scope

MEMORY, ENTITY = "memory", "entity"
single = Cardinality.single
STATE_KEYS = ("memory_id", "version", "content_hash", "status", "tombstone", "created_at")


def normalise_entity(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


def memory_vid(scope: Scope, memory_id: str) -> str:
    return f"{scope.key}#MEM#{memory_id}"


def entity_vid(scope: Scope, name: str) -> str:
    digest = hashlib.sha256(f"{scope.key}\x00{normalise_entity(name)}".encode()).hexdigest()
    return f"{scope.key}#ENT#{digest[:32]}"


def edge_id(src_vid: str, label: str, dst_vid: str) -> str:
    return f"{src_vid}|{label}|{dst_vid}"


def local_id(scope: Scope, vid: str) -> str:
    """The memory id of a memory vertex id (entity ids are returned unchanged)."""
    prefix = f"{scope.key}#MEM#"
    return vid[len(prefix) :] if vid.startswith(prefix) else vid


# ------------------------------------------------------------------ reads


def vertex_states(g: GraphTraversalSource, scope: Scope, vids: Sequence[str]) -> GraphTraversal:
    """Memory vertices among ``vids`` (tombstones included) with their version state."""
    return g.V(*vids).has("pk", scope.key).has_label(MEMORY).element_map(*STATE_KEYS)


def live_states(g: GraphTraversalSource, scope: Scope, vids: Sequence[str] | None) -> GraphTraversal:
    """Non-tombstone memory vertices (``vids`` None: all of the scope)."""
    start = (
        g.V(*vids).has("pk", scope.key).has_label(MEMORY)
        if vids is not None
        else g.V().has(MEMORY, "pk", scope.key)
    )
    return start.has("tombstone", False).element_map("memory_id", "version", "content_hash")


def live_ids(g: GraphTraversalSource, scope: Scope, vids: Sequence[str]) -> GraphTraversal:
    return g.V(*vids).has("pk", scope.key).has_label(MEMORY).has("tombstone", False).id_()


def linked_entities(g: GraphTraversalSource, scope: Scope, vid: str) -> GraphTraversal:
    return (
        g.V(vid).has("pk", scope.key).out_e("BELONGS_TO").has("pk", scope.key).in_v().has_label(ENTITY).id_()
    )


def neighbour_entities(g: GraphTraversalSource, scope: Scope, vid: str) -> GraphTraversal:
    return g.V(vid).has("pk", scope.key).both().has("pk", scope.key).has_label(ENTITY).id_()


def frontier_edges(
    g: GraphTraversalSource,
    scope: Scope,
    vids: Sequence[str],
    limit: int,
    labels: Sequence[str] | None = None,
) -> GraphTraversal:
    """Edges touching ``vids`` (either direction), of ``labels`` only when given, strongest
    first, bounded (hub guard)."""
    return (
        g.V(*vids)
        .has("pk", scope.key)
        .both_e(*(labels or ()))
        .has("pk", scope.key)
        .order()
        .by("weight", Order.desc)
        .limit(limit)
        .element_map("weight")
    )


def vertex_kinds(g: GraphTraversalSource, scope: Scope, vids: Sequence[str]) -> GraphTraversal:
    return g.V(*vids).has("pk", scope.key).element_map("status", "tombstone")


def session_previous(
    g: GraphTraversalSource, scope: Scope, session_id: str, created_at: Any, before_id: str | None
) -> GraphTraversal:
    """The newest live memory of the session before (created_at, memory id)."""
    t = g.V().has(MEMORY, "pk", scope.key).has("session_id", session_id).has("tombstone", False)
    if before_id is None and created_at is None:
        raise ValueError("need created_at or before_id")
    if created_at is None:
        t = t.has("memory_id", P.lt(before_id))
    elif before_id is not None:
        t = t.has("created_at", created_at).has("memory_id", P.lt(before_id))
    else:
        t = t.has("created_at", P.lt(created_at))
    return t.order().by("created_at", Order.desc).by("memory_id", Order.desc).limit(1).values("memory_id")


def degrees(g: GraphTraversalSource, scope: Scope, vids: Sequence[str]) -> GraphTraversal:
    return g.V(*vids).has("pk", scope.key).project("id", "degree").by(__.id_()).by(__.both_e().count())


def count_live(g: GraphTraversalSource, scope: Scope) -> GraphTraversal:
    return g.V().has(MEMORY, "pk", scope.key).has("tombstone", False).count()


def count_scope(g: GraphTraversalSource, scope: Scope, batch: int) -> GraphTraversal:
    return g.V().has("pk", scope.key).limit(batch).count()


# ------------------------------------------------------------------ writes


def _memory_vertex(scope: Scope, vid: str, memory_id: str, *, tombstone: bool) -> GraphTraversal:
    return (
        __.add_v(MEMORY)
        .property(T.id, vid)
        .property("pk", scope.key)
        .property("memory_id", memory_id)
        .property("version", long(0))
        .property("content_hash", "")
        .property("status", "deleted" if tombstone else "active")
        .property("session_id", "")
        .property("created_at", "")
        .property("category", "")
        .property("tombstone", tombstone)
    )


def write_memory(g: GraphTraversalSource, record: MemoryRecord, expected: int) -> GraphTraversal:
    """Create-or-update the vertex if it is at version ``expected`` (0 = new); returns its id,
    nothing when someone moved it first."""
    scope, vid = record.scope, memory_vid(record.scope, record.memory_id)
    return (
        g.V(vid)
        .has("pk", scope.key)
        .fold()
        .coalesce(__.unfold(), _memory_vertex(scope, vid, record.memory_id, tombstone=False))
        .has("version", long(expected))
        .property(single, "version", long(record.version))
        .property(single, "content_hash", record.content_hash)
        .property(single, "status", record.status.value)
        .property(single, "session_id", record.source_refs.session_id or "")
        .property(single, "created_at", format_sortable(record.created_at))
        .property(single, "category", record.category.value)
        .property(single, "tombstone", False)
        .id_()
    )


def write_tombstone(
    g: GraphTraversalSource, scope: Scope, memory_id: str, version: int, expected: int
) -> GraphTraversal:
    """Mark the vertex deleted at ``version`` (creating it when absent) and drop its edges, if it
    is at version ``expected``; returns its id, nothing when someone moved it first."""
    vid = memory_vid(scope, memory_id)
    return (
        g.V(vid)
        .has("pk", scope.key)
        .fold()
        .coalesce(__.unfold(), _memory_vertex(scope, vid, memory_id, tombstone=True))
        .has("version", long(expected))
        .property(single, "version", long(version))
        .property(single, "status", "deleted")
        .property(single, "tombstone", True)
        .side_effect(__.both_e().drop())
        .id_()
    )


def upsert_entity(g: GraphTraversalSource, scope: Scope, name: str) -> GraphTraversal:
    vid = entity_vid(scope, name)
    create = (
        __.add_v(ENTITY)
        .property(T.id, vid)
        .property("pk", scope.key)
        .property("name", normalise_entity(name))
        .property("status", "active")
        .property("tombstone", False)
    )
    return g.V(vid).has("pk", scope.key).fold().coalesce(__.unfold(), create).id_()


def add_edge(
    g: GraphTraversalSource, scope: Scope, src_vid: str, label: str, dst_vid: str, weight: float
) -> GraphTraversal:
    """Add the edge unless its id exists; yields True when it was created."""
    eid = edge_id(src_vid, label, dst_vid)
    create = (
        __.V(src_vid)
        .has("pk", scope.key)
        .add_e(label)
        .to(__.V(dst_vid).has("pk", scope.key))
        .property(T.id, eid)
        .property("pk", scope.key)
        .property("weight", float(weight))
        .constant(True)
    )
    return g.E(eid).has("pk", scope.key).fold().coalesce(__.unfold().constant(False), create)


def drop_edge(
    g: GraphTraversalSource, scope: Scope, src_vid: str, label: str, dst_vid: str
) -> GraphTraversal:
    return g.E(edge_id(src_vid, label, dst_vid)).has("pk", scope.key).drop()


def drop_orphan_entities(g: GraphTraversalSource, scope: Scope, vids: Sequence[str]) -> GraphTraversal:
    return g.V(*vids).has("pk", scope.key).has_label(ENTITY).not_(__.both_e()).drop()


def drop_scope_batch(g: GraphTraversalSource, scope: Scope, batch: int) -> GraphTraversal:
    return g.V().has("pk", scope.key).limit(batch).drop()
