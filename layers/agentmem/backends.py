"""The registry of storage backends: ``AGENTMEM_BACKEND`` names one entry, and the entry names the
function that builds that backend's :class:`~agentmem.adapters.Adapters` (imported lazily, so a
Lambda on the AWS backend never imports SQLite adapters and a laptop never imports gremlinpython).

Adding a backend is one entry here plus its builder (``(settings, clock, embedder) -> Adapters``)
and a parameter of the contract suites (``tests/integration/contracts``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agentmem.errors import ConfigurationError

if TYPE_CHECKING:
    from agentmem.adapters import Adapters

    # (settings, clock, embedder override or None) -> Adapters; the settings are not named here
    # because agentmem.settings validates AGENTMEM_BACKEND against this registry.
    BackendBuilder = Callable[..., Adapters]

# name -> "module:function"
BACKENDS: Mapping[str, str] = {
    "local": "agentmem.adapters.embedded.wiring:build_embedded",  # SQLite + numpy under data_dir
    "aws": "agentmem.adapters.aws.wiring:build_aws",  # DynamoDB, SQS, OpenSearch, Neptune, Bedrock
}


def builder(name: str) -> BackendBuilder:
    """The builder registered under ``name``."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown backend {name!r}; expected one of {', '.join(sorted(BACKENDS))}",
            details={"setting": "AGENTMEM_BACKEND"},
        ) from None
    module, _, function = target.partition(":")
    built: BackendBuilder = getattr(importlib.import_module(module), function)
    return built
