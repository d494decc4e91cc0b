"""The Bedrock LLM, when enabled, reaches the write pipeline (an adapter of the bundle, wired
into the pipeline by bootstrap)."""

from __future__ import annotations

from pathlib import Path

from agentmem.adapters.aws.bedrock_llm import BedrockLLM
from agentmem.bootstrap import bootstrap
from agentmem.settings import load_settings


def test_enabled_llm_reaches_the_pipeline(tmp_path: Path) -> None:
    settings = load_settings(
        backend="aws",
        queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/agentmem-ingest",
        search_backend="local",
        graph_backend="local",
        local_projection_dir=str(tmp_path),
        embedder="hash",
        bedrock_llm_enabled=True,
    )
    container = bootstrap(settings)
    assert isinstance(container.pipeline.llm, BedrockLLM)
    assert container.llm is container.pipeline.llm
