"""The chat-service helper :class:`agentmem_client.sqs.TurnSender` on moto's SQS: the body is a
:class:`~agentmem.messages.TurnMessage` the ingest function reads back unchanged; a FIFO queue
gets the user's scope as the group and a deduplication id per message id (a resend is dropped);
the project's standard queue gets neither; SQS errors become the project's own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from agentmem.adapters.aws.sqs_queue import deduplication_id
from agentmem.messages import TurnMessage
from agentmem_client.errors import QueueFullError, TurnSendError
from agentmem_client.sqs import TurnSender

AT = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


@pytest.fixture
def sqs() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sqs", region_name="us-east-1")


def receive_all(sqs: Any, url: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"])
        if not got.get("Messages"):
            return out
        out.extend(got["Messages"])
        for m in got["Messages"]:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def test_a_turn_on_the_standard_queue_is_the_message_ingest_reads(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
    sender = TurnSender(url, sqs_client=sqs, now=lambda: AT)
    assert not sender.fifo
    message_id = sender.send_turn("t1", "u1", "s1", "我叫林晓雨，住在青岛。", "你好！")
    assert message_id.startswith("msg-")
    (received,) = receive_all(sqs, url)
    turn = TurnMessage.from_body(received["Body"])
    assert (turn.tenant_id, turn.user_id, turn.session_id) == ("t1", "u1", "s1")
    assert (turn.user, turn.assistant, turn.at, turn.message_id) == (
        "我叫林晓雨，住在青岛。",
        "你好！",
        AT,
        message_id,
    )
    assert "MessageGroupId" not in received["Attributes"]


def test_a_fifo_queue_groups_by_user_and_drops_a_resent_turn(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="agentmem-ingest.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    sender = TurnSender(url, sqs_client=sqs)
    assert sender.fifo
    first = sender.turn("t1", "u1", "s1", "I keep bees on my roof.", message_id="m-1", at=AT)
    other_user = sender.turn("t1", "u2", "s9", "I live in Leeds.", at=AT)
    assert sender.send([first, other_user]) == ["m-1", other_user.message_id]
    assert sender.send_turn("t1", "u1", "s1", "I keep bees on my roof.", message_id="m-1", at=AT) == "m-1"
    received = receive_all(sqs, url)
    assert len(received) == 2  # the resend of m-1 was deduplicated
    groups = {TurnMessage.from_body(m["Body"]).user_id: m["Attributes"]["MessageGroupId"] for m in received}
    assert groups["u1"] != groups["u2"] and TurnMessage.from_body(first.to_body()).scope.key == groups["u1"]


def test_many_turns_are_sent_in_batches_of_ten(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
    sender = TurnSender(url, sqs_client=sqs)
    turns = [sender.turn("t1", "u1", "s1", f"turn {i} 第{i}轮", at=AT) for i in range(23)]
    assert sender.send(turns) == [t.message_id for t in turns]
    assert sender.send([]) == []
    assert sorted(TurnMessage.from_body(m["Body"]).message_id for m in receive_all(sqs, url)) == sorted(
        t.message_id for t in turns
    )


def test_a_bad_turn_is_refused_before_anything_is_sent(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
    sender = TurnSender(url, sqs_client=sqs)
    with pytest.raises(ValueError):
        sender.send_turn("t1", "u1", "s1", "   ")  # blank user text
    with pytest.raises(ValueError):
        sender.send_turn("t1", "bad user id!", "s1", "hello")
    assert receive_all(sqs, url) == []


class _Refusing:
    """An SQS client whose every send fails with ``code``."""

    def __init__(self, code: str) -> None:
        self.code = code

    def send_message_batch(self, **_: Any) -> Any:
        raise ClientError({"Error": {"Code": self.code, "Message": "no"}}, "SendMessageBatch")


def test_sqs_errors_become_the_client_errors() -> None:
    url = "https://sqs.us-east-1.amazonaws.com/000000000000/agentmem-ingest"
    with pytest.raises(QueueFullError):
        TurnSender(url, sqs_client=_Refusing("OverLimit")).send_turn("t1", "u1", "s1", "hi")
    with pytest.raises(TurnSendError) as refused:
        TurnSender(url, sqs_client=_Refusing("ServiceUnavailable")).send_turn("t1", "u1", "s1", "hi")
    assert (
        not isinstance(refused.value, QueueFullError)
        and refused.value.details["code"] == "ServiceUnavailable"
    )


def test_the_fifo_keys_are_the_server_queues_own() -> None:
    """The client's group and deduplication ids are what the server's SqsTurnQueue sends for the
    same turn, so a turn resent through the API or the sender is the same message on FIFO."""
    from agentmem_client.sqs import deduplication_id as client_dedup
    from agentmem_client.sqs import scope_key

    turn = TurnSender("https://q/x.fifo").turn("t1", "u-7", "s1", "你好", at=AT, message_id="m-1")
    server = TurnMessage.from_body(turn.to_body())
    assert scope_key(turn) == server.scope.key
    assert client_dedup(turn) == deduplication_id(server)
