"""The DynamoDB engine for the contract suites: the ``engine`` parameter and its clients.

The DynamoDB engine is moto's standalone server — DynamoDB Local's licence keeps it out of this
project — a separate process that speaks the wire protocol of DynamoDB, DynamoDB Streams and SQS
on one port, reached by boto3 through ``endpoint_url`` exactly as AWS would be. It is started
with the other engines on first use (:mod:`support.engine_run`), or taken from
``AGENTMEM_DYNAMODB_URL``.

:func:`engine_param` always yields the parameter: where the engine cannot run, the test shows as
skipped with the reason instead of vanishing from the run.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from support import engine_run

REGION = "us-east-1"

_CLIENTS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def dynamodb_url() -> str:
    """DynamoDB, DynamoDB Streams and SQS on one endpoint (started on first use)."""
    return engine_run.engine_url("dynamodb")


def engine_param(engine: str = "dynamodb", id: str = "engine") -> Any:
    """``pytest.param(id)``, skipped with the reason when ``engine`` cannot run here."""
    return engine_run.param(engine, id)


def engine_client(service: str) -> Any:
    """A boto3 client of ``service`` (``dynamodb``, ``dynamodbstreams``, ``sqs``) on the DynamoDB
    engine: dummy credentials, us-east-1, the SDK retries the adapters' own clients get
    (:func:`agentmem.adapters.aws.errors.boto_client`).
    One per service and worker; boto3 clients are thread-safe."""
    url = dynamodb_url()
    with _LOCK:
        if (service, url) not in _CLIENTS:
            import boto3
            from botocore.config import Config

            _CLIENTS[(service, url)] = boto3.client(
                service,
                endpoint_url=url,
                region_name=REGION,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
                config=Config(
                    retries={"mode": "standard", "max_attempts": 4}, connect_timeout=3, read_timeout=30
                ),
            )
        return _CLIENTS[(service, url)]


def unique_name(prefix: str) -> str:
    """A table or queue name no other test (or xdist worker) on the same engine uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
