"""What a model provider has spent and how often it failed, counted by the provider itself: the
calls, the tokens the server reported (``usage``), and the failures by reason. The cost bench reads
these per turn and per context request (:mod:`agentmem_dev.bench.provider_cost`), and
``/v1/health`` reads :meth:`ProviderUsage.recent_failure` to say the model is being bypassed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ProviderUsage:
    """Thread-safe counters of one provider (one LLM or one embedder)."""

    provider: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0
    failure_reasons: Counter[str] = field(default_factory=Counter)
    last_failure: tuple[str, float] | None = None  # (reason, time.monotonic()) of the latest one
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def call(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        with self._lock:
            self.calls += 1
            self.input_tokens += max(0, int(input_tokens))
            self.output_tokens += max(0, int(output_tokens))

    def tokens(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """Tokens of a call already counted (the server's ``usage`` arrives after the call)."""
        with self._lock:
            self.input_tokens += max(0, int(input_tokens))
            self.output_tokens += max(0, int(output_tokens))

    def fail(self, reason: str) -> None:
        with self._lock:
            self.failures += 1
            self.failure_reasons[reason] += 1
            self.last_failure = (reason, time.monotonic())

    def recent_failure(self, within_s: float) -> str | None:
        """The reason of the latest failure if it happened in the last ``within_s`` seconds."""
        with self._lock:
            if self.last_failure is None:
                return None
            reason, at = self.last_failure
        return reason if time.monotonic() - at <= within_s else None

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "calls": self.calls,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "failures": self.failures,
            }
