"""The question a message answers (docs/extraction.md, "Answers carry their question").

"Three times a week; it keeps us on track." is a fact only next to the question it answers
("How often do you work out with your family?"): stored alone it names neither the activity nor
whom it is about, and neither recall's embedding nor its keywords can find it. When the other
party's last message (the previous speaker of a transcript, or the assistant's previous reply in
a chat) ended with a question put to the one who answers — second person, not an offer of help —
the first fact of the answer keeps that question, in the form an accepted recommendation already
uses: ``"Three times a week; it keeps us on track. (How often do you work out with your family?)"``.
Attribute inference reads the fact without it (:data:`~agentmem.domain.attribute_rules.ASKED`).
Pure; the texts are already redacted by the guards.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agentmem.domain.extraction import Candidate, is_question
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.text import language, split_sentences

__all__ = ["MAX_QUESTION_CHARS", "asked_of_answerer", "with_question"]

MAX_QUESTION_CHARS = 160  # a longer "question" is a paragraph, not what the answer fills

_CAPTION = lazy_compile(r"\s*\[[^\[\]]*\]\s*$")  # "… Ever been? [shared a photo: …]"
_SECOND_PERSON = lazy_compile(r"\b(?:you|your|yours|yourself|u)\b|你|您", re.IGNORECASE)
# An offer, a check on the conversation or a bare "and you?": nothing the answer is about.
_OFFER = lazy_compile(
    r"\b(?:want me to|shall i|should i|can i|could i|may i|would you like(?: me)?|do you want(?: me)?|"
    r"need (?:any|some|more)? ?help|anything else|does that (?:help|make sense)|is that (?:ok|okay|right)|"
    r"make sense|sound good|ready to|what do you think|how about you|what about you|and you)\b|"
    r"要不要我|需要我|还有什么|还需要|可以吗|行吗|好吗|对吗|明白吗|清楚吗|你觉得呢|你呢|你怎么看",
    re.IGNORECASE,
)


def asked_of_answerer(previous: str) -> str | None:
    """The question ``previous`` (the other party's last message) ends with, when it asks the
    one who answers about themselves; None otherwise."""
    text = _CAPTION.sub("", previous.strip())
    sentences = split_sentences(text)
    if not sentences:
        return None
    last = sentences[-1].strip()
    if not is_question(last) or len(last) > MAX_QUESTION_CHARS:
        return None
    if not _SECOND_PERSON.search(last) or _OFFER.search(last):
        return None
    return re.sub(r"[()（）]", " ", last).strip()


def with_question(candidate: Candidate, question: str) -> Candidate:
    """``candidate`` carrying the question it answers, in parentheses at its end."""
    content = candidate.content.rstrip()
    if language(content + question) == "zh":
        return replace(candidate, content=f"{content}（{question}）")
    return replace(candidate, content=f"{content} ({question})")
