"""The SQS turn body (:class:`agentmem.messages.TurnMessage`): one model for the API, both
queues and ingest; round trips, and malformed bodies refused with the fields named."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agentmem.domain.models import Scope, Turn
from agentmem.errors import ValidationFailed
from agentmem.messages import MAX_TEXT, TurnMessage

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _turn(**changes: Any) -> Turn:
    base: dict[str, object] = {
        "scope": Scope("t1", "u1"),
        "session_id": "s1",
        "user": "我下周去东京出差",
        "assistant": "好的，祝顺利！",
        "at": T0,
        "message_id": "m1",
    }
    base.update(changes)
    return Turn(**base)  # type: ignore[arg-type]


def test_turn_body_round_trip() -> None:
    plain = _turn()
    body = json.loads(TurnMessage.from_turn(plain).to_body())
    assert body == {
        "tenant_id": "t1",
        "user_id": "u1",
        "session_id": "s1",
        "user": "我下周去东京出差",
        "assistant": "好的，祝顺利！",
        "at": "2026-01-05T09:00:00Z",
        "message_id": "m1",
    }
    assert TurnMessage.from_body(TurnMessage.from_turn(plain).to_body()).to_turn() == plain
    traced = _turn(trace_id="tr-9", speaker="Caroline")
    assert json.loads(TurnMessage.from_turn(traced).to_body())["trace_id"] == "tr-9"
    assert TurnMessage.from_body(TurnMessage.from_turn(traced).to_body()).to_turn() == traced


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        json.dumps(
            {
                "user_id": "u1",
                "session_id": "s",
                "user": "a",
                "assistant": "b",
                "at": "2026-01-05T09:00:00Z",
                "message_id": "m",
            }
        ),
        json.dumps(
            {
                "tenant_id": "",
                "user_id": "u1",
                "session_id": "s",
                "user": "a",
                "assistant": "b",
                "at": "2026-01-05T09:00:00Z",
                "message_id": "m",
            }
        ),
        json.dumps(
            {
                "tenant_id": "t",
                "user_id": "u1",
                "session_id": "s",
                "user": "a",
                "assistant": "b",
                "at": "yesterday",
                "message_id": "m",
            }
        ),
        json.dumps(
            {
                "tenant_id": "t",
                "user_id": "u1",
                "session_id": "s",
                "user": 3,
                "assistant": "b",
                "at": "2026-01-05T09:00:00Z",
                "message_id": "m",
            }
        ),
        json.dumps(
            {
                "tenant_id": "t",
                "user_id": "u1",
                "session_id": " ",
                "user": "a",
                "assistant": "b",
                "at": "2026-01-05T09:00:00Z",
                "message_id": "m",
            }
        ),
    ],
)
def test_malformed_bodies_raise_validation_failed(body: str) -> None:
    with pytest.raises(ValidationFailed):
        TurnMessage.from_body(body)


def test_the_reason_names_the_bad_fields() -> None:
    body = json.loads(TurnMessage.from_turn(_turn()).to_body())
    body["user"] = "   "
    del body["message_id"]
    with pytest.raises(ValidationFailed) as caught:
        TurnMessage.from_body(json.dumps(body))
    assert caught.value.details == {"reason": "invalid_fields", "fields": ["message_id", "user"]}
    with pytest.raises(ValidationFailed) as caught:
        TurnMessage.from_body("[1, 2]")
    assert caught.value.details == {"reason": "invalid_fields", "fields": ["body"]}
    with pytest.raises(ValidationFailed) as caught:
        TurnMessage.from_body("{not json")
    assert caught.value.details == {"reason": "malformed_json"}


def test_text_over_the_limit_is_refused_and_unknown_fields_are_ignored() -> None:
    body = json.loads(TurnMessage.from_turn(_turn()).to_body())
    assert TurnMessage.from_body(json.dumps({**body, "added_by_a_newer_sender": 1})).message_id == "m1"
    with pytest.raises(ValidationFailed):
        TurnMessage.from_body(json.dumps({**body, "assistant": "x" * (MAX_TEXT + 1)}))


def test_audit_actions_are_an_enum_and_text_from_a_store_reads_back_as_one() -> None:
    from agentmem.domain.models import AuditAction, AuditEvent, Scope

    event = AuditEvent(Scope("t", "u"), "written", T0)  # type: ignore[arg-type]  # as a store gives it
    assert event.action is AuditAction.WRITTEN
    with pytest.raises(ValueError):
        AuditEvent(Scope("t", "u"), "wrote", T0)  # type: ignore[arg-type]
