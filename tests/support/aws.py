"""moto with the project's tables, shared by the AWS adapter tests and the contract suites: one
boto3 client per service and worker (moto intercepts clients created outside its context, so a
client built once serves every test's ``mock_aws``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
from moto import mock_aws

from agentmem.adapters.aws.dynamodb_schema import create_tables
from agentmem.adapters.aws.errors import LazyClient

REGION = "us-east-1"
_CLIENTS: dict[str, Any] = {}


def client(service: str) -> Any:
    if service not in _CLIENTS:
        _CLIENTS[service] = boto3.client(service, region_name=REGION)
    return _CLIENTS[service]


@dataclass
class Moto:
    dynamodb: Any
    streams: Any
    sqs: Any
    stream_arn: str
    memory_table: str = "agentmem-memories"
    session_table: str = "agentmem-sessions"
    audit_table: str = "agentmem-audit"

    def lazy(self) -> LazyClient[Any]:
        return LazyClient(lambda: self.dynamodb)


@contextmanager
def moto_tables() -> Iterator[Moto]:
    with mock_aws():
        dynamodb = client("dynamodb")
        arns = create_tables(
            dynamodb, memory="agentmem-memories", session="agentmem-sessions", audit="agentmem-audit"
        )
        yield Moto(dynamodb, client("dynamodbstreams"), client("sqs"), arns["memory_stream_arn"])
