"""TurnLog contract (the L0 raw log, the session window, the processed marks), parametrised over
``embedded`` (SQLite), ``aws`` (DynamoDB on moto in-process, the session table), ``engine`` (the
same on the DynamoDB engine over HTTP, :mod:`support.engines`) and ``fake`` (the in-memory fake
of the service unit tests).

``processed_outcome`` is not part of the port, but every implementation offers it and it is the
one way to read what ``mark_processed`` stored, so the suite checks it too. What only one adapter
does (DynamoDB TTL attributes, the table shared with runtime state) stays in its own file.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

import pytest

from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.embedded.turn_log import SqliteTurnLog
from agentmem.domain.models import Scope
from agentmem.ports import RawTurnRecord, TurnLog
from support.aws import dynamodb_tables
from support.engines import engine_param
from support.fakes.memory import InMemoryTurnLog
from support.turns import T0, raw

S1 = Scope("t1", "u1")
S2 = Scope("t2", "u1")


class ReadableTurnLog(TurnLog, Protocol):
    def processed_outcome(self, scope: Scope, message_id: str) -> dict[str, Any] | None: ...


@pytest.fixture(params=["embedded", "aws", engine_param(), "fake"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReadableTurnLog]:
    if request.param == "embedded":
        adapter = SqliteTurnLog(tmp_path / "turns.sqlite3")
        yield adapter
        adapter.close()
    elif request.param in ("aws", "engine"):
        with dynamodb_tables(request.param) as tables:
            yield DynamoTurnLog(tables.session_table, client=tables.lazy(), retention=timedelta(days=30))
    else:
        yield InMemoryTurnLog()


def ids(turns: list[RawTurnRecord]) -> list[str]:
    return [t.message_id for t in turns]


def test_append_is_idempotent_per_message_and_round_trips(log: ReadableTurnLog) -> None:
    assert log.append_raw(S1, raw("m1", 0, lang="zh", speaker="小明")) is True
    assert log.append_raw(S1, raw("m1", 0)) is False  # replayed delivery: nothing rewritten
    assert log.append_raw(S2, raw("m1", 0)) is True  # another scope, same id
    bare = RawTurnRecord("m2", "s1", T0 + timedelta(minutes=1), "我住在杭州", "", status="rejected")
    assert log.append_raw(S1, bare) is True
    assert log.recent_turns(S1, "s1", 10) == [raw("m1", 0, lang="zh", speaker="小明"), bare]


def test_session_window_is_the_last_turns_oldest_first(log: ReadableTurnLog) -> None:
    for i in (3, 0, 2, 1, 4):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S1, raw("x", 10, session="s2"))
    log.append_raw(S1, raw("y", 10, session="s1#2"))  # a session id that extends another one
    log.append_raw(S2, raw("z", 10))
    assert ids(log.recent_turns(S1, "s1", 3)) == ["m2", "m3", "m4"]
    assert ids(log.recent_turns(S1, "s1", 10)) == ["m0", "m1", "m2", "m3", "m4"]
    assert ids(log.recent_turns(S1, "s2", 10)) == ["x"]
    assert ids(log.recent_turns(S1, "s1#2", 10)) == ["y"]
    assert ids(log.recent_turns(S2, "s1", 10)) == ["z"]
    assert log.recent_turns(S1, "s1", 0) == []
    assert log.recent_turns(S1, "unknown", 5) == []


def test_same_timestamp_keeps_arrival_order(log: ReadableTurnLog) -> None:
    for name in ("b", "a", "c"):
        log.append_raw(S1, raw(name, 0))
    assert ids(log.recent_turns(S1, "s1", 2)) == ["a", "c"]


def test_processed_marks_are_idempotent_scoped_and_keep_the_last_outcome(log: ReadableTurnLog) -> None:
    assert log.is_processed(S1, "m1") is False
    assert log.processed_outcome(S1, "m1") is None
    log.mark_processed(S1, "m1", T0, {"written": ["mem-1"], "status": "accepted"})
    log.mark_processed(S1, "m1", T0, {"written": ["mem-1"], "status": "accepted"})
    assert log.is_processed(S1, "m1") is True
    assert log.is_processed(S2, "m1") is False
    assert log.processed_outcome(S1, "m1") == {"written": ["mem-1"], "status": "accepted"}
    log.mark_processed(S1, "m1", T0 + timedelta(minutes=1), {"written": [], "dropped": {"pii": 1}})
    assert log.processed_outcome(S1, "m1") == {"written": [], "dropped": {"pii": 1}}
    assert log.recent_turns(S1, "s1", 10) == []  # a mark is not a turn


def test_erase_scope_removes_turns_and_marks_of_that_scope_only(log: ReadableTurnLog) -> None:
    for i in range(3):
        log.append_raw(S1, raw(f"m{i}", i))
    log.append_raw(S2, raw("m0", 0))
    log.mark_processed(S1, "m0", T0, {})
    log.mark_processed(S2, "m0", T0, {})
    assert log.erase_scope(S1) == 3
    assert log.erase_scope(S1) == 0
    assert log.recent_turns(S1, "s1", 10) == []
    assert log.is_processed(S1, "m0") is False
    assert ids(log.recent_turns(S2, "s1", 10)) == ["m0"]
    assert log.is_processed(S2, "m0") is True
    assert log.append_raw(S1, raw("m0", 0)) is True  # the id may be logged again


def test_forget_turn_removes_one_line_and_its_mark_only(log: ReadableTurnLog) -> None:
    log.append_raw(S1, raw("m1", 0))
    log.append_raw(S1, raw("m2", 1))
    log.append_raw(S2, raw("m1", 0))
    log.mark_processed(S1, "m1", T0, {"status": "accepted"})
    assert log.forget_turn(S1, "m1") is True
    assert log.forget_turn(S1, "m1") is False
    assert ids(log.recent_turns(S1, "s1", 10)) == ["m2"] and not log.is_processed(S1, "m1")
    assert ids(log.recent_turns(S2, "s1", 10)) == ["m1"]
