"""The reading's types: who a fact is about, how it is meant, how it stands toward earlier facts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agentmem.domain.attributes import Attribute


class Subject(StrEnum):
    SPEAKER = "speaker"  # the user (or the transcript's speaker) themself, "we" included
    OTHER = "other"  # a related or named other person ("my sister", "Jake from work", 我同学)
    ASSISTANT = "assistant"  # what the assistant said or is ("you recommended ...")
    GENERIC = "generic"  # the world: no person ("Lisbon is expensive", "the launch slipped")


class Modality(StrEnum):
    ASSERTED = "asserted"
    PLAN = "plan"
    WISH = "wish"
    HYPOTHETICAL = "hypothetical"
    QUESTION = "question"
    NEGATED = "negated"


class Stance(StrEnum):
    ADDS = "adds"  # a fact beside what is known
    REPLACES = "replaces"  # a new value of something known (a move, a new job), change word or not
    RETRACTS = "retracts"  # an earlier fact no longer holds ("I stopped going to that gym")
    CORRECTS = "corrects"  # an earlier statement was wrong ("wait, I meant Wednesday")
    ACCEPTS = "accepts"  # the assistant's recommendation is the user's choice


@dataclass(frozen=True, slots=True)
class Reading:
    """One candidate fact read. ``confidence`` is the lower of the subject's and the modality's
    probabilities (what decides whether it may retire a fact: a reading is as sure as its least
    sure part); ``stance_confidence`` that of the stance. ``learned`` says
    whether a learned head took part (else rules alone). ``attributes``: what it states, from
    :func:`agentmem.domain.attributes.infer_all`, each with its subject re-read (a third party's
    value is never the user's)."""

    subject: Subject
    modality: Modality
    stance: Stance
    confidence: float
    attributes: tuple[Attribute, ...] = ()
    learned: bool = False
    stance_confidence: float = 1.0

    @property
    def attribute(self) -> Attribute | None:
        return self.attributes[0] if self.attributes else None

    @property
    def asserted(self) -> bool:
        return self.modality is Modality.ASSERTED
