"""The reading of a stored fact, and what it means for a query about the user: the rules on its
content, with the marks its write-time reading (learned heads included) left in its tags; a third
party's fact ranks below the user's own for a question about the user. Pure."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from agentmem.domain.attributes import STALE_CHANNEL, infer_all
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import MemoryRecord, ScoredMemory
from agentmem.domain.reading import cues
from agentmem.domain.reading.model import Modality, Reading, Subject
from agentmem.domain.reading.reader import own_attribute, read

THIRD_PARTY_FACTOR = 0.6  # a third party's fact keeps this share of its score for a question about the user


@lru_cache(maxsize=8192)
def rules_reading(content: str) -> Reading:
    return read(content)


def reading_of(record: MemoryRecord) -> Reading:
    """A stored fact's reading: the rules on its content, with the subject and modality its
    write-time reading (heads included) left in its tags (``subject:other``, ``modality:wish``)."""
    base = rules_reading(record.content)
    subject, modality = base.subject, base.modality
    for tag in record.tags:
        kind, _, value = tag.partition(":")
        if kind == "subject" and value in Subject.__members__.values():
            subject = Subject(value)
        elif kind == "modality" and value in Modality.__members__.values():
            modality = Modality(value)
    if (subject, modality) == (base.subject, base.modality):
        return base
    attributes = tuple(own_attribute(a, subject) for a in infer_all(record.content))
    return Reading(subject, modality, base.stance, base.confidence, attributes, base.learned)


_FIRST_PERSON = lazy_compile(r"\b(?:i|i'm|i've|me|my|mine|we|our|us)\b|我|咱", re.IGNORECASE)
_OTHER_PERSON = lazy_compile(
    rf"\b(?:he|she|they|his|her|their|him|them)\b|\b(?:{cues.RELATION_NOUNS_EN})\b|(?:{cues.RELATION_NOUNS_ZH})|[他她]",
    re.IGNORECASE,
)
_NAME = lazy_compile(r"(?<!^)(?<![.?!]\s)\b(?-i:[A-Z][a-z]+)\b")


def about_speaker(query: str) -> bool:
    """Whether ``query`` asks about the user themself: a first person and no other person (no
    third-person pronoun, relation noun or name) in it."""
    return bool(_FIRST_PERSON.search(query)) and not _OTHER_PERSON.search(query) and not _NAME.search(query)


def third_party(record: MemoryRecord) -> bool:
    """Whether ``record`` states another person's fact: its write-time reading's tag, else (a
    record written before the reader) the rules' subject of its content."""
    for tag in record.tags:
        if tag.startswith("subject:"):
            return tag == f"subject:{Subject.OTHER.value}"
    return rules_reading(record.content).subject is Subject.OTHER


def demote_third_party(scored: list[ScoredMemory], query: str) -> list[ScoredMemory]:
    """For a question about the user (:func:`~agentmem.domain.reading.stored.about_speaker`), a
    third party's fact keeps :data:`THIRD_PARTY_FACTOR` of its score and carries the ``third_party``
    channel: "which city do I live in?" answers with the user's city before the sister's."""
    if not scored or not about_speaker(query):
        return scored
    out = [
        replace(s, score=s.score * THIRD_PARTY_FACTOR, channels=(*s.channels, "third_party"))
        if third_party(s.record)
        else s
        for s in scored
    ]
    return sorted(out, key=lambda s: (round(s.score, 9), s.record.memory_id), reverse=True)


def slot_first(scored: list[ScoredMemory]) -> list[ScoredMemory]:
    """A question that asks for an attribute ("which city do I live in?") is answered first by the
    memories that state it about whom it asks (``components["slot"]``; a stale one aside): their
    scores are lifted together just above the best of the others, keeping their own order."""
    filling = {
        s.record.memory_id
        for s in scored
        if s.components.get("slot") and not any(c.startswith(STALE_CHANNEL) for c in s.channels)
    }
    others = [s.score for s in scored if s.record.memory_id not in filling]
    if not filling or not others:
        return scored
    lift = max(others) - min(s.score for s in scored if s.record.memory_id in filling) + 1e-6
    if lift <= 0:
        return scored
    out = [replace(s, score=s.score + lift) if s.record.memory_id in filling else s for s in scored]
    return sorted(out, key=lambda s: (round(s.score, 9), s.record.memory_id), reverse=True)
