"""SQS turn queue: FIFO attributes on moto; the entries a standard queue gets, the size limit,
partial failures, a full queue and throttling with botocore Stubber. Ids, bodies, batching and
FIFO deduplication are the TurnQueue contract (``contracts/test_contract_turn_queue.py``)."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
from awshelpers import REGION, Moto
from botocore.stub import ANY, Stubber

from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.aws.sqs_queue import MAX_BATCH_BYTES, SqsTurnQueue, deduplication_id
from agentmem.domain.models import Scope, Turn
from agentmem.errors import QueueFull, StoreUnavailable, ValidationFailed
from agentmem.messages import TurnMessage
from agentmem.wire.sqs_batches import batches

S1 = Scope("acme", "alice")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
URL = "https://sqs.us-east-1.amazonaws.com/123456789012/agentmem-ingest"


def turn(i: int, text: str = "I live in Glasgow.") -> TurnMessage:
    return TurnMessage.from_turn(Turn(S1, "s-1", text, "Noted.", T0, f"m-{i:03d}", trace_id=f"tr-{i}"))


def test_fifo_queues_get_group_and_deduplication_ids(moto: Moto) -> None:
    url = moto.sqs.create_queue(QueueName="ingest.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    queue = SqsTurnQueue(url, client=LazyClient(lambda: moto.sqs))
    assert queue.fifo
    queue.send([turn(1), turn(1), turn(2)])  # the repeated turn is deduplicated by SQS
    messages = moto.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"])[
        "Messages"
    ]
    assert [TurnMessage.from_body(m["Body"]).message_id for m in messages] == ["m-001", "m-002"]
    assert messages[0]["Attributes"]["MessageGroupId"] == S1.key
    assert messages[0]["Attributes"]["MessageDeduplicationId"] == deduplication_id(turn(1))


def test_standard_queues_carry_no_fifo_attributes() -> None:
    client = boto3.client("sqs", region_name=REGION)
    queue = SqsTurnQueue(URL, client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch",
            {"Successful": [{"Id": "0", "MessageId": "x", "MD5OfMessageBody": "y"}], "Failed": []},
            {"QueueUrl": URL, "Entries": [{"Id": "0", "MessageBody": turn(0).to_body()}]},
        )
        assert queue.send([turn(0)]) == ["m-000"]
        stub.assert_no_pending_responses()  # the one call was made, with exactly these entries


def test_batches_respect_the_size_limit() -> None:
    entries = [{"Id": str(i), "MessageBody": "x" * 100_000} for i in range(5)]
    assert [len(b) for b in batches(entries, MAX_BATCH_BYTES)] == [2, 2, 1]
    assert [
        len(b) for b in batches([{"Id": str(i), "MessageBody": "x"} for i in range(25)], MAX_BATCH_BYTES)
    ] == [10, 10, 5]
    # A valid TurnMessage cannot get this large (16k characters a side); the guard stays for
    # messages built without validation.
    oversized = turn(0).model_copy(update={"user": "x" * (MAX_BATCH_BYTES + 1)})
    with pytest.raises(ValidationFailed):
        SqsTurnQueue(URL).send([oversized])


def test_partial_failures_are_retried_once_then_reported() -> None:
    client = boto3.client("sqs", region_name=REGION)
    queue = SqsTurnQueue(URL, client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch",
            {
                "Successful": [{"Id": "0", "MessageId": "a", "MD5OfMessageBody": "x"}],
                "Failed": [
                    {"Id": "1", "SenderFault": False, "Code": "InternalError"},
                    {"Id": "2", "SenderFault": True, "Code": "InvalidParameterValue"},
                ],
            },
            {"QueueUrl": URL, "Entries": ANY},
        )
        stub.add_response(
            "send_message_batch",
            {"Successful": [], "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError"}]},
            {"QueueUrl": URL, "Entries": [{"Id": "1", "MessageBody": ANY}]},
        )
        with pytest.raises(StoreUnavailable) as caught:
            queue.send([turn(0), turn(1), turn(2)])
    assert caught.value.details["sent"] == ["m-000"]
    assert [f["message_id"] for f in caught.value.details["failed"]] == ["m-002", "m-001"]  # type: ignore[union-attr]


def test_a_retried_entry_that_succeeds_counts_as_sent() -> None:
    client = boto3.client("sqs", region_name=REGION)
    queue = SqsTurnQueue(URL, client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch",
            {
                "Successful": [{"Id": "0", "MessageId": "a", "MD5OfMessageBody": "x"}],
                "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError"}],
            },
        )
        stub.add_response(
            "send_message_batch",
            {"Successful": [{"Id": "1", "MessageId": "b", "MD5OfMessageBody": "x"}], "Failed": []},
        )
        assert queue.send([turn(0), turn(1)]) == ["m-000", "m-001"]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("AWS.SimpleQueueService.OverLimit", QueueFull),
        ("OverLimit", QueueFull),
        ("RequestThrottled", StoreUnavailable),
        ("InternalError", StoreUnavailable),
    ],
)
def test_queue_errors_become_agentmem_errors(code: str, expected: type[Exception]) -> None:
    client = boto3.client("sqs", region_name=REGION)
    queue = SqsTurnQueue(URL, client=LazyClient(lambda: client))
    with Stubber(client) as stub:
        stub.add_client_error(
            "send_message_batch", service_error_code=code, http_status_code=403 if "Over" in code else 500
        )
        with pytest.raises(expected) as caught:
            queue.send([turn(0)])
    assert caught.value.__cause__ is not None
