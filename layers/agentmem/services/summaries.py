"""Scene summaries across sessions (docs/session-memory.md; docs/design.md, "Session memory").

The trigger fits the serverless shape (no process lives between two turns, nothing watches for a
session to end): the ingest λ records every processed turn in its session's scene log
(:meth:`SummaryService.record_turn`); when the turn belongs to another session than the user's
latest, the latest one has closed and is summarised there and then. The first contexts of a new
session may come before any of its turns: :meth:`SummaryService.previous` then finds the latest
session is another one, and summarises it on the spot when no summary (or only a stale one) is
stored. Either way the summary of session *A* is what the contexts of the session after *A* carry.

Extractive (:func:`~agentmem.domain.summary.build_summary`): the facts the session produced and
its key entities, by memory id, rendered from the live memories when loaded. Generative on top
when a model is configured (:meth:`~agentmem.ports.LLM.summarise`, Bedrock): at most three
sentences over those facts, stored with the summary. The model's text is untrusted: it is
redacted, refused when the injection rules flag it, bounded to :data:`MAX_TEXT_CHARS`, and shown
only while every fact it was written from is live (a deleted fact never comes back through it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from agentmem.domain.models import MemoryRecord, Scope
from agentmem.domain.summary import SceneSummary, build_summary
from agentmem.domain.text import language
from agentmem.ports import LLM, MemoryStore, SessionSummaryStore

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 600  # a generative summary longer than this is cut at a sentence end


@dataclass(frozen=True, slots=True)
class LoadedSummary:
    """A summary with the records it cites that could be read (by id)."""

    summary: SceneSummary
    records: dict[str, MemoryRecord]


@dataclass
class SummaryService:
    store: SessionSummaryStore
    memories: MemoryStore
    llm: LLM | None = None

    def record_turn(
        self,
        scope: Scope,
        session_id: str,
        message_id: str,
        at: datetime,
        memory_ids: Sequence[str],
        withheld: Sequence[str] = (),
    ) -> SceneSummary | None:
        """Record a processed turn in its session's log (``withheld``: message ids the session
        window must not quote); when it opens a new session, summarise the one that closed and
        store it (returned)."""
        closed = self.store.record_turn(scope, session_id, message_id, at, memory_ids, withheld)
        return None if closed is None else self.summarise(scope, closed)

    def summarise(self, scope: Scope, session_id: str) -> SceneSummary | None:
        """Build and store the summary of ``session_id`` from its scene log (None: no log)."""
        scene = self.store.scene(scope, session_id)
        if scene is None:
            return None
        records = self.memories.get_many(scope, sorted(scene.memory_ids), embeddings=False)
        summary = build_summary(scene, records.values())
        if self.llm is not None and summary.fact_ids:
            facts = [records[i].content for i in summary.fact_ids]
            summary = replace(summary, text=self._generated(self.llm, facts))
        self.store.put_summary(scope, summary)
        log.info("summaries.stored", extra={"turns": summary.turns, "facts": len(summary.fact_ids)})
        return summary

    @staticmethod
    def _generated(llm: LLM, facts: list[str]) -> str | None:
        """The model's summary of ``facts``, guarded (see the module docstring), or None."""
        from agentmem.domain.guards import detect_injection, redact  # only with a model configured

        text = llm.summarise(facts, language(" ".join(facts)))
        if not text or not text.strip():
            return None
        if detect_injection(text).is_injection:
            log.warning("summaries.generated_refused", extra={"reason": "injection"})
            return None
        text = redact(text.strip()).text
        if len(text) > MAX_TEXT_CHARS:
            cut = max(text.rfind(end, 0, MAX_TEXT_CHARS) for end in (". ", "。", "! ", "? "))
            text = text[: cut + 1] if cut > 0 else text[:MAX_TEXT_CHARS]
        return text

    def withheld(self, scope: Scope, session_id: str) -> tuple[frozenset[str], frozenset[str]]:
        """(the session's recorded turns, those of them withheld from the session window)."""
        scene = self.store.scene(scope, session_id)
        return (scene.message_ids, scene.withheld) if scene is not None else (frozenset(), frozenset())

    def previous(self, scope: Scope, session_id: str) -> LoadedSummary | None:
        """The summary of the session before ``session_id`` (the latest session when that is
        another one, else the one the latest replaced) with its live records; built now when it
        is missing, or stale (the latest session, still open, went on after it was built). None
        when there is no earlier session."""
        latest = self.store.latest(scope)
        if latest is None:
            return None
        still_open = latest.session_id != session_id  # a new session before its first turn
        before = latest.session_id if still_open else latest.previous
        if before is None:
            return None
        summary = self.store.summary(scope, before)
        if summary is None or (still_open and self._stale(scope, summary)):
            summary = self.summarise(scope, before)
        if summary is None:
            return None
        records = self.memories.get_many(scope, list(summary.memory_ids), embeddings=False)
        return LoadedSummary(summary, records)

    def _stale(self, scope: Scope, summary: SceneSummary) -> bool:
        scene = self.store.scene(scope, summary.session_id)
        return scene is not None and (
            scene.turns != summary.turns or len(scene.memory_ids) != summary.memory_ids_seen
        )
