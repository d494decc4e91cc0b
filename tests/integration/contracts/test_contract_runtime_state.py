"""RuntimeStateStore contract, parametrised over implementations: ``embedded`` (SQLite, one file
shared with the turn log as the embedded wiring does), ``aws`` (DynamoDB on moto in-process, the
session table shared with the turn log), ``engine`` (the same on the DynamoDB engine over HTTP,
:mod:`support.engines`) and ``fake`` (the in-memory fake the service unit tests use).

Every adapter must: give back the typed state it was given, per (scope, session); replace it
whole; read it as absent from its expiry on (by the injected clock); erase a scope's states
(expired ones too) without touching other scopes or the turn log beside it; and read a stored row
that no longer parses as absent, logged without its content, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_runtime_state import DynamoRuntimeState
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.codec import format_sortable
from agentmem.adapters.embedded.runtime_state import SqliteRuntimeState
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.domain.models import Scope
from agentmem.domain.runtime_state import Plan, RuntimeState, ToolCall, ToolState
from agentmem.ports import RawTurnRecord, RuntimeStateStore, TurnLog
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.memory import InMemoryRuntimeState, InMemoryTurnLog

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

FULL = RuntimeState(
    plan=Plan(
        goal="plan a trip to Kyoto",
        step="订酒店",
        done=("flights",),
        pending=("rail pass", "租车"),
        params={"city": "京都", "nights": 3, "budget": 1200.5, "refundable": True},
    ),
    task_memory=("hotel A is full", "酒店B有空房"),
    tool_state=ToolState(
        available=("search_hotels", "book"),
        recent_calls=(ToolCall(tool="search_hotels", status="ok"), ToolCall(status="timeout")),
    ),
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Harness:
    """One adapter under test, the turn log that shares its storage, its clock, and a way to
    store a raw row behind the adapter's back (a row written by another version)."""

    state: RuntimeStateStore
    turns: TurnLog
    clock: Clock
    write_raw: Callable[[Scope, str, str, datetime], None]


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    clock = Clock()
    if request.param == "fake":
        fake = InMemoryRuntimeState(clock)
        yield Harness(fake, InMemoryTurnLog(), clock, fake.write_raw)
        return
    if request.param == "embedded":
        path = tmp_path / "memory.db"
        sqlite_state = SqliteRuntimeState(path, clock=clock)
        sqlite_turns = SqliteTurnLog(path)

        def write_sqlite(scope: Scope, session_id: str, raw: str, expires_at: datetime) -> None:
            with sqlite_state._db.write() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO runtime_state (pk, session_id, state, expires_at) VALUES (?, ?, ?, ?)",
                    (scope.key, session_id, raw, format_sortable(expires_at)),
                )

        yield Harness(sqlite_state, sqlite_turns, clock, write_sqlite)
        sqlite_state.close()
        sqlite_turns.close()
        return
    with dynamodb_tables(request.param) as tables:
        lazy = tables.lazy()

        def write_dynamo(scope: Scope, session_id: str, raw: str, expires_at: datetime) -> None:
            tables.dynamodb.put_item(
                TableName=tables.session_table,
                Item={
                    "pk": {"S": scope.key},
                    "sk": {"S": "STATE#" + session_id},
                    "state": {"S": raw},
                    "expires_at": {"S": format_sortable(expires_at)},
                    "ttl": {"N": str(int(expires_at.timestamp()))},
                },
            )

        yield Harness(
            DynamoRuntimeState(tables.session_table, clock=clock, client=lazy),
            DynamoTurnLog(tables.session_table, client=lazy),
            clock,
            write_dynamo,
        )


def later(minutes: int = 10) -> datetime:
    return T0 + timedelta(minutes=minutes)


# ---------------------------------------------------------------------------- round trip


def test_gives_back_the_typed_state_it_was_given(harness: Harness) -> None:
    harness.state.put(S1, "s1", FULL, later())
    got = harness.state.get(S1, "s1")
    assert got == FULL
    assert got is not None and got.to_dict() == FULL.to_dict()  # UTF-8 text, ints, floats, bools


def test_an_empty_state_and_a_sparse_state_read_back_as_written(harness: Harness) -> None:
    sparse = RuntimeState.from_dict({"plan": {"goal": "move house", "step": "pack books"}})
    harness.state.put(S1, "empty", RuntimeState(), later())
    harness.state.put(S1, "sparse", sparse, later())
    assert harness.state.get(S1, "empty") == RuntimeState()
    got = harness.state.get(S1, "sparse")
    assert got is not None and got.to_dict() == {"plan": {"goal": "move house", "step": "pack books"}}


def test_states_are_kept_per_scope_and_session(harness: Harness) -> None:
    harness.state.put(S1, "s1", FULL, later())
    assert harness.state.get(S2, "s1") is None
    assert harness.state.get(S1, "s2") is None
    assert harness.state.get(S1, "s") is None  # not a prefix match


def test_put_replaces_the_whole_state(harness: Harness) -> None:
    harness.state.put(S1, "s1", FULL, later())
    notes_only = RuntimeState(task_memory=("boxes bought",))
    harness.state.put(S1, "s1", notes_only, later())
    got = harness.state.get(S1, "s1")
    assert got == notes_only and got is not None and got.plan is None and got.tool_state is None


# ---------------------------------------------------------------------------- expiry and erase


def test_a_state_reads_as_absent_from_its_expiry_on_by_the_injected_clock(harness: Harness) -> None:
    harness.state.put(S1, "s1", FULL, later(10))
    harness.clock.now = later(9)
    assert harness.state.get(S1, "s1") == FULL
    harness.clock.now = later(10)
    assert harness.state.get(S1, "s1") is None
    harness.state.put(S1, "s1", FULL, later(20))  # a new write brings the session back
    assert harness.state.get(S1, "s1") == FULL


def test_erase_scope_counts_every_session_expired_ones_too_and_spares_other_scopes(
    harness: Harness,
) -> None:
    harness.state.put(S1, "a", FULL, later(5))
    for session in ("b", "c"):
        harness.state.put(S1, session, RuntimeState(task_memory=(session,)), later(60))
    harness.state.put(S2, "a", RuntimeState(task_memory=("other",)), later(60))
    harness.clock.now = later(10)  # "a" of S1 has expired but is still stored
    assert harness.state.erase_scope(S1) == 3
    assert all(harness.state.get(S1, session) is None for session in ("a", "b", "c"))
    assert harness.state.get(S2, "a") == RuntimeState(task_memory=("other",))
    assert harness.state.erase_scope(S1) == 0


def test_the_turn_log_beside_it_and_the_state_do_not_touch_each_other(harness: Harness) -> None:
    harness.state.put(S1, "s1", FULL, later(60))
    turn = RawTurnRecord(message_id="m1", session_id="s1", at=T0, user="u", assistant="a")
    assert harness.turns.append_raw(S1, turn) is True
    assert harness.turns.erase_scope(S1) == 1
    assert harness.state.get(S1, "s1") == FULL
    assert harness.state.erase_scope(S1) == 1
    assert harness.turns.append_raw(S1, turn) is True  # the erase of the state left the log alone


# ---------------------------------------------------------------------------- rows from elsewhere


def test_a_row_written_before_the_state_was_typed_reads_back_when_it_fits(harness: Harness) -> None:
    harness.write_raw(S1, "s1", '{"plan":{"goal":"搬家","done":["买箱子"]},"task_memory":["x"]}', later())
    got = harness.state.get(S1, "s1")
    assert got == RuntimeState(plan=Plan(goal="搬家", done=("买箱子",)), task_memory=("x",))


@pytest.mark.parametrize(
    "raw",
    [
        '{"plan":["a","b"],"step":1}',  # the shape the untyped port used to store without a word
        '{"plan":{"goal":"x","steps":["a"]}}',  # an unknown key
        '{"task_memory":"not a list"}',
        "[1, 2]",
        "not json at all",
    ],
)
def test_a_row_that_no_longer_parses_reads_as_absent_and_is_logged(
    harness: Harness, raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    harness.write_raw(S1, "s1", raw, later())
    with caplog.at_level(logging.WARNING, logger="agentmem.adapters.runtime_state"):
        assert harness.state.get(S1, "s1") is None
    records = [r for r in caplog.records if r.getMessage() == "runtime_state.unreadable"]
    assert len(records) == 1
    assert records[0].__dict__["session_id"] == "s1"
    assert records[0].__dict__["reason"] in ("invalid_fields", "malformed_json")
    assert "not a list" not in caplog.text and "not json" not in caplog.text  # never the content
    harness.state.put(S1, "s1", FULL, later())  # and the session can be written again
    assert harness.state.get(S1, "s1") == FULL
