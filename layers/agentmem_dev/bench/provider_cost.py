"""The model providers' own counts in ``agentmem bench cost``: LLM and embedding calls and the
tokens the server reported (its ``usage``), per ingested turn and per context request, per
provider — **measured**, where the LLM estimate beside it is priced from prompt templates.

Each provider that counts (:class:`~agentmem.adapters.provider_usage.ProviderUsage`: the
OpenAI-compatible LLM and embedder, Bedrock's LLM) is read before and after each phase. With
``AGENTMEM_LLM`` unset the LLM section says so; a shipped local embedder counts no tokens (its
calls are in the ``rules`` section, from the bench's own wrapper).
"""

from __future__ import annotations

from typing import Any

from agentmem.adapters.provider_usage import ProviderUsage


def usage_of(provider: object) -> ProviderUsage | None:
    """The provider's counters, looking through the bench's wrappers (``inner``)."""
    seen = 0
    while provider is not None and seen < 4:
        usage = getattr(provider, "usage", None)
        if isinstance(usage, ProviderUsage):
            return usage
        provider = getattr(provider, "inner", None)
        seen += 1
    return None


class ProviderMeter:
    """Snapshots of an LLM's and an embedder's counters, and their differences per phase."""

    def __init__(self, llm: object, embedder: object) -> None:
        self.providers = {"llm": usage_of(llm), "embedder": usage_of(embedder)}
        self._last = self._read()

    def _read(self) -> dict[str, dict[str, int]]:
        return {k: u.snapshot() for k, u in self.providers.items() if u is not None}

    def phase(self, units: int) -> dict[str, Any]:
        """Calls and tokens since the last phase, per unit (a turn, a context request)."""
        now = self._read()
        per = max(1, units)
        found: dict[str, Any] = {}
        for name, usage in self.providers.items():
            if usage is None:
                found[name] = None
                continue
            delta = {k: now[name][k] - self._last[name][k] for k in now[name]}
            found[name] = {
                "provider": usage.provider,
                "calls": round(delta["calls"] / per, 3),
                "input_tokens": round(delta["input_tokens"] / per, 1),
                "output_tokens": round(delta["output_tokens"] / per, 1),
                "failures": round(delta["failures"] / per, 3),
            }
        self._last = now
        return found
