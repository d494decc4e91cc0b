"""Accepted recommendations (issue 10): "就装这个" / "Sold." / "Let's go with that." name nothing,
yet they state a choice — the one the assistant recommended in the turn before. This module
finds the acceptance, the recommended option in the previous reply, and states the choice as a
user fact ("I went with Hugo (asked: Should I move my blog to Ghost or Hugo?)"), marked as a change so
that it supersedes what the user used before (the attribute comes from the question:
:mod:`agentmem.domain.attributes`). Pure.
"""

from __future__ import annotations

import re

from agentmem.domain.extraction import USER_IMPORTANCE, Candidate, is_question
from agentmem.domain.models import Source
from agentmem.domain.text import language, split_sentences

MAX_ACCEPTANCE_CHARS = 60  # an acceptance is short; a longer message states its own facts

_ACCEPT_EN = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|great|perfect|sounds good|yes|yep|yeah|cool|fine)[,!. ]+)?"
    r"(?:sold|deal|done|let's (?:go with|do|use|get|try) (?:that|it|this|that one|this one)|"
    r"(?:i'll|we'll|i will|we will) (?:go with|take|use|get|try|buy|install) (?:that|it|this|that one|this one|your (?:suggestion|recommendation|pick))|"
    r"go(?:ing)? with (?:that|it|this)(?: one)?|that one it is|convinced)\b[.!]*(?:\s+.*)?$",
    re.IGNORECASE,
)
_ACCEPT_ZH = re.compile(
    r"^(?:好|行|嗯|可以|那|ok)?[的吧啊，,！!。 ]*(?:那)?(?:就(?:装|用|选|买|要|定|换|下载|上)?(?:这个|它|这款|那个|那款|这家)(?:吧|了|啦)?|"
    r"就这么定了?|听你的|就它了|就这样吧)"
)
_NAME_EN = r"(?:the\s+)?(?P<c>[A-Z0-9][\w.+\-]*(?:\s+(?:[A-Z0-9][\w.+\-]*))*)"
_RECOMMEND_EN = (
    re.compile(r"\b(?:I'd|I would|I'd probably|I)\s+(?:recommend|suggest|go with|pick|choose)\s+" + _NAME_EN),
    re.compile(r"\b(?:recommend|suggest|try|go with)\s+" + _NAME_EN),
    re.compile(
        _NAME_EN
        + r"\s+(?:is|would be)\s+(?:the\s+|a\s+)?(?:better|best|right|ideal|safer|good)\s+(?:fit|choice|option|pick|bet)"
    ),
)
_NAME_ZH = r"(?P<c>[\u4e00-\u9fffA-Za-z0-9.+\-]{2,12}?)(?=[，,。.!！;；、（(]|$|吧|会|更|比较|就)"
_RECOMMEND_ZH = (
    re.compile(r"(?:推荐|建议)(?:你|您)?(?:用|选|装|买|试试|使用|考虑|入手)?" + _NAME_ZH),
    re.compile(r"(?:选|用|装)" + _NAME_ZH + r"(?=[，,。.!！]?(?:更|比较)?(?:合适|好|稳))"),
)


def is_acceptance(text: str) -> bool:
    """A short message that accepts what was just proposed without naming it."""
    bare = text.strip()
    if not bare or len(bare) > MAX_ACCEPTANCE_CHARS:
        return False
    return bool(_ACCEPT_ZH.match(bare) if language(bare) == "zh" else _ACCEPT_EN.match(bare))


def recommended(reply: str) -> str | None:
    """The option the assistant's reply recommends (the first one it names), or None."""
    patterns = _RECOMMEND_ZH if language(reply) == "zh" else _RECOMMEND_EN
    for sentence in split_sentences(reply):
        for pattern in patterns:
            found = pattern.search(sentence)
            if found:
                choice = found.group("c").strip(" .,，。")
                if choice and choice.casefold() not in {"it", "this", "that", "you", "a", "an"}:
                    return choice
    return None


def accepted_choice(user_text: str, previous_user: str, previous_reply: str) -> Candidate | None:
    """The choice ``user_text`` accepts, as a user fact, when the previous reply recommended
    something; None otherwise. The previous question (when there was one) says what the choice
    is about."""
    if not is_acceptance(user_text):
        return None
    choice = recommended(previous_reply)
    if choice is None:
        return None
    asked = next((s.strip() for s in split_sentences(previous_user) if is_question(s)), "")
    if language(user_text) == "zh" or language(previous_reply) == "zh":
        content = f"我选了{choice}（问：{asked}）" if asked else f"我选了{choice}"
    else:
        content = f"I went with {choice} (asked: {asked})" if asked else f"I went with {choice}"
    return Candidate(
        content=content,
        source=Source.USER,
        importance=USER_IMPORTANCE,
        update_strength=2,
        entities=(choice,),
    )
