"""Which attribute a question asks for, and whether a memory states it: the read side of
:mod:`agentmem.domain.attributes` (docs/recall.md, "Slot channel").

"Which city do I live in?" and "We relocated to Denver last month" share no word, and a small
embedding model scores them as unrelated; yet the question asks for the user's ``residence`` and
the memory states it (:func:`~agentmem.domain.attributes.infer_all`, the same rules that decide
updates). :func:`asked` reads the question's attribute from its wording (zh and en): the predicate
or the object it asks about ("where … live", "who … manager", 住在哪, 在哪家公司, 什么车), and whom
it is about ("my sister", "Caroline", 我女儿; the user otherwise). :func:`states` tells whether a
memory gives a value of one of those attributes for the same subject. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmem.domain.attributes import infer_all, role_holder, same_subject, subject
from agentmem.domain.lazy_re import LazyPattern, lazy_compile

__all__ = ["Asked", "asked", "states"]


def _r(pattern: str) -> LazyPattern:
    return lazy_compile(pattern, re.IGNORECASE)


# What a question's wording asks for, attribute by attribute (the names of attribute_rules).
_ASKS: tuple[tuple[str, LazyPattern], ...] = (
    (
        "residence",
        _r(
            r"\bwhere\b.{0,30}\b(?:live|living|lives|based|moved|relocated|settled|home)\b|"
            r"\bwhich (?:city|town|country|neighbou?rhood|area|state)\b.{0,30}\b(?:live|living|lives|based|in)\b|"
            r"\bhome ?town\b|住在?哪|住哪|家在哪|在哪(?:个|座)?(?:城市|国家|个区)|搬到(?:了)?哪|定居在?哪"
        ),
    ),
    (
        "employer",
        _r(
            r"\bwhere\b.{0,30}\bwork(?:s|ing)?\b(?!\s+out)|\bwhich (?:company|firm|employer|startup)\b|"
            r"\bemployer\b|\bwho\b.{0,20}\bwork(?:s|ing)? for\b|"
            r"在哪(?:家|个)?(?:公司)?(?:上班|工作|任职)|哪(?:家|个)公司|在什么公司"
        ),
    ),
    ("manager", _r(r"\b(?:manager|boss|supervisor|report(?:s|ing)? to)\b|领导|上司|老板|主管|经理|汇报")),
    (
        "partner",
        _r(
            r"\b(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?|dating|married to|marrying)\b|"
            r"男朋友|女朋友|男友|女友|对象|老公|老婆"
        ),
    ),
    ("vehicle", _r(r"\b(?:car|cars|vehicle|drive|drives|driving)\b|什么车|哪(?:辆|款)车|开的(?:是)?什么")),
    ("title", _r(r"\b(?:job title|title|position|role|rank)\b|职位|职称|头衔|什么职")),
    (
        "school",
        _r(r"\b(?:school|college|university|attend|attends|kindergarten)\b|学校|上学|读书|大学|幼儿园"),
    ),
    ("diet", _r(r"\b(?:diet|vegetarian|vegan|eat meat)\b|吃素|素食|饮食")),
    ("salary", _r(r"\b(?:salary|earn|earns|paid|pay)\b|工资|月薪|年薪|薪水|收入")),
    ("rent", _r(r"\brent\b|房租|租金")),
    ("weight", _r(r"\bweigh|体重")),
    ("phone", _r(r"\bphone\b|手机")),
    ("computer", _r(r"\b(?:laptop|computer)\b|电脑|笔记本")),
    ("editor", _r(r"\b(?:editor|ide)\b|编辑器")),
    ("database", _r(r"\bdatabase\b|数据库")),
    ("bank", _r(r"\bbank\b|银行")),
    ("gym", _r(r"\bgym\b|健身房|健身")),
    ("commute", _r(r"\bcommute\b|get to work|通勤|怎么上班|上班怎么")),
    ("internet", _r(r"\binternet\b|broadband|宽带")),
    ("doctor", _r(r"\b(?:doctor|gp)\b|医生")),
    ("coffee", _r(r"\bcoffee\b|咖啡")),
    ("lodging", _r(r"\b(?:hotel|staying)\b|酒店|住哪家")),
    ("blog", _r(r"\bblog\b|博客")),
    ("input_method", _r(r"输入法|input method")),
    ("pet_name", _r(r"\b(?:dog|cat|pet)(?:'s)? name\b|(?:狗|猫)叫什么")),
    ("hobby", _r(r"\b(?:hobby|hobbies|for fun|free time|spare time)\b|爱好|业余|空闲时间|平时喜欢")),
    ("language", _r(r"\blanguages?\b|\bspeak\b|什么语|哪(?:种|些)语言")),
    ("pet", _r(r"\bpets?\b|宠物|养了什么")),
    ("allergy", _r(r"\ballerg|过敏")),
    ("instrument", _r(r"\binstruments?\b|乐器")),
    ("child", _r(r"\b(?:kids?|children|sons?|daughters?)\b|孩子|儿子|女儿")),
)
_QUESTION = _r(r"[?？]\s*$|^(?:who|what|which|where|when|how|do|does|did|is|are)\b|谁|什么|哪|吗|呢|多少|几")
_WH = _r(r"^(?:who|what|which|where|when|how|why)(?:'s|\s+(?:is|are|was|were|do|does|did|has|have))?\s+")
_NAME = lazy_compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_NAMES = frozenset(
    {"What", "Which", "Where", "When", "Who", "How", "Does", "Did", "The", "And", "Why", "Would", "Could"}
)


@dataclass(frozen=True, slots=True)
class Asked:
    """A question's attributes (``names``) and whom it asks about (a :func:`subject` value, or a
    bare name such as ``"Caroline"`` for a transcript speaker)."""

    names: frozenset[str]
    about: str


def asked(query: str) -> Asked | None:
    """The attributes ``query`` asks for, or None when it is no question or asks for none."""
    text = query.strip()
    if not text or not _QUESTION.search(text):
        return None
    names = frozenset(name for name, pattern in _ASKS if pattern.search(text))
    if not names:
        return None
    about = subject(_WH.sub("", text))
    for name in names:  # "who is my manager?" asks about the user's manager
        about = role_holder(about, name)
    if about == "self":
        named = [n for n in _NAME.findall(text) if n not in _NOT_NAMES]
        if named and not re.search(r"\b(?:I|my|me|mine)\b|我", text):
            about = named[0]  # "Where does Caroline live?": a person, not the user
    return Asked(names, about)


def states(content: str, question: Asked) -> bool:
    """Whether ``content`` gives a value of an attribute ``question`` asks for, about the same
    subject (a speaker's "I" is that speaker)."""
    for attribute in infer_all(content):
        if attribute.name not in question.names or not attribute.value:
            continue
        if _same(attribute.subject, question.about):
            return True
    return False


def _same(stated: str, about: str) -> bool:
    if "/" not in about and ":" not in about and about not in {"self"} and about[:1].isupper():
        speaker, _, rest = stated.rpartition("/")
        if speaker:  # "Caroline: I live in …" answers about Caroline
            return speaker == about and rest == "self"
        return stated.endswith(f":{about}")  # "my sister Ana lives in …" answers about Ana
    return same_subject(stated, about) or stated.rpartition("/")[2] == about == "self"
