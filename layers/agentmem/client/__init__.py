"""``agentmem.client``: kept so existing imports work; the client is the light distribution
``agentmem-client`` (``clients/python``, import name ``agentmem_client``), which this package
re-exports name for name. ``agentmem.client.<module>`` is ``agentmem_client.<module>`` (the same
module object: :mod:`agentmem.client.errors` and friends replace themselves on import).

``make install`` installs ``clients/python`` next to the server; elsewhere
``pip install ./clients/python``. Guide: docs/client.md.
"""

from __future__ import annotations

import importlib
from typing import Any


def _client() -> Any:
    try:
        return importlib.import_module("agentmem_client")
    except ModuleNotFoundError as exc:  # the light distribution is a separate install
        raise ModuleNotFoundError(
            "agentmem.client is the agentmem-client distribution: pip install ./clients/python"
        ) from exc


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_client(), name)
    except AttributeError:
        raise AttributeError(f"module 'agentmem.client' has no attribute {name!r}") from None
