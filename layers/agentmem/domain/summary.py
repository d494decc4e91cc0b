"""Scene summaries: what one session produced, kept for the start of the next
(docs/session-memory.md "Scene summaries").

A :class:`SceneLog` is the running record of a session the ingest path keeps (its turns, when it
started and last spoke, the memories its turns wrote or restated). When the session closes (a turn
of another session of the same user arrives, or the first context of a new session asks for it),
:func:`build_summary` turns the log and the memories it names into a :class:`SceneSummary`:
extractive, the facts the session produced (their memory ids, the most important first, at most
:data:`MAX_FACTS`) and its key entities (names that recur across those facts, with the ids that
carry them). The summary stores ids, not text: it is rendered from the live memories at read time
(:func:`summary_lines`), so a memory deleted, superseded or erased since is never shown again.

Pure: records in, values out; the stores keep the values as JSON (:meth:`SceneSummary.to_dict`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentmem.domain.models import Category, Confidence, MemoryRecord, Status

__all__ = [
    "MAX_ENTITIES",
    "MAX_FACTS",
    "MAX_SCENE_TURNS",
    "LatestSession",
    "SceneLog",
    "SceneSummary",
    "SummaryEntity",
    "SummaryLine",
    "build_summary",
    "summary_lines",
]

MAX_FACTS = 8  # facts a summary keeps (the most important; shown oldest first)
MAX_ENTITIES = 6  # key entities a summary keeps (the most frequent)
MAX_SCENE_TURNS = 1000  # turns a scene log records; later turns of a very long session are not added


@dataclass(frozen=True, slots=True)
class SceneLog:
    """The running record of one session: the turns it had (by message id), the first and last
    time it spoke, the memories its turns wrote or restated, and the turns the write path
    withheld (quarantined as an injection, alone or as a part of one split over turns): the
    session window never quotes those."""

    session_id: str
    started_at: datetime
    ended_at: datetime
    message_ids: frozenset[str] = frozenset()
    memory_ids: frozenset[str] = frozenset()
    withheld: frozenset[str] = frozenset()

    @property
    def turns(self) -> int:
        return len(self.message_ids)


@dataclass(frozen=True, slots=True)
class LatestSession:
    """The scope's most recent session (the one its last turn belonged to) and the one before it."""

    session_id: str
    previous: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryEntity:
    name: str
    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SceneSummary:
    """The extractive summary of one session: its span, its turn count, the ids of the facts it
    produced (oldest first) and its key entities (most frequent first). ``text`` is an optional
    generative summary (None unless a model wrote one)."""

    session_id: str
    started_at: datetime
    ended_at: datetime
    turns: int
    fact_ids: tuple[str, ...] = ()
    entities: tuple[SummaryEntity, ...] = ()
    text: str | None = None
    memory_ids_seen: int = field(default=0, compare=False)
    """How many memories the log named when the summary was built (a log that grew since is stale)."""

    @property
    def memory_ids(self) -> tuple[str, ...]:
        """Every memory id the summary cites (facts first, then the entities' own)."""
        ids = dict.fromkeys(self.fact_ids)
        for entity in self.entities:
            ids.update(dict.fromkeys(entity.memory_ids))
        return tuple(ids)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "started_at": self.started_at.isoformat(),
            "ended_at": self.ended_at.isoformat(),
            "turns": self.turns,
            "fact_ids": list(self.fact_ids),
            "entities": [{"name": e.name, "memory_ids": list(e.memory_ids)} for e in self.entities],
            "memory_ids_seen": self.memory_ids_seen,
        }
        if self.text is not None:
            out["text"] = self.text
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SceneSummary:
        """Raises ValueError / KeyError / TypeError for a row of the wrong shape."""
        return cls(
            session_id=str(data["session_id"]),
            started_at=datetime.fromisoformat(str(data["started_at"])),
            ended_at=datetime.fromisoformat(str(data["ended_at"])),
            turns=int(data["turns"]),
            fact_ids=tuple(str(i) for i in data.get("fact_ids", ())),
            entities=tuple(
                SummaryEntity(str(e["name"]), tuple(str(i) for i in e["memory_ids"]))
                for e in data.get("entities", ())
            ),
            text=None if data.get("text") is None else str(data["text"]),
            memory_ids_seen=int(data.get("memory_ids_seen", 0)),
        )


def _summarised(record: MemoryRecord) -> bool:
    """Whether a memory may stand in a summary: active, not expired, not an operator's rule."""
    return (
        record.status is Status.ACTIVE
        and record.confidence is not Confidence.EXPIRED
        and record.category is not Category.POLICY
    )


def _said_at(record: MemoryRecord) -> tuple[float, str]:
    """Order of saying: when the memory became true (else was written), then its id."""
    at = record.valid_from or record.created_at
    return (at.timestamp() if at is not None else 0.0, record.memory_id)


def build_summary(
    scene: SceneLog,
    records: Iterable[MemoryRecord],
    *,
    max_facts: int = MAX_FACTS,
    max_entities: int = MAX_ENTITIES,
) -> SceneSummary:
    """The extractive summary of ``scene`` from the memories it names (``records``: those of the
    log's ids that could be read; the others are left out). Facts: the most important active
    ones (ties: the earlier first), at most ``max_facts``, then put in the order they were said.
    Entities: names carried by at least one kept memory, counted over every active memory of the
    session, the most frequent first (ties: the first seen), at most ``max_entities``; a name
    differing only in case is one entity."""
    named = [r for r in records if r.memory_id in scene.memory_ids and _summarised(r)]
    named.sort(key=_said_at)
    best = sorted(named, key=lambda r: -r.importance)[:max_facts]  # stable: earlier first on ties
    chosen = {r.memory_id for r in best}
    facts = tuple(r.memory_id for r in named if r.memory_id in chosen)
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    carriers: dict[str, list[str]] = {}
    for record in named:
        for raw in dict.fromkeys(record.entities):
            name = raw.strip()
            if not name:
                continue
            key = name.casefold()
            names.setdefault(key, name)
            counts[key] += 1
            carriers.setdefault(key, []).append(record.memory_id)
    order = {key: i for i, key in enumerate(names)}
    top = sorted(counts, key=lambda k: (-counts[k], order[k]))[:max_entities]
    entities = tuple(SummaryEntity(names[k], tuple(carriers[k])) for k in top)
    return SceneSummary(
        session_id=scene.session_id,
        started_at=scene.started_at,
        ended_at=scene.ended_at,
        turns=scene.turns,
        fact_ids=facts,
        entities=entities,
        memory_ids_seen=len(scene.memory_ids),
    )


# The words of a rendered summary, per language (the context assembler's languages).
_WORDS: dict[str, dict[str, str]] = {
    "zh": {"header": "{day} 的会话（{turns} 轮）", "entities": "关键实体：", "sep": "、"},
    "en": {"header": "session of {day} ({turns} turns)", "entities": "key entities: ", "sep": ", "},
}


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """One line of a rendered summary; ``memory_id`` is set on a fact's line."""

    text: str
    memory_id: str | None = None


def summary_lines(summary: SceneSummary, live: Mapping[str, MemoryRecord], lang: str) -> list[SummaryLine]:
    """The summary as lines in ``lang`` ("zh" or "en"; others read as "en"): a header (the day
    and the turn count), the generative text when there is one, each fact still live (``live``:
    the records that can be shown, by id; a fact missing there or no longer active is left out)
    and the key entities still carried by a live memory. No line at all when nothing is left."""
    words = _WORDS.get(lang, _WORDS["en"])
    shown = {i: r for i, r in live.items() if _summarised(r)}
    facts = [SummaryLine(shown[i].content, i) for i in summary.fact_ids if i in shown]
    entities = [e.name for e in summary.entities if any(i in shown for i in e.memory_ids)]
    body: list[SummaryLine] = []
    if summary.text and all(i in shown for i in summary.fact_ids):
        # written from these facts: once one is deleted (or replaced) the text could say it again
        body.append(SummaryLine(summary.text))
    body += facts
    if entities:
        body.append(SummaryLine(words["entities"] + words["sep"].join(entities)))
    if not body:
        return []
    header = words["header"].format(day=summary.started_at.date().isoformat(), turns=summary.turns)
    return [SummaryLine(header), *body]
