"""What the write path lets an onlooker see (benchmarks, diagnostics): its decision points, in
the order they happen, without changing any of them.

:class:`~agentmem.services.write_pipeline.WritePipeline` takes a :class:`PipelineObserver`; the
default, :class:`NullObserver`, does nothing. An observer only watches: it gets the values the
pipeline works on (never copies it must not keep past the call), returns nothing, and must not
raise. Embedding calls are not an event here: wrap the :class:`~agentmem.ports.Embedder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentmem.domain.conflict import Judgement, NewFact
from agentmem.domain.extraction import Candidate
from agentmem.domain.models import Category, MemoryRecord, Turn


class PipelineObserver(Protocol):
    """The write path's decision points."""

    def extracted(self, turn: Turn, candidates: Sequence[Candidate]) -> None:
        """The rule facts of a turn that passed gate 0 (the user's, then the exchange's when the
        reply is clean), before gates 1 and 2."""

    def gated(self, turn: Turn, kept: Sequence[Candidate], drops: Sequence[str]) -> None:
        """What passed a gate and why the rest did not: once for the rule facts, once more for
        the model's facts when a model was asked (drop reasons ``llm_``-prefixed)."""

    def classified(self, content: str, hint: str | None, category: Category) -> None:
        """The rules' category for a fact about to be stored (``hint`` from its key, if any)."""

    def judged(self, fact: NewFact, old: MemoryRecord, similarity: float, verdict: Judgement) -> None:
        """One verdict of the rule conflict judge on a (new fact, stored record) pair."""


class NullObserver:
    """Sees nothing: the default."""

    def extracted(self, turn: Turn, candidates: Sequence[Candidate]) -> None:
        return None

    def gated(self, turn: Turn, kept: Sequence[Candidate], drops: Sequence[str]) -> None:
        return None

    def classified(self, content: str, hint: str | None, category: Category) -> None:
        return None

    def judged(self, fact: NewFact, old: MemoryRecord, similarity: float, verdict: Judgement) -> None:
        return None
