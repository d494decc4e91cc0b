"""The project's DynamoDB tables (and SQS queues) for the AWS adapter tests and the contract
suites, on either DynamoDB backend:

* ``aws`` — moto in-process (``mock_aws`` patches botocore, no HTTP): one boto3 client per
  service and worker (moto intercepts clients created outside its context, so a client built
  once serves every test's ``mock_aws``); fixed table names, each test gets a fresh account;
* ``engine`` — the DynamoDB engine over HTTP (:mod:`support.engines`): one server shared by every
  xdist worker, so each test's tables and queues get unique names and are deleted afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws

from agentmem.adapters.aws.dynamodb_schema import create_tables
from agentmem.adapters.aws.errors import LazyClient
from support.engines import REGION, engine_client, unique_name

_CLIENTS: dict[str, Any] = {}


def client(service: str) -> Any:
    if service not in _CLIENTS:
        _CLIENTS[service] = boto3.client(service, region_name=REGION)
    return _CLIENTS[service]


@dataclass
class Tables:
    """The three tables and the clients that reach them (and the memory table's stream)."""

    dynamodb: Any
    streams: Any
    sqs: Any
    stream_arn: str
    memory_table: str = "agentmem-memories"
    session_table: str = "agentmem-sessions"
    audit_table: str = "agentmem-audit"

    def lazy(self) -> LazyClient[Any]:
        return LazyClient(lambda: self.dynamodb)

    def lazy_sqs(self) -> LazyClient[Any]:
        return LazyClient(lambda: self.sqs)


Moto = Tables  # the name the moto-only tests use


@contextmanager
def moto_tables() -> Iterator[Tables]:
    with mock_aws():
        dynamodb = client("dynamodb")
        arns = create_tables(
            dynamodb, memory="agentmem-memories", session="agentmem-sessions", audit="agentmem-audit"
        )
        yield Tables(dynamodb, client("dynamodbstreams"), client("sqs"), arns["memory_stream_arn"])


@contextmanager
def engine_tables() -> Iterator[Tables]:
    """Fresh uniquely named tables on the DynamoDB engine, deleted afterwards."""
    dynamodb = engine_client("dynamodb")
    prefix = unique_name("agentmem")
    names = {"memory": f"{prefix}-memories", "session": f"{prefix}-sessions", "audit": f"{prefix}-audit"}
    try:
        arns = create_tables(dynamodb, **names)
        yield Tables(
            dynamodb,
            engine_client("dynamodbstreams"),
            engine_client("sqs"),
            arns["memory_stream_arn"],
            memory_table=names["memory"],
            session_table=names["session"],
            audit_table=names["audit"],
        )
    finally:
        for name in names.values():
            with contextlib.suppress(ClientError):  # never created: the failure above says why
                dynamodb.delete_table(TableName=name)


@contextmanager
def dynamodb_tables(backend: str) -> Iterator[Tables]:
    """The tables on ``backend``: ``aws`` (moto in-process) or ``engine`` (over HTTP)."""
    with engine_tables() if backend == "engine" else moto_tables() as tables:
        yield tables


@contextmanager
def sqs_queue(backend: str, *, fifo: bool) -> Iterator[tuple[Any, str]]:
    """(SQS client, queue URL) of a fresh standard or FIFO queue on ``backend``."""
    if backend != "engine":
        with mock_aws():
            sqs = client("sqs")
            attributes = {"FifoQueue": "true"} if fifo else {}
            yield (
                sqs,
                sqs.create_queue(QueueName="ingest.fifo" if fifo else "ingest", Attributes=attributes)[
                    "QueueUrl"
                ],
            )
        return
    sqs = engine_client("sqs")
    name = unique_name("agentmem-ingest") + (".fifo" if fifo else "")
    url = sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"} if fifo else {})["QueueUrl"]
    try:
        yield sqs, url
    finally:
        with contextlib.suppress(ClientError):
            sqs.delete_queue(QueueUrl=url)
