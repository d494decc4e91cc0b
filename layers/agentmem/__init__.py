"""agentmem: long-term memory for LLM agents.

Layers (each imports only those to its right): ``functions/*`` -> ``agentmem.services`` ->
``agentmem.ports`` <- ``agentmem.adapters``; ``agentmem.domain`` is pure and importable by all;
``agentmem.runtime`` is the composition root.
"""

__version__ = "0.1.0"
