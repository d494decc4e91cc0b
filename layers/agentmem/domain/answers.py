"""Answer anchoring by meaning: which sentences of an assistant's reply answer the user's question,
and when a user's short reply accepts the assistant's recommendation.

A question opens slots by its question word (zh and en): what/which/什么/哪个 -> a named
``thing``; who/谁 -> a ``person``; where/哪里 -> a ``place``; when/什么时候/几点 -> a ``time``;
how many/多少 -> a ``number``; why/为什么 -> a ``reason``; how/怎么 -> ``steps``; should I/应该/
推荐/要不要 -> ``advice``. A reply sentence fills a slot when it carries a value of that type: an
entity (domain/entities.py) of the right kind, a date or time expression, a number, a causal
connective, an instruction, or a recommendation cue. A reply sentence that fills no slot may
still be anchored by calibrated similarity (the caller passes one: domain/similarity.py).

An acceptance is a short user reply made of an assent ("ok", "好", "Sold.") and/or a deictic
commitment ("let's do that", "就装这个", "就这么办", "I'll take it") with no content of its own:
the recommendation it accepts is the first sentence of the previous reply that filled the
advice or thing slot of the previous question (or carried a recommendation cue). Pure.
"""

from __future__ import annotations

import re

from agentmem.domain.entities import find_entities
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.smalltalk import is_small_talk

__all__ = ["chosen_name", "fills_slot", "is_acceptance", "question_slots", "recommendation"]

_SLOT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "time",
        re.compile(
            r"\bwhen\b|\bwhat (?:time|day|date|month|year)\b|\bhow soon\b|什么时候|几点|哪天|哪一天|几号|何时|几月|多久",
            re.I,
        ),
    ),
    (
        "place",
        re.compile(
            r"\bwhere\b|\bwhich (?:city|country|place|town|area|restaurant|hotel|neighbou?rhood)\b|哪里|哪儿|在哪|去哪|什么地方|哪个(?:城市|地方|国家)",
            re.I,
        ),
    ),
    (
        "person",
        re.compile(r"\bwho(?:m|se)?\b|\bwhich (?:doctor|person|teacher|lawyer|one of them)\b|谁|哪位", re.I),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|long|old|far|big|often|tall)\b|\bwhat(?:'s| is) the (?:price|cost|number|size)\b|多少|几个|几岁|多大|多远|多长|多高",
            re.I,
        ),
    ),
    (
        "reason",
        re.compile(
            r"\bwhy\b|\bwhat caused\b|\bwhat(?:'s| is) the (?:reason|cause)\b|为什么|为何|怎么会|什么原因|啥原因|怎么回事",
            re.I,
        ),
    ),
    (
        "advice",
        re.compile(
            r"\bshould (?:i|we)\b|\bwhat should\b|\brecommend|\bsuggest|\bbest\b|\bbetter\b|\bis it worth\b|\bdo you think\b|"
            r"\b(?:which|what) (?:\w+ ){0,3}(?:should|to) (?:i |we )?(?:use|choose|pick|buy|get|take|go with|install)\b|"
            r"应该|该不该|要不要|推荐|建议|怎么选|选哪|用哪|买哪|装哪|哪个好|哪款|哪种好|值不值得|好不好|合适|适合",
            re.I,
        ),
    ),
    ("steps", re.compile(r"\bhow (?:do|can|should|to|would)\b|怎么(?!样)|如何|怎样", re.I)),
    ("thing", re.compile(r"\bwhat\b|\bwhich\b|什么|哪[个些款种家门位条只件本部台]", re.I)),
)
_TIME = lazy_compile(
    r"\d{1,2}[:：]\d{2}|\d+\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{4}\b|"
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july|"
    r"august|september|october|november|december|tomorrow|tonight|weekend|next (?:week|month|year)|"
    r"this (?:week|month|year|evening)|in \w+ (?:days|weeks|months))\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?\b|"
    r"[一二三四五六七八九十\d]+\s*(?:月|日|号|点|时|天后|周后)|明天|后天|今晚|下周|下个月|明年|周[一二三四五六日末]|星期[一二三四五六日天]|上午|下午|晚上|早上",
    re.I,
)
_NUMBER = lazy_compile(
    r"\d|[一二两三四五六七八九十百千万]+\s*(?:个|岁|元|块|米|公里|分钟|小时|天|次|本|件|台|位|人)", re.I
)
_REASON = lazy_compile(
    r"\bbecause\b|\bsince\b|\bdue to\b|\bso that\b|\bthat's why\b|因为|由于|所以|原因|导致|是为了", re.I
)
_STEPS = lazy_compile(
    r"^(?:first|then|next|finally|start|stop|open|run|use|try|add|set|go|click|install|make|put|mix|preheat|check|"
    r"keep|skip|avoid|limit|cut|get|take|turn|drink|eat|write|call|ask|book|choose|pick|buy|read|switch|restart)\b|"
    r"\b(?:first|then|step \d|you can|you could|you need to|you should)\b|^(?:先|然后|再|最后|打开|运行|使用|用|试试|把|将|点击|安装)|"
    r"步骤|可以先|需要先|第一步",
    re.I,
)
_ADVICE = lazy_compile(
    r"\b(?:i'd recommend|i recommend|i suggest|i'd suggest|i'd go with|go with|consider|you should|you could|your best bet|"
    r"best (?:option|choice|bet)|(?:a|the) (?:good|great|solid|safe|top|better) (?:fit|choice|option|pick|bet)|would (?:work|suit|fit)|(?:is|are) ideal|"
    r"fits? (?:your|you)|suits? (?:your|you)|works? (?:well|best)|recommended)\b|"
    r"建议|推荐|适合|可以(?:用|选|试试|考虑|装)|不妨|最好|首选|更合适|更好|比较好|就行|即可|选.{1,12}吧|用.{1,12}吧",
    re.I,
)


def question_slots(question: str) -> frozenset[str]:
    """The slots the question opens (see the module docstring); empty for a statement."""
    return frozenset(slot for slot, pattern in _SLOT_PATTERNS if pattern.search(question))


def _has_entity(sentence: str, kinds: frozenset[str] | None = None) -> bool:
    return any(kinds is None or e.kind in kinds for e in find_entities(sentence))


def fills_slot(slots: frozenset[str], sentence: str) -> bool:
    """Whether ``sentence`` carries a value for one of ``slots``; small talk never does."""
    if not slots or is_small_talk(sentence):
        return False
    checks = {
        "time": lambda: bool(_TIME.search(sentence)),
        "place": lambda: _has_entity(sentence, frozenset({"place", "name", "org"})),
        "person": lambda: _has_entity(sentence, frozenset({"person", "name"})),
        "number": lambda: bool(_NUMBER.search(sentence)),
        "reason": lambda: bool(_REASON.search(sentence)),
        "steps": lambda: bool(_STEPS.search(sentence.strip())) or bool(_ADVICE.search(sentence)),
        "advice": lambda: bool(_ADVICE.search(sentence)),
        "thing": lambda: _has_entity(sentence),
    }
    return any(checks[slot]() for slot in slots)


_ASSENT = (
    r"(?:ok(?:ay)?|sure|yes|yep|yeah|alright|all right|deal|sold|perfect|great|cool|fine|good|sounds good|"
    r"that works|works for me|agreed|done|makes sense|got it|thanks|thank you|"
    r"好(?:的|吧|呀|啊|嘞)?|行(?:吧|啊)?|可以|没问题|嗯+|对|就这样|成交|同意|听你的|那就这样|妥|ok)"
)
_COMMIT_EN = (
    r"(?:let'?s (?:do|go with|use|get|try|book|take) (?:that|it|this|that one|this one|them)|"
    r"i'?ll (?:take|do|go with|use|get|try|buy|book|install) (?:that|it|this|that one|this one|them)|"
    r"(?:go|going) with (?:that|it|this|that one|this one)|do it|let'?s do it|that'?s the one|i'?m in|book it|buy it)"
)
_COMMIT_ZH = (
    r"(?:(?:那)?就(?:用|装|选|买|要|订|定|按|照|去|吃|听)?(?:这|那|它)(?:个|款|家|种|样|么办|么做|么定)?(?:了|吧)?|"
    r"就它了?|就这么(?:办|做|定|干)(?:了|吧)?|听你的|按你说的(?:办|做)?|照(?:你说的|这个)(?:办|做)?|"
    r"(?:用|装|选|买|订)(?:这|那|它)(?:个|款|家)?(?:吧|了)?)"
)
_ACCEPT_RE = lazy_compile(
    rf"^(?:{_ASSENT}[\s,，.!！。~]*)*(?:{_COMMIT_EN}|{_COMMIT_ZH}|{_ASSENT})[\s,，.!！。~]*$", re.I
)
_COMMIT_RE = lazy_compile(rf"{_COMMIT_EN}|{_COMMIT_ZH}|\bsold\b|\bdeal\b|成交|听你的", re.I)


def is_acceptance(text: str, *, strict: bool = True) -> bool:
    """Whether the user's reply only accepts what was proposed ("就装这个", "Sold.", "ok let's do
    that", "好，就这么办"). ``strict``: a bare assent ("ok", "好的") does not count — it
    acknowledges as often as it accepts; it needs a commitment ("就…这个", "let's do that")."""
    bare = text.strip()
    if not bare or len(bare) > 40 or not _ACCEPT_RE.match(bare):
        return False
    return bool(_COMMIT_RE.search(bare)) if strict else True


def recommendation(question: str, sentences: list[str]) -> str | None:
    """The recommendation of the reply ``sentences`` to ``question``: the first sentence with a
    recommendation cue, or else the first one filling the question's thing/advice slot."""
    slots = question_slots(question) & frozenset({"advice", "thing", "steps", "place", "person"})
    for sentence in sentences:
        if not is_small_talk(sentence) and _ADVICE.search(sentence):
            return sentence
    for sentence in sentences:
        if slots and fills_slot(slots, sentence):
            return sentence
    return None


# The entity kinds that can name what a question asked for.
_CHOICE_KINDS = {
    "place": frozenset({"place", "name", "org"}),
    "person": frozenset({"person", "name"}),
    "thing": frozenset({"product", "name", "org"}),
    "advice": frozenset({"product", "name", "org", "place"}),
}


def chosen_name(question: str, recommended: str) -> str | None:
    """The name of what ``recommended`` proposes for ``question``: its first entity of a kind the
    question asked for (a place for where, a product or name for what/which), or None — then the
    choice is stored as the whole sentence. An entity used as a modifier is skipped
    ("成都的陈麻婆豆腐老店很有名" proposes a restaurant, not 成都)."""
    wanted = frozenset().union(*(_CHOICE_KINDS.get(s, frozenset()) for s in question_slots(question)))
    for entity in find_entities(recommended):
        at = recommended.find(entity.text) + len(entity.text)
        if recommended[at : at + 1] == "的" or recommended[at : at + 2] in {"'s", "’s"}:
            continue  # a modifier ("成都的…老店", "Boston's …"), not the thing proposed
        if entity.kind in wanted:
            return entity.text
    return None
