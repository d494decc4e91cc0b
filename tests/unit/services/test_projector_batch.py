"""The projector's batch (``Projector.prepare``): the source of truth is read once per scope for
the whole batch (erase barrier, stored records), and every decision is the one a change decided
alone gets — replays of superseded records and of an erased user's records included."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from agentmem.domain.models import Scope
from support.fake_world import T0, S, World, turn

OTHER = Scope("t1", "u2")


class _Counting:
    """Counts the store reads the projector makes (delegates everything)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("get", "get_many", "erase_barrier"):

            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls[name] += 1
                return attr(*args, **kwargs)

            return counted
        return attr


def _ingest(world: World) -> None:
    texts = [
        ("m1", "我住在上海。", S),
        ("m2", "I live in Porto.", S),
        ("m3", "我现在住在北京。", S),  # supersedes the first: its INSERT is stale by the end
        ("m4", "My sister is called Ana.", OTHER),
        ("m5", "我喜欢喝乌龙茶。", OTHER),
    ]
    for i, (message_id, text, scope) in enumerate(texts):
        world.c.pipeline.ingest(turn(message_id, text, hours=i, scope=scope))


def test_a_batch_reads_each_scope_once_and_decides_as_each_change_alone(world: World) -> None:
    _ingest(world)
    changes = list(world.store.changes)
    assert len({c.scope for c in changes}) == 2 and len(changes) >= 5
    projector = world.c.projector
    alone = [projector.decide(c) for c in changes]
    counting, barriers = _Counting(world.store), _Counting(world.store.ledger)
    projector.store = counting  # type: ignore[assignment]
    projector.ledger = barriers  # type: ignore[assignment]
    batch = projector.prepare(changes)
    assert [(d.record, d.erased) for d in batch if d is not None] == [(d.record, d.erased) for d in alone]
    assert counting.calls["get"] == 0
    assert barriers.calls["erase_barrier"] == 2 and counting.calls["get_many"] == 2
    assert any(d.record is None for d in alone)  # the superseded record's INSERT projects nothing


def test_a_replayed_batch_of_an_erased_user_projects_nothing_of_that_user(world: World) -> None:
    _ingest(world)
    changes = list(world.store.changes)
    world.clock.set(T0 + timedelta(days=1))
    world.c.admin.erase_user(S, now=world.clock.now(), actor="admin")
    batch = world.c.projector.prepare(changes)
    for change, decision in zip(changes, batch, strict=True):
        assert decision is not None
        if change.scope == S:
            assert decision.record is None and decision.erased
        elif change.new is not None and change.new.is_active:
            assert decision.record is not None and not decision.erased


def test_a_store_down_in_the_batch_read_leaves_every_change_to_be_decided_alone(world: World) -> None:
    _ingest(world)
    changes = list(world.store.changes)
    world.store.fail("get_many")
    assert world.c.projector.prepare(changes) == [None] * len(changes)
    report = world.drain()  # each change alone, the store back: all of it projected
    assert report.applied >= 1 and world.index.all_states(S) != []
