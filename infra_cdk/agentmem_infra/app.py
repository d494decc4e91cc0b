"""Build the CDK app: one ``agentmem-<env>`` stack, cdk-nag on.

Context (``cdk synth -c key=value``):

``env``                       dev (default) | staging | prod
``account`` / ``region``      target; default CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION
``agentmem:skipBundling``     true: plain source assets, no pip (tests; not deployable)
``agentmem:nag``              false: skip the cdk-nag AwsSolutions checks (default on)
``agentmem:alarmEmail``       subscribe this address to the alarm topic (staging/prod)
``agentmem:bedrockLlmEnabled`` true/false: AGENTMEM_BEDROCK_LLM_ENABLED + Converse permission
``agentmem:openai``           JSON of the OpenAI-compatible provider's AGENTMEM_* settings (docs/providers/)
``agentmem:openaiKeySecretArn`` its key's Secrets Manager ARN (GetSecretValue granted to ingest and api)
``agentmem:createServiceLinkedRole`` true: also create the OpenSearch service-linked role
                              (once per account, when it does not exist yet)
``agentmem:reindexTo``        JSON of a new embedding model's AGENTMEM_* embedder settings and its
                              AGENTMEM_OPENSEARCH_INDEX: adds the reindex function (docs/aws.md)
``agentmem:opensearchIndex``  the index the functions use (the switch to a reindexed model's)
``agentmem:bedrockEmbedModel`` / ``agentmem:bedrockEmbedDimension`` the stack's Titan model and dimension
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from aws_cdk import App, Environment

from agentmem_infra import LAYERS_DIR
from agentmem_infra.bundling import SKIP_CONTEXT, skip_bundling
from agentmem_infra.config import _bool, load_config

if TYPE_CHECKING:
    from agentmem_infra.stack import AgentMemStack


def _ensure_library_importable() -> None:
    """The stack reads the table schemas from the library (``layers/agentmem``)."""
    try:
        import agentmem  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(LAYERS_DIR))


def build_app(app: App) -> AgentMemStack:
    _ensure_library_importable()
    from agentmem_infra.nag import add_nag
    from agentmem_infra.stack import AgentMemStack

    context = {
        key: app.node.try_get_context(key)
        for key in (
            "env",
            "account",
            "region",
            SKIP_CONTEXT,
            "agentmem:nag",
            "agentmem:alarmEmail",
            "agentmem:bedrockLlmEnabled",
            "agentmem:embedCalibration",
            "agentmem:openai",
            "agentmem:openaiKeySecretArn",
            "agentmem:createServiceLinkedRole",
            "agentmem:reindexTo",
            "agentmem:opensearchIndex",
            "agentmem:bedrockEmbedModel",
            "agentmem:bedrockEmbedDimension",
        )
    }
    config = load_config(context["env"], context)
    account = context["account"] or os.environ.get("CDK_DEFAULT_ACCOUNT")
    region = context["region"] or os.environ.get("CDK_DEFAULT_REGION")
    stack = AgentMemStack(
        app,
        f"agentmem-{config.name}",
        config=config,
        skip_bundling=skip_bundling(context[SKIP_CONTEXT]),
        create_service_linked_role=_bool(context["agentmem:createServiceLinkedRole"] or False),
        env=Environment(account=account, region=region) if (account or region) else None,
        description=f"agentmem ({config.name}): long-term memory for LLM agents",
        termination_protection=config.deletion_protection,
    )
    if context["agentmem:nag"] is None or _bool(context["agentmem:nag"]):
        add_nag(app)
    return stack
