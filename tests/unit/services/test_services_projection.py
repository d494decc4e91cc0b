"""The projector and the reconciler on the fakes: projections follow the source of truth by
version, replays are harmless, drift is found and repaired."""

from __future__ import annotations

from dataclasses import replace

from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import ProjectionState
from agentmem.services.admin import MemoryPatch
from support.fake_world import T0, S, World, turn

GHOST = "01KE6P4YM0ZZZZZZZZZZZZZZZZ"


def truth(world: World, scope: Scope = S) -> list[ProjectionState]:
    return [
        ProjectionState(r.memory_id, r.version, r.content_hash)
        for r in sorted(world.active(scope), key=lambda r: r.memory_id)
    ]


def in_sync(world: World) -> bool:
    return world.index.all_states(S) == truth(world) == world.graph.all_states(S)


def only(world: World) -> MemoryRecord:
    [record] = world.active()
    return record


def test_the_projector_applies_each_version_once_and_ignores_older_ones(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    insert = world.store.changes[-1]
    assert world.drain().applied == 1
    assert in_sync(world)
    assert world.c.projector.apply(insert, now=T0).stale == 1  # a redelivered stream record
    v1 = only(world)
    world.c.admin.patch(
        S, v1.memory_id, MemoryPatch(content="I live in Porto, near the river."), now=T0, actor="u1"
    )
    assert world.drain().applied == 1
    late = world.c.projector.apply(insert, now=T0)  # v1 arriving after v2
    assert late.stale == 1 and late.applied == 0
    assert world.index.states(S, [v1.memory_id])[v1.memory_id].version == 2
    assert [h.memory_id for h in world.index.keyword(S, "river", 5)] == [v1.memory_id]
    assert in_sync(world)


def test_a_replayed_insert_of_an_erased_user_does_not_bring_the_memory_back(world: World) -> None:
    """Erasing a user wipes the projections, tombstones included, before the stream has carried
    the REMOVE changes: only reading the source of truth through stops a retried INSERT that
    arrives in between from putting the erased memory back into the index."""
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    insert = world.store.changes[-1]
    world.drain()
    world.c.admin.erase_user(S, now=T0, actor="admin")
    replay = world.c.projector.apply(insert, now=T0)  # before the REMOVE changes are projected
    assert replay.applied == 0
    assert world.index.all_states(S) == [] and world.graph.all_states(S) == []
    assert world.index.keyword(S, "Porto", 5) == []
    world.drain()
    assert world.c.projector.apply(insert, now=T0).applied == 0  # and after them


def test_a_superseded_memory_leaves_both_projections(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    world.c.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))
    world.drain()
    assert [r.content for r in world.active()] == ["I moved to Lisbon."]
    assert in_sync(world)


def test_the_same_version_with_other_content_is_a_conflict_left_to_the_reconciler(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    record = only(world)
    world.index.upsert(replace(record, content="I live in Faro.", content_hash=""))  # drift
    report = world.drain()
    assert report.conflicts == 1
    [event] = [e for e in world.audit.list(S) if e.action == "projection_conflict"]
    assert (event.memory_id, event.details) == (record.memory_id, {"targets": ["index"]})
    repair = world.c.reconciler.run(now=T0)
    assert (repair.stale, repair.requeued) == (1, 1)  # the index refuses the same version
    world.drain()
    assert in_sync(world) and [h.memory_id for h in world.index.keyword(S, "Faro", 5)] == []


def test_the_reconciler_finds_missing_stale_and_orphan_documents_and_repairs_them(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    world.drain()
    world.c.pipeline.ingest(turn("m2", "I work as a sommelier.", hours=1))  # never projected: missing
    porto = next(r for r in world.active() if "Porto" in r.content)
    world.c.admin.patch(S, porto.memory_id, MemoryPatch(pinned=True), now=T0, actor="u1")  # stale
    ghost = MemoryRecord(
        scope=S, memory_id=GHOST, content="never stored", category=Category.FACT, created_at=T0
    )
    world.index.upsert(ghost)  # orphans: the store never had it
    world.graph.upsert_memory(ghost)
    report = world.c.reconciler.run(now=T0)
    assert (report.missing, report.stale, report.orphan) == (2, 2, 2)  # each in the index and the graph
    assert (report.repaired, report.requeued, report.failed) == (6, 0, 0)
    assert f"index:{GHOST}:1:orphan" in report.repair_keys
    assert in_sync(world)
    again = world.c.reconciler.run(now=T0)
    assert (again.missing, again.stale, again.orphan, again.repaired) == (0, 0, 0, 0)


def test_edges_lost_under_live_vertices_are_linked_again_once(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto. My sister Ana lives in Lisbon."))
    world.c.pipeline.ingest(turn("m2", "I play the cello with Ana.", hours=1))
    world.drain()
    ids = [r.memory_id for r in world.active()]
    linked = world.graph.degree(S, ids)
    assert sum(linked.values()) > 0
    world.graph._edges.clear()  # the vertices stay, every edge is gone
    report = world.c.reconciler.run(now=T0)
    assert report.relinked >= 1 and (report.missing, report.stale, report.orphan) == (0, 0, 0)
    assert all(world.graph.degree(S, ids).get(m, 0) > 0 for m, d in linked.items() if d)
    assert world.c.reconciler.run(now=T0).relinked == 0  # nothing left to link


def test_a_tombstoned_document_is_requeued_through_the_stream(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.drain()
    victim = only(world)
    world.index.delete(S, victim.memory_id, victim.version)  # the tombstone refuses this version
    report = world.c.reconciler.run(now=T0)
    assert (report.missing, report.repaired, report.requeued) == (1, 0, 1)
    assert only(world).version == victim.version + 1
    world.drain()
    assert in_sync(world)
    assert world.c.reconciler.run(now=T0).missing == 0


def test_a_projection_that_is_down_is_counted_and_the_other_still_repaired(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))  # never projected
    world.graph.down = True
    report = world.c.reconciler.run(now=T0)
    assert (report.failed, report.missing, report.repaired) == (1, 1, 1)
    assert world.index.all_states(S) == truth(world)
    world.graph.down = False
    assert world.c.reconciler.run(now=T0).repaired == 1  # the graph's turn
    assert in_sync(world)


def test_a_stream_record_for_another_scope_touches_only_that_scope(world: World) -> None:
    other = Scope("t2", "u1")
    world.c.pipeline.ingest(turn("m1", "I live in Porto."))
    world.c.pipeline.ingest(turn("m1", "I live in Porto.", scope=other))  # same message id, same memory id
    world.drain()
    mine = only(world)
    world.c.admin.delete(other, mine.memory_id, now=T0, actor="t2", hard=True)
    world.drain()
    assert world.index.all_states(other) == [] and world.graph.all_states(other) == []
    assert in_sync(world)  # the first scope's memory of the same id is still projected
