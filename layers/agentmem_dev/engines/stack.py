"""A laptop "stack" on the engines: what CDK would create, created on the engine servers, and the
settings that point the ``aws`` backend at it — the AWS code path with no AWS account.

* DynamoDB tables (with the memory table's stream) and the ingest queue with its dead-letter
  queue, on moto's server. boto3 reaches it through the standard ``AWS_ENDPOINT_URL_<SERVICE>``
  variables (set by :func:`aws_environment`), so the adapters run unchanged.
* OpenSearch is reached unsigned (``AGENTMEM_OPENSEARCH_SERVICE=none``), the Gremlin server
  over plain ``ws://`` without IAM (``AGENTMEM_NEPTUNE_IAM_AUTH=false``).

Every name carries ``prefix``, so runs sharing the engines do not see each other.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agentmem.adapters.aws.dynamodb_schema import create_tables

REGION = "us-east-1"
MAX_RECEIVE = 2


@contextmanager
def aws_environment(dynamodb_url: str | None = None) -> Iterator[None]:
    """Fake credentials and region (and no EMF metric lines); with ``dynamodb_url`` every boto3
    client of DynamoDB, its streams and SQS goes to that server. Undone on exit."""
    wanted = {
        "AWS_ACCESS_KEY_ID": "engines",
        "AWS_SECRET_ACCESS_KEY": "engines",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
    if dynamodb_url:
        wanted.update(
            AWS_ENDPOINT_URL_DYNAMODB=dynamodb_url,
            AWS_ENDPOINT_URL_DYNAMODB_STREAMS=dynamodb_url,
            AWS_ENDPOINT_URL_SQS=dynamodb_url,
        )
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass(frozen=True)
class Stack:
    queue_url: str
    dlq_url: str
    stream_arn: str
    settings: Mapping[str, Any]  # overrides for load_settings


def create_stack(clients: Mapping[str, Any], prefix: str, urls: Mapping[str, str] | None = None) -> Stack:
    """Tables and queues named ``<prefix>-...``; ``urls`` (the engines' ``AGENTMEM_*_URL``) put
    the search index and graph on OpenSearch and the Gremlin server, else they are embedded."""
    tables = {"memory": f"{prefix}-memories", "session": f"{prefix}-sessions", "audit": f"{prefix}-audit"}
    dynamodb = clients["dynamodb"]
    existing = set(dynamodb.list_tables().get("TableNames", []))
    if tables["memory"] in existing:  # a stack made by an earlier run on the same engines
        table = dynamodb.describe_table(TableName=tables["memory"])["Table"]
        arns = {"memory_stream_arn": str(table.get("LatestStreamArn", ""))}
    else:
        arns = create_tables(dynamodb, **tables)
    sqs = clients["sqs"]
    dlq = sqs.create_queue(QueueName=f"{prefix}-ingest-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE)})
    queue = sqs.create_queue(QueueName=f"{prefix}-ingest", Attributes={"RedrivePolicy": redrive})["QueueUrl"]
    settings: dict[str, Any] = {
        "backend": "aws",
        "queue_url": queue,
        "aws_region": REGION,
        "table_memory": tables["memory"],
        "table_session": tables["session"],
        "table_audit": tables["audit"],
        "search_backend": "local",
        "graph_backend": "local",
    }
    urls = urls or {}
    if urls.get("AGENTMEM_OPENSEARCH_URL"):
        settings.update(
            search_backend="opensearch",
            opensearch_endpoint=urls["AGENTMEM_OPENSEARCH_URL"],
            opensearch_service="none",
            opensearch_index=f"{prefix}-memories",
            opensearch_replicas=0,  # a single node: a replica would never be placed
        )
    if urls.get("AGENTMEM_GREMLIN_URL"):
        settings.update(
            graph_backend="neptune", neptune_endpoint=urls["AGENTMEM_GREMLIN_URL"], neptune_iam_auth=False
        )
    return Stack(queue, dlq, arns["memory_stream_arn"], settings)


def clients(dynamodb_url: str | None = None) -> dict[str, Any]:
    """boto3 clients of DynamoDB, its streams and SQS (the server's, when ``dynamodb_url``)."""
    import boto3

    extra = {"endpoint_url": dynamodb_url} if dynamodb_url else {}
    return {
        name: boto3.client(name, region_name=REGION, **extra)
        for name in ("dynamodb", "dynamodbstreams", "sqs")
    }
