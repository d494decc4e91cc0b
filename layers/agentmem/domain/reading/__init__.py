"""The statement reader (docs/reader.md): one typed reading per candidate fact — whose fact it is, how
it is meant (asserted, planned, wished, hypothetical, asked, negated), how it stands toward what
was said before (adds, replaces, retracts, corrects, accepts), which attribute it states (from the
one attribute registry, :mod:`agentmem.domain.attributes`) and how sure the reading is.

Rules read structure where it is exact (a question mark, a conditional opener, a possessive with
a relation noun, the attribute tables); small learned heads over the shipped embedder weigh in
where wording varies (:mod:`agentmem.domain.reading.heads`). :func:`may_supersede` is the one
gate the write path asks before a supersede. Pure: the heads' weights are handed in."""

from agentmem.domain.reading.heads import Head, Heads
from agentmem.domain.reading.model import Modality, Reading, Stance, Subject
from agentmem.domain.reading.reader import may_end, may_revise, may_supersede, read

__all__ = [
    "Head",
    "Heads",
    "Modality",
    "Reading",
    "Stance",
    "Subject",
    "may_end",
    "may_revise",
    "may_supersede",
    "read",
]
