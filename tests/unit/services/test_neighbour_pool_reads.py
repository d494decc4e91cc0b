"""The neighbour pool reads only the hits a fact's judgement can turn on
(:meth:`agentmem.services.neighbours.NeighbourPool._needed`): the same decisions as reading
every hit, with fewer records read from the store.

The equivalence is checked by replaying the project's bilingual memory and update sets, turn by
turn, through two worlds that differ only in the pool: one reads every hit (no calibration), one
skips what the index's readings say cannot matter. The recent window is off in both, so every
neighbour comes through the index and the skipping is exercised on each turn; unrelated filler
memories in both languages stand around each case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.conflict import NewFact, attribute_keys, replaces_by_attribute
from agentmem.domain.extraction import Candidate, extract_from_user
from agentmem.domain.models import Category, MemoryRecord, Scope, Source
from agentmem.domain.similarity import Calibration
from agentmem.services import write_pipeline
from agentmem.services.caches import NeighbourRecords
from agentmem.services.neighbours import NeighbourPool
from agentmem.services.outcome import TurnOutcome
from support.fake_world import T0, S, World, build, store_memories, turn

DATA = Path(__file__).resolve().parents[3] / "layers" / "agentmem_dev" / "eval" / "data"
SETS = ("memory_eval.jsonl", "memory_eval_updates.jsonl")
FILLER = [
    "Reminder: order staples for room 4",
    "The printer on the third floor jams on Mondays",
    "Booked the dentist for the 14th",
    "提醒我周五交季度报告",
    "会议室B的投影仪坏了",
    "下周二去机场接客户",
    "Lunch with the design team on Thursday",
    "周末整理一下书架",
]


def _cases() -> list[dict[str, Any]]:
    cases = []
    for name in SETS:
        with (DATA / name).open(encoding="utf-8") as handle:
            cases += [json.loads(line) for line in handle if line.strip()]
    return cases


def _fill(world: World, scope: Scope) -> None:
    times = [T0 - timedelta(days=30, minutes=n) for n in range(len(FILLER))]
    store_memories(world, FILLER, times, scope=scope)


class _Reads:
    """Counts the records the pools read by id."""

    def __init__(self) -> None:
        self.ids = 0


def _pools(monkeypatch: pytest.MonkeyPatch, *, skip: bool, reads: _Reads) -> None:
    def make(store: Any, index: Any, cache: NeighbourRecords, calibration: Calibration) -> NeighbourPool:
        return NeighbourPool(store, index, cache, calibration if skip else None, recent=0)

    inner = NeighbourPool._needed

    def counted(self: NeighbourPool, *args: Any) -> list[str]:
        found = inner(self, *args)
        reads.ids += len(found)
        return found

    monkeypatch.setattr(write_pipeline, "NeighbourPool", make)
    monkeypatch.setattr(NeighbourPool, "_needed", counted)


def _replay(case: dict[str, Any]) -> Iterator[tuple[World, Any]]:
    """The case's turns as the world ingests them, one outcome each (projected after each)."""
    world = build()
    scope = Scope(case["scope"]["tenant_id"], case["scope"]["user_id"])
    _fill(world, scope)
    for number, raw in enumerate(case["turns"]):
        at = datetime.fromisoformat(raw["at"].replace("Z", "+00:00"))
        world.clock.set(at)
        hours = (at - T0).total_seconds() / 3600
        one = turn(
            f"{case['id']}-{number}",
            raw["user"],
            raw.get("assistant", ""),
            hours=hours,
            scope=scope,
            session=raw.get("session_id", "s1"),
        )
        yield world, world.c.pipeline.ingest(one)
        world.drain()


def _summary(world: World, outcome: TurnOutcome, scope: Scope) -> tuple[Any, ...]:
    active = sorted(r.content for r in world.active(scope))
    return (outcome.status, outcome.written, outcome.reinforced, outcome.superseded, active)


def test_skipping_hits_changes_no_decision_on_the_bilingual_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = _cases()
    assert {c["lang"] for c in cases} >= {"en", "zh"}
    full, skipped = _Reads(), _Reads()
    for case in cases:
        scope = Scope(case["scope"]["tenant_id"], case["scope"]["user_id"])
        with monkeypatch.context() as patch:
            _pools(patch, skip=False, reads=full)
            reference = [_summary(w, o, scope) for w, o in _replay(case)]
        with monkeypatch.context() as patch:
            _pools(patch, skip=True, reads=skipped)
            pruned = [_summary(w, o, scope) for w, o in _replay(case)]
        assert pruned == reference, case["id"]
    assert skipped.ids < 0.7 * full.ids  # and it reads markedly fewer records


def test_cards_change_no_decision_on_the_bilingual_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's hits taken from the index's cards decide as the store's copies do."""
    from support.fakes.memory import InMemorySearchIndex

    inner, answered = InMemorySearchIndex.cards, _Reads()

    def counted(self: InMemorySearchIndex, scope: Scope, ids: Any) -> dict[str, MemoryRecord]:
        found = inner(self, scope, ids)
        answered.ids += len(found)
        return found

    for case in _cases():
        scope = Scope(case["scope"]["tenant_id"], case["scope"]["user_id"])
        with monkeypatch.context() as patch:
            _pools(patch, skip=True, reads=_Reads())
            patch.setattr(InMemorySearchIndex, "cards", lambda self, scope, ids: {})
            reference = [_summary(w, o, scope) for w, o in _replay(case)]
        with monkeypatch.context() as patch:
            _pools(patch, skip=True, reads=_Reads())
            patch.setattr(InMemorySearchIndex, "cards", counted)
            carded = [_summary(w, o, scope) for w, o in _replay(case)]
        assert carded == reference, case["id"]
    assert answered.ids > 100  # the cards answered for the hits, turn after turn


def test_a_hit_whose_reading_is_unknown_or_pinned_is_read(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "Booked the dentist for the 14th."))
    world.c.pipeline.ingest(turn("m2", "The printer on the third floor jams on Mondays.", hours=1))
    world.drain()
    dentist, printer = sorted(world.active(), key=lambda r: r.memory_id)
    embedder = HashEmbedder()
    pool = NeighbourPool(world.store, world.index, NeighbourRecords(), embedder.calibration, recent=0)
    fact = Candidate(content="I moved to Lisbon.", source=Source.USER, importance=0.7)
    vectors = embedder.embed_documents([fact.content])
    hit_ids = [printer.memory_id, dentist.memory_id]
    with_all = pool._needed(S, [attribute_keys(fact.content)], vectors, embedder.model_id, hit_ids)
    assert set(with_all) <= set(hit_ids)

    # unknown to the index (projected before readings, or by other rules): read
    real = world.index.readings
    world.index.readings = lambda scope, wanted: {  # type: ignore[method-assign]
        m: r for m, r in real(scope, wanted).items() if m != dentist.memory_id
    }
    assert dentist.memory_id in pool._needed(
        S, [attribute_keys(fact.content)], vectors, embedder.model_id, hit_ids
    )
    world.index.readings = real  # type: ignore[method-assign]

    # pinned: read (the write path ranks pinned memories among themselves)
    world.store.update(dentist.evolve(now=T0 + timedelta(hours=2), pinned=True), dentist.version)
    world.drain()
    assert dentist.memory_id in pool._needed(
        S, [attribute_keys(fact.content)], vectors, embedder.model_id, hit_ids
    )


def test_a_hit_stating_the_facts_attribute_is_read_however_unlike_it_looks(world: World) -> None:
    embedder = HashEmbedder()
    texts = ["I live in Porto.", *FILLER]  # the fact below says it in Chinese
    for n, text in enumerate(texts):
        world.c.pipeline.ingest(turn(f"m{n}", text, hours=n))
    world.drain()
    [porto] = [r for r in world.active() if r.content == "I live in Porto."]
    pool = NeighbourPool(world.store, world.index, NeighbourRecords(), embedder.calibration, recent=0)
    fact = Candidate(content="我搬到雷克雅未克了", source=Source.USER, importance=0.7)
    far = np.zeros((1, embedder.dimension), dtype=np.float32)
    far[0, 0] = 1.0  # resembles nothing stored: the attribute alone makes Porto matter
    hit_ids = [r.memory_id for r in world.active()]
    needed = pool._needed(S, [attribute_keys(fact.content)], far, embedder.model_id, hit_ids)
    assert porto.memory_id in needed and len(needed) < len(hit_ids)


def _texts() -> list[str]:
    texts = list(FILLER)
    for case in _cases():
        for raw in case["turns"]:
            texts += [c.content for c in extract_from_user(raw["user"])]
    return list(dict.fromkeys(texts))


def test_attribute_keys_meet_whenever_one_text_replaces_another_by_attribute() -> None:
    """The property the skipping rests on, over every fact the bilingual sets extract."""
    texts = _texts()
    assert len(texts) > 150
    keys = {t: attribute_keys(t) for t in texts}
    replacing = 0
    for new in texts:
        fact = NewFact(new, Category.FACT, None, None, 0, user_stated=True)
        for old in texts:
            if new == old:
                continue
            record = MemoryRecord(scope=S, memory_id="m", content=old, category=Category.FACT)
            if replaces_by_attribute(fact, record):
                replacing += 1
                assert keys[new] & keys[old], (new, old)
    assert replacing > 20  # the sets hold many such pairs
