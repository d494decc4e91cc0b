"""Read a DynamoDB stream the way Lambda's event source mapping does, and hand back records in
the shape Lambda delivers them (binary values base64, ``ApproximateCreationDateTime`` as epoch
seconds, ``eventSourceARN`` set).

Used by the moto end-to-end test, the smoke run and the contract suite's change feed, on moto
in-process or, given a client with ``endpoint_url``, on a DynamoDB engine over HTTP (moto's
server, ``tests/support/engines.py``); in AWS the event source mapping does this for the
projector function.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import translate
from agentmem.adapters.codec import image_to_wire

MAX_EMPTY_POLLS = 3  # get_records calls per shard that may come back empty before we move on


def to_lambda_record(record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    """One ``GetRecords`` record as a Lambda DynamoDB Streams event record."""
    body = dict(record.get("dynamodb") or {})
    created = body.get("ApproximateCreationDateTime")
    if isinstance(created, datetime):
        body["ApproximateCreationDateTime"] = int(created.timestamp())
    for name in ("Keys", "NewImage", "OldImage"):
        if body.get(name) is not None:
            body[name] = image_to_wire(body[name])
    out = {k: v for k, v in record.items() if k != "dynamodb"}
    out["dynamodb"] = body
    out["eventSourceARN"] = stream_arn
    return out


class StreamReader:
    """Follows every shard of one stream from its trim horizon; :meth:`read` returns what is new.

    Each read starts from a fresh iterator (``AFTER_SEQUENCE_NUMBER`` of the last record seen),
    so a pause longer than an iterator's 15-minute life is harmless.
    """

    def __init__(self, client: Any, stream_arn: str) -> None:
        self._client = client
        self._arn = stream_arn
        self._after: dict[str, str] = {}

    def _shards(self) -> list[str]:
        shards: list[str] = []
        kwargs: dict[str, Any] = {"StreamArn": self._arn}
        while True:
            description = self._client.describe_stream(**kwargs)["StreamDescription"]
            shards.extend(str(s["ShardId"]) for s in description.get("Shards", []))
            last = description.get("LastEvaluatedShardId")
            if not last:
                return shards
            kwargs["ExclusiveStartShardId"] = last

    def read(self, limit: int = 1000) -> list[dict[str, Any]]:
        """New records of every shard, in shard order then sequence order."""
        out: list[dict[str, Any]] = []
        try:
            for shard in self._shards():
                position: dict[str, Any] = {"ShardIteratorType": "TRIM_HORIZON"}
                if shard in self._after:
                    position = {
                        "ShardIteratorType": "AFTER_SEQUENCE_NUMBER",
                        "SequenceNumber": self._after[shard],
                    }
                iterator = self._client.get_shard_iterator(
                    StreamArn=self._arn, ShardId=shard, **position
                ).get("ShardIterator")
                empty = 0
                while iterator and empty < MAX_EMPTY_POLLS and len(out) < limit:
                    page = self._client.get_records(ShardIterator=iterator, Limit=min(1000, limit - len(out)))
                    iterator = page.get("NextShardIterator")
                    records = page.get("Records", [])
                    if not records:
                        empty += 1
                    for record in records:
                        self._after[shard] = str(record["dynamodb"]["SequenceNumber"])
                        out.append(to_lambda_record(record, self._arn))
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, store="dynamodb-streams", operation="get_records") from exc
        return out
