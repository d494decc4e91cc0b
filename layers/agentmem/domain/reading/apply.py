"""What a reading changes on a candidate fact before it is stored: the reading's marks as tags
(``subject:other``, ``modality:wish``, ``stance:retracts`` — what the read path and the inspector
see), and, for the user's own asserted value of a keyed single-valued attribute the key patterns
missed ("We finally relocated to Porto"), the key, value and category that put it in the
Profile. Pure."""

from __future__ import annotations

from dataclasses import replace

from agentmem.domain.extraction import Candidate
from agentmem.domain.keys import KEY_CATEGORY, SINGLE_VALUED_KEYS
from agentmem.domain.models import Source
from agentmem.domain.reading.model import Modality, Reading, Stance, Subject

THIRD_PARTY_TAG = "subject:other"


def tags_of(reading: Reading) -> tuple[str, ...]:
    """The marks a reading leaves on its record: only those that differ from a plain statement
    of the user's own (subject, modality, stance)."""
    out = []
    if reading.subject is not Subject.SPEAKER:
        out.append(f"subject:{reading.subject.value}")
    if reading.modality is not Modality.ASSERTED:
        out.append(f"modality:{reading.modality.value}")
    if reading.stance is not Stance.ADDS:
        out.append(f"stance:{reading.stance.value}")
    return tuple(out)


def with_reading(cand: Candidate, reading: Reading) -> Candidate:
    tags = tuple(dict.fromkeys((*cand.tags, *tags_of(reading))))
    attribute = reading.attribute
    keyed = (
        cand.key is None
        and cand.source is Source.USER
        and reading.subject is Subject.SPEAKER
        and reading.asserted
        and attribute is not None
        and attribute.subject == "self"
        and attribute.value
        and attribute.name in SINGLE_VALUED_KEYS
    )
    if keyed and attribute is not None:
        return replace(
            cand,
            key=attribute.name,
            value=attribute.value,
            category_hint=cand.category_hint or KEY_CATEGORY.get(attribute.name),
            tags=tags,
        )
    return replace(cand, tags=tags) if tags != cand.tags else cand
