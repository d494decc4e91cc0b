"""Any model server that speaks the OpenAI API shape (``/chat/completions``, ``/embeddings``):
Ollama, vLLM, llama.cpp, LM Studio, OpenAI, Azure OpenAI (v1 API). Configured by the
``AGENTMEM_OPENAI_*`` settings and built by :mod:`agentmem.adapters.providers`; see
``docs/providers/``."""

from agentmem.adapters.openai_compat.embedder import OpenAICompatEmbedder
from agentmem.adapters.openai_compat.llm import OpenAICompatLLM
from agentmem.adapters.openai_compat.transport import ProviderUnavailable, Transport

__all__ = ["OpenAICompatEmbedder", "OpenAICompatLLM", "ProviderUnavailable", "Transport"]
