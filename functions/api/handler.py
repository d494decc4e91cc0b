"""api λ (API Gateway REST proxy): the HTTP API. Scope comes from the authorizer context."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from agentmem.api.app import resolve

logger = Logger(service="agentmem-api")


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return resolve(event, context)
