"""Real engines on loopback for the contract suites: where they are, and the ``engine`` parameter.

The engines run outside the test process (``make engines`` starts them and exports their URLs;
by hand: ``python -m moto.server -H 127.0.0.1 -p 4566`` and
``AGENTMEM_DYNAMODB_URL=http://127.0.0.1:4566``). The DynamoDB engine is moto's standalone
server — DynamoDB Local's licence keeps it out of this project — a separate process that speaks
the wire protocol of DynamoDB, DynamoDB Streams and SQS on one port, reached by boto3 through
``endpoint_url`` exactly as AWS would be.

:func:`engine_param` always yields the parameter: without its URL the test shows as skipped,
with the reason and how to start the engine, instead of vanishing from the run.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any

import pytest

REGION = "us-east-1"

# engine name -> the variable holding its URL (the launcher exports all of them)
ENGINE_VARIABLES = {
    "dynamodb": "AGENTMEM_DYNAMODB_URL",
    "opensearch": "AGENTMEM_OPENSEARCH_URL",
    "gremlin": "AGENTMEM_GREMLIN_URL",
}

_CLIENTS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def engine_url(engine: str) -> str | None:
    """The URL of a running ``engine`` (a key of :data:`ENGINE_VARIABLES`), or None."""
    return os.environ.get(ENGINE_VARIABLES[engine]) or None


def dynamodb_url() -> str | None:
    """``AGENTMEM_DYNAMODB_URL``: DynamoDB, DynamoDB Streams and SQS on one endpoint."""
    return engine_url("dynamodb")


def engine_param(engine: str = "dynamodb", id: str = "engine") -> Any:
    """``pytest.param(id)``, skipped with a clear reason when ``engine`` is not running."""
    variable = ENGINE_VARIABLES[engine]
    reason = f"no {engine} engine: set {variable} or run `make engines`"
    return pytest.param(id, marks=pytest.mark.skipif(engine_url(engine) is None, reason=reason))


def engine_client(service: str) -> Any:
    """A boto3 client of ``service`` (``dynamodb``, ``dynamodbstreams``, ``sqs``) on the DynamoDB
    engine: dummy credentials, us-east-1, the SDK retries the adapters' own clients get
    (:func:`agentmem.adapters.aws.errors.boto_client`).
    One per service and worker; boto3 clients are thread-safe."""
    url = dynamodb_url()
    if url is None:
        raise RuntimeError("AGENTMEM_DYNAMODB_URL is not set")
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
