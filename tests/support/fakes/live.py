"""Connections to real clusters for the opt-in live tests (see docs/aws.md, "Live checks").

* ``AGENTMEM_OPENSEARCH_URL`` — e.g. ``http://localhost:9200`` or ``https://user:pass@host:9200``
  (basic auth from the URL); with ``AGENTMEM_OPENSEARCH_SIGV4=es|aoss`` requests are SigV4-signed
  with the ambient AWS credentials instead; ``AGENTMEM_OPENSEARCH_VERIFY=false`` skips TLS
  verification (a local self-signed cluster).
* ``AGENTMEM_GREMLIN_URL`` — e.g. ``ws://localhost:8182/gremlin`` (a TinkerPop server) or
  ``wss://<neptune endpoint>:8182/gremlin``; ``AGENTMEM_GREMLIN_IAM=true`` signs the handshake.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from gremlin_python.driver.remote_connection import RemoteConnection


def opensearch_url() -> str | None:
    return os.environ.get("AGENTMEM_OPENSEARCH_URL") or None


def gremlin_url() -> str | None:
    return os.environ.get("AGENTMEM_GREMLIN_URL") or None


def opensearch_client(url: str) -> Any:
    from opensearchpy import OpenSearch

    service = os.environ.get("AGENTMEM_OPENSEARCH_SIGV4")
    if service:
        from agentmem.adapters.aws.opensearch_index import build_client

        return build_client(url, region=os.environ.get("AGENTMEM_AWS_REGION"), service=service)
    verify = os.environ.get("AGENTMEM_OPENSEARCH_VERIFY", "true").lower() != "false"
    parsed = urlparse(url)
    auth = (parsed.username, parsed.password) if parsed.username else None
    host = {"host": parsed.hostname, "port": parsed.port or (443 if parsed.scheme == "https" else 9200)}
    return OpenSearch(
        hosts=[host],
        http_auth=auth,
        use_ssl=parsed.scheme == "https",
        verify_certs=verify,
        ssl_show_warn=False,
        timeout=30,
    )


def gremlin_connection(url: str) -> Callable[[], RemoteConnection]:
    """The adapter's own factory (a pool of one; signed when ``AGENTMEM_GREMLIN_IAM=true``)."""
    from agentmem.adapters.aws.gremlin_client import connection_factory

    iam = os.environ.get("AGENTMEM_GREMLIN_IAM", "").lower() == "true"
    return connection_factory(url, region=os.environ.get("AGENTMEM_AWS_REGION"), iam=iam)
