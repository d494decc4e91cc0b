"""agentmem: long-term memory for LLM agents.

Layers (each imports only those to its right): ``functions/*`` -> ``agentmem.services`` ->
``agentmem.ports`` <- ``agentmem.adapters``; ``agentmem.domain`` is pure and importable by all;
``agentmem.bootstrap`` is the composition root (settings in ``agentmem.settings``, backends in
``agentmem.backends``). Development tooling (the laptop emulator, CLI, eval, benchmarks) lives in
the separate ``agentmem_dev`` package, which the Lambda layer does not ship.
"""

__version__ = "0.1.0"
