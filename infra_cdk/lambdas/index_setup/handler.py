"""setup λ (CloudFormation custom resource, Provider framework): the OpenSearch index template
and the index, once per deploy (``agentmem.adapters.aws.opensearch_setup``).

Create and Update apply the resource's properties (Index, Dimension, Replicas); Delete keeps the
index (a projection of DynamoDB, and the domain goes with the stack anyway). The Provider
framework answers CloudFormation: a returned dict is SUCCESS, a raised error is FAILED with its
message, so a deploy that cannot set the index up stops instead of leaving it to cold starts.

An infrastructure function like the role mapping beside it, not an application one: it runs no
service and no container, only the adapter-level setup on the shared layer's OpenSearch client.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger

from agentmem.adapters.aws import opensearch_setup as setup
from agentmem.settings import load_settings

logger = Logger(service="agentmem-setup")


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    return handle(event, client, sleep=time.sleep)


def handle(event: dict[str, Any], client: Any, *, sleep: Callable[[float], None]) -> dict[str, Any]:
    request_type = event.get("RequestType")
    if request_type == "Delete":
        return {"PhysicalResourceId": event.get("PhysicalResourceId") or "agentmem-index"}
    spec = setup.spec_from_properties(event.get("ResourceProperties") or {})
    result = setup.apply(client or setup.client_from_settings(load_settings()), spec, sleep=sleep)
    logger.info(
        "index setup done",
        extra={"request": request_type, "index": result.index, "index_created": result.created},
    )
    return {
        "PhysicalResourceId": spec.index,  # a new index name replaces the resource
        "Data": {
            "Index": result.index,
            "Created": str(result.created).lower(),
            "TemplateHash": result.template_hash,
        },
    }
