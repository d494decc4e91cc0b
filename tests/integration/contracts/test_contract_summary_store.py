"""SessionSummaryStore contract, parametrised over implementations: ``embedded`` (SQLite, in the
file the turn log shares), ``aws`` (DynamoDB on moto in-process, the session table) and
``engine`` (the same on the DynamoDB engine over HTTP, :mod:`support.engines`).

Every adapter must: record a session's turns idempotently per message id (a replay changes
nothing), with the first and last time and the memory ids of its turns; report a session switch
once, naming the session that closed, and keep the one before as ``previous``; keep a summary per
session and give it back whole (Chinese text as is); erase a scope's logs, summaries and marker
without touching another scope or the turn log beside them; cap a scene at MAX_SCENE_TURNS.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_summaries import DynamoSummaryStore
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.embedded.summary_store import SqliteSummaryStore
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.domain import summary as summary_module
from agentmem.domain.models import Scope
from agentmem.domain.summary import LatestSession, SceneSummary, SummaryEntity
from agentmem.ports import RawTurnRecord, SessionSummaryStore, TurnLog
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.memory import InMemoryTurnLog
from support.fakes.summaries import InMemorySummaryStore

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SessionSummaryStore, TurnLog]]:
    if request.param == "fake":
        yield InMemorySummaryStore(), InMemoryTurnLog()
        return
    if request.param == "embedded":
        path = tmp_path / "memory.db"
        store, turns = SqliteSummaryStore(path), SqliteTurnLog(path)
        yield store, turns
        store.close()
        turns.close()
        return
    with dynamodb_tables(request.param) as tables:
        lazy = tables.lazy()
        yield (
            DynamoSummaryStore(tables.session_table, client=lazy),
            DynamoTurnLog(tables.session_table, client=lazy),
        )


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_scene_records_turns_once_with_their_span_and_memories(
    stores: tuple[SessionSummaryStore, TurnLog],
) -> None:
    store, _ = stores
    assert store.scene(S1, "s1") is None and store.latest(S1) is None
    assert store.record_turn(S1, "s1", "m1", at(0), ["mem-a"]) is None  # the first session: nothing closed
    assert store.record_turn(S1, "s1", "m2", at(5), []) is None
    assert store.record_turn(S1, "s1", "m2", at(5), []) is None  # a replay
    assert store.record_turn(S1, "s1", "m3", at(9), ["mem-b", "mem-c"]) is None
    scene = store.scene(S1, "s1")
    assert scene is not None
    assert scene.turns == 3 and scene.message_ids == {"m1", "m2", "m3"}
    assert scene.memory_ids == {"mem-a", "mem-b", "mem-c"}
    assert scene.started_at == at(0) and scene.ended_at == at(9)
    assert store.latest(S1) == LatestSession("s1", None)
    assert store.scene(S2, "s1") is None  # scoped


def test_withheld_turns_are_marked_on_recorded_turns_of_the_session(
    stores: tuple[SessionSummaryStore, TurnLog],
) -> None:
    store, _ = stores
    store.record_turn(S1, "s1", "m1", at(0), ["mem-a"])
    store.record_turn(S1, "s1", "m2", at(1), [])
    store.record_turn(S1, "s2", "m9", at(2), [])
    store.record_turn(S1, "s1", "m3", at(3), [], withheld=["m3", "m1", "m9"])  # m9 is not of s1
    scene = store.scene(S1, "s1")
    assert scene is not None and scene.withheld == {"m1", "m3"} and scene.turns == 3
    assert store.scene(S1, "s2").withheld == frozenset()  # type: ignore[union-attr]


def test_a_switch_is_reported_once_and_keeps_the_session_before(
    stores: tuple[SessionSummaryStore, TurnLog],
) -> None:
    store, _ = stores
    store.record_turn(S1, "s1", "m1", at(0), [])
    assert store.record_turn(S1, "s2", "m2", at(60), []) == "s1"
    assert store.record_turn(S1, "s2", "m3", at(61), []) is None
    assert store.latest(S1) == LatestSession("s2", "s1")
    assert store.record_turn(S1, "s1", "m4", at(90), []) == "s2"  # an old session resumed
    assert store.latest(S1) == LatestSession("s1", "s2")
    assert store.latest(S2) is None


def test_summaries_round_trip_per_session(stores: tuple[SessionSummaryStore, TurnLog]) -> None:
    store, _ = stores
    summary = SceneSummary(
        session_id="s1",
        started_at=at(0),
        ended_at=at(30),
        turns=4,
        fact_ids=("mem-a", "mem-b"),
        entities=(SummaryEntity("京都", ("mem-a",)), SummaryEntity("Alice", ("mem-a", "mem-b"))),
        text="去京都旅行的计划",
        memory_ids_seen=3,
    )
    assert store.summary(S1, "s1") is None
    store.put_summary(S1, summary)
    assert store.summary(S1, "s1") == summary
    assert store.summary(S1, "s1").memory_ids_seen == 3  # type: ignore[union-attr]
    replaced = SceneSummary("s1", at(0), at(40), 5)
    store.put_summary(S1, replaced)
    assert store.summary(S1, "s1") == replaced
    assert store.summary(S2, "s1") is None


def test_erase_removes_the_scope_only_and_leaves_the_turn_log(
    stores: tuple[SessionSummaryStore, TurnLog],
) -> None:
    store, turns = stores
    for scope in (S1, S2):
        store.record_turn(scope, "s1", "m1", at(0), ["mem-a"])
        store.record_turn(scope, "s2", "m2", at(60), [])
        store.put_summary(scope, SceneSummary("s1", at(0), at(0), 1, ("mem-a",)))
    turns.append_raw(S1, RawTurnRecord("m1", "s1", at(0), "hello", ""))
    assert store.erase_scope(S1) == 4  # two scene logs, one summary, the marker
    assert store.scene(S1, "s1") is None and store.summary(S1, "s1") is None and store.latest(S1) is None
    assert store.latest(S2) == LatestSession("s2", "s1") and store.summary(S2, "s1") is not None
    assert [t.message_id for t in turns.recent_turns(S1, "s1", 5)] == ["m1"]
    assert store.erase_scope(S1) == 0


def test_a_scene_stops_growing_at_its_cap(
    stores: tuple[SessionSummaryStore, TurnLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = stores
    for module in (
        "agentmem.adapters.embedded.summary_store",
        "agentmem.adapters.aws.dynamodb_summaries",
        "support.fakes.summaries",
    ):
        monkeypatch.setattr(f"{module}.MAX_SCENE_TURNS", 3)
    assert summary_module.MAX_SCENE_TURNS == 1000
    for i in range(5):
        store.record_turn(S1, "s1", f"m{i}", at(i), [f"mem-{i}"])
    scene = store.scene(S1, "s1")
    assert scene is not None and scene.turns == 3 and scene.message_ids == {"m0", "m1", "m2"}
    store.record_turn(S1, "s1", "m1", at(1), ["mem-1"])  # a replay of a recorded turn still counts once
    assert store.scene(S1, "s1").turns == 3  # type: ignore[union-attr]
