"""The OpenSearch client the adapters use: SigV4-signed for a managed domain (``es``) or
Serverless (``aoss``), or unsigned (``none``) for a self-managed cluster or the local engines."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from agentmem.errors import ConfigurationError


def build_client(endpoint: str, *, region: str | None, service: str, session: Any = None) -> Any:
    """An ``OpenSearch`` client signing every request with SigV4 for ``service`` (es | aoss), or
    unsigned for ``none`` (a self-managed cluster; ``http://`` endpoints stay plain)."""
    import boto3
    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    options: dict[str, Any] = {
        "connection_class": RequestsHttpConnection,
        "timeout": 10,
        "max_retries": 2,
        "retry_on_timeout": True,
        "pool_maxsize": 16,
    }
    if service == "none":
        plain = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
        secure = plain.scheme == "https"
        return OpenSearch(
            hosts=[{"host": plain.hostname, "port": plain.port or (443 if secure else 80)}],
            use_ssl=secure,
            verify_certs=secure,
            **options,
        )
    boto_session = session or boto3.session.Session()
    credentials = boto_session.get_credentials()
    if credentials is None:
        raise ConfigurationError("no AWS credentials to sign OpenSearch requests with")
    region_name = region or boto_session.region_name
    if not region_name:
        raise ConfigurationError("AGENTMEM_AWS_REGION is needed to sign OpenSearch requests")
    parsed = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
    return OpenSearch(
        hosts=[{"host": parsed.hostname, "port": parsed.port or 443}],
        http_auth=AWSV4SignerAuth(credentials, region_name, service),
        use_ssl=True,
        verify_certs=True,
        **options,
    )
