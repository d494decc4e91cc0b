"""Key/value patterns for the facts people state most (docs/design.md "Two sources of facts":
{"姓名":"小明"}
{"城市":"深圳"} {"回答偏好":"简洁"}), in Chinese and English.

A key lets a later statement of the same key supersede the earlier one (a user has one current
residence, one manager, one preferred answer style); multi-valued keys (allergies, likes) never
supersede each other. ``hint`` is a normalised restatement appended to the memory so that a
colloquial "别太啰嗦" is also found, and rendered, as "回答偏好：简洁".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmem.domain.lazy_re import LazyPattern, Regex, lazy_compile


@dataclass(frozen=True, slots=True)
class KeyMatch:
    key: str
    value: str
    category: str
    single_valued: bool = True
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class _Rule:
    key: str
    pattern: Regex
    category: str
    single_valued: bool = True
    value: str | None = None  # fixed value (style rules); else group "v"
    hint_zh: str | None = None
    hint_en: str | None = None


_V_ZH = r"(?P<v>[\u4e00-\u9fffA-Za-z0-9·\-]{1,16}?)"
_V_EN = r"(?P<v>(?-i:[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*){0,3}))"
_V_EN_ANY = r"(?P<v>[A-Za-z][\w'\- ]{1,40}?)"
_END = r"(?=[，,。.!！;；\s]|$|了|啦)"


def _r(pattern: str) -> LazyPattern:
    return lazy_compile(pattern, re.IGNORECASE)


_RULES: tuple[_Rule, ...] = (
    # identity
    _Rule(
        "name",
        _r(
            r"(?:我叫|我的名字(?:是|叫)|(?:叫|喊|称呼)我(?:的?名字)?)"
            + r"(?P<v>[\u4e00-\u9fffA-Za-z0-9·\-]{1,16}?)"
            + r"(?=就行|就好|就可以|吧|好了|[，,。.!！;；\s]|$|了|啦)"
        ),
        "identity",
    ),
    _Rule(
        "name",
        re.compile(r"(?:[Mm]y name is|[Cc]all me|I'm|I am)\s+" + _V_EN + r"(?=[\s,.!;]|$)"),
        "identity",
    ),
    _Rule(
        "residence",
        _r(
            r"(?:我(?:现在|目前)?(?:住在|住|家在|定居在?)|我(?:\S{0,4})?(?:搬到|搬去|搬家到)了?)"
            + _V_ZH
            + r"(?=[，,。.!！;；\s]|$|了|啦|住)"
        ),
        "identity",
    ),
    _Rule(
        "residence",
        _r(
            r"\bI(?:'ve| have)?\s*(?:(?:now|just|recently|finally|already|officially)\s+)*(?:live|lived|am living|'m living|moved|relocated|am based|'m based)\s+(?:in|to)\s+(?:the\s+)?"
            + r"(?P<v>(?-i:[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}))"
        ),
        "identity",
    ),
    _Rule(
        "residence",
        re.compile(
            r"\b(?:[Ww]e(?:'re| are)|I(?:'m| am))\s+(?:now\s+)?(?:living\s+|based\s+)?in\s+(?P<v>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2})\s+now\b|\b(?:I|[Ww]e)\s+(?:rent|own|bought|share)\s+(?:a|an|the|our|my)\s+(?:[\w\-]+\s+){0,3}(?:flat|apartment|house|place|home|studio|room)\s+in\s+(?P<v2>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2})"
        ),
        "identity",
    ),
    _Rule(
        "occupation",
        _r(
            r"\bI\s*(?:work|am working|'m working)\s+as\s+(?:an?\s+)?(?P<v>[a-z][a-z \-]{2,40}?)(?=\s+(?:at|in|for)\b|[,.;!]|$)"
        ),
        "identity",
    ),
    _Rule(
        "occupation",
        _r(
            r"\b(?:I(?:'m| am)|starting (?:\w+ )?as)\s+(?:an?\s+)(?P<v>(?:[a-z\-]+\s+){0,3}(?:engineer|developer|designer|teacher|nurse|doctor|manager|student|scientist|analyst|consultant|writer|lawyer|accountant|researcher|architect|artist|programmer|counselor|counsellor|chef|cook|officer|assistant|agent|specialist|administrator|founder|owner|translator|sre|pharmacist|electrician|plumber|driver|journalist|editor|photographer|therapist|paramedic|librarian|mechanic|tutor|professor|intern))\b"
        ),
        "identity",
    ),
    _Rule(
        "occupation",
        _r(
            r"我(?:是|是一名|是一个|做|从事|在\S{1,12}?做)(?P<v>[\u4e00-\u9fffA-Za-z]{0,8}?(?:工程师|开发|程序员|设计师|老师|教师|医生|护士|经理|学生|研究员|分析师|顾问|律师|会计|产品经理|客服|销售|运营|编辑|记者|架构师|后端|前端|算法)\S{0,4}?)"
            + _END
        ),
        "identity",
    ),
    _Rule(
        "occupation",
        _r(
            r"\b(?:starting|started|start|I now work|I work|working)\s+(?:\w+\s+)?as\s+(?:an?\s+|the\s+)?(?P<v>(?:[a-z\-]+\s+){0,2}[a-z\-]+?)(?=\s+(?:at|in|for|on)\b|[,.;!]|$)"
        ),
        "identity",
    ),
    _Rule(
        "occupation",
        _r(r"\bI(?:'m| am)\s+(?:an?|the)\s+(?P<v>(?:[a-z\-]+\s+){0,2}[a-z\-]+?)(?=\s+(?:at|in|for|on)\b)"),
        "identity",
    ),
    _Rule(
        "employer",
        re.compile(
            r"\bI\s*(?:work|am working|'m working|work as [\w \-]+?)\s+(?:at|for)\s+(?P<v>(?:an?\s+)?[A-Za-z][\w&\-]*(?:\s+[A-Z][\w&\-]*){0,3})"
        ),
        "identity",
    ),
    _Rule(
        "manager",
        _r(
            r"\bmy\s+(?:new\s+|current\s+)?(?:manager|boss|supervisor|team lead|lead)\s+is\s+(?:now\s+)?"
            + _V_EN
        ),
        "identity",
    ),
    _Rule(
        "manager",
        _r(
            r"我的?(?:新|现在的)?(?:经理|领导|上司|老板|主管|leader)(?:现在)?(?:是|换成了?|变成了?)"
            + _V_ZH
            + _END
        ),
        "identity",
    ),
    _Rule("age", _r(r"我(?:今年)?(?P<v>\d{1,3})岁"), "identity"),
    _Rule("age", _r(r"\bI(?:'m| am)\s+(?P<v>\d{1,3})\s*(?:years old|yo)\b"), "identity"),
    _Rule("birthday", _r(r"(?:我的)?生日是?(?P<v>\d{1,2}月\d{1,2}[日号])"), "identity"),
    _Rule("birthday", _r(r"\bmy birthday is (?:on )?(?P<v>[A-Za-z]+ \d{1,2}|\d{1,2} [A-Za-z]+)"), "identity"),
    # plans
    _Rule("trip", _r(r"\btrip\b.{0,30}?\bto\s+(?P<v>(?-i:[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}))"), "fact"),
    _Rule("trip", _r(r"(?:去|到)(?P<v>[\u4e00-\u9fff]{2,8}?)(?:旅行|旅游|玩|度假|出差)"), "fact"),
    # preferences (multi-valued)
    _Rule("allergy", _r(r"(?:对(?P<v>[\u4e00-\u9fff]{1,8})过敏)"), "preference", single_valued=False),
    _Rule(
        "allergy",
        _r(r"\ballergic to\s+" + _V_EN_ANY + r"(?=[,.;!]|\s+and\b|$)"),
        "preference",
        single_valued=False,
    ),
    _Rule(
        "diet",
        _r(r"(?P<v>吃素|素食|纯素|清真|生酮|无麸质)"),
        "preference",
        hint_zh="饮食：{v}",
        hint_en="diet: {v}",
    ),
    _Rule(
        "diet",
        _r(
            r"\b(?:I(?:'m| am)|I(?:'ve| have) been|I keep|I eat|I went|I've gone|I have gone|I'm now|we're|we are)\s+(?:now\s+|a\s+|fully\s+|strictly\s+)*(?P<v>vegetarian|vegan|pescatarian|kosher|halal|keto|gluten[- ]free|plant[- ]based)\b"
        ),
        "preference",
        hint_zh="饮食：{v}",
        hint_en="diet: {v}",
    ),
    # answer style ("别写太啰嗦" -> {"回答偏好":"简洁"})
    _Rule(
        "response_style",
        _r(
            r"(?:别|不要|不用|少)(?:写|说|回答)?(?:得)?太?(?:啰嗦|啰唆|罗嗦|冗长|长)|(?:简洁|简短|精简|言简意赅)(?:一点|一些|些)?|直接(?:说|给)?(?:结论|重点)"
        ),
        "preference",
        value="concise",
        hint_zh="回答偏好：简洁",
        hint_en="answer style: concise",
    ),
    _Rule(
        "response_style",
        _r(
            r"\b(?:keep (?:it|answers|responses|replies) (?:short|brief|concise)|be (?:brief|concise|succinct)|(?:short|brief|concise|succinct) (?:answers|responses|replies)|(?:less|not so|don't be so|not too) (?:verbose|wordy|long[- ]winded)|get to the point|tl;?dr)\b"
        ),
        "preference",
        value="concise",
        hint_zh="回答偏好：简洁",
        hint_en="answer style: concise",
    ),
    _Rule(
        "response_style",
        _r(
            r"(?:详细|具体|展开)(?:一点|一些|些|地?(?:说|回答|解释))|\b(?:more detail(?:ed)?|in detail|detailed (?:answers|explanations|responses)|explain thoroughly)\b"
        ),
        "preference",
        value="detailed",
        hint_zh="回答偏好：详细",
        hint_en="answer style: detailed",
    ),
    _Rule(
        "answer_language",
        _r(r"(?:用|使用)(?P<v>简体中文|繁体中文|中文|英文|英语|日文|日语)(?:回答|回复|写|交流)?"),
        "policy",
    ),
    _Rule(
        "answer_language",
        _r(
            r"\b(?:answer|reply|respond|write|talk)(?: to me)? in (?P<v>English|Chinese|Mandarin|Japanese|Spanish|French|German|Korean)\b"
        ),
        "policy",
    ),
)


_TRAILING_WORDS = lazy_compile(r"(?:\s+(?:too|also|as well|either|now|then)|也)+$", re.IGNORECASE)
_LEADING_MEASURE = lazy_compile(r"^(?:一名|一个|一位|一枚|个|名|位)")


def _clean(value: str) -> str:
    value = value.strip(" ，,。.!！;；的了啦").strip()
    value = _TRAILING_WORDS.sub("", value).strip()
    return _LEADING_MEASURE.sub("", value).strip()


def match_keys(text: str) -> list[KeyMatch]:
    """Every key pattern the text states, in rule order, one match per key."""
    zh = bool(re.search(r"[\u4e00-\u9fff]", text))
    matches: list[KeyMatch] = []
    seen: set[str] = set()
    for rule in _RULES:
        if rule.key in seen:
            continue
        found = rule.pattern.search(text)
        if not found:
            continue
        raw = found.groupdict().get("v") or found.groupdict().get("v2") or ""
        value = rule.value if rule.value is not None else _clean(raw)
        if not value or value.casefold() in {"a", "an", "the", "not", "so", "very", "just", "really"}:
            continue
        template = rule.hint_zh if zh else rule.hint_en
        hint = template.format(v=value) if template else None
        matches.append(KeyMatch(rule.key, value, rule.category, rule.single_valued, hint))
        seen.add(rule.key)
    return matches


SINGLE_VALUED_KEYS = frozenset(r.key for r in _RULES if r.single_valued)
MULTI_VALUED_KEYS = frozenset(r.key for r in _RULES if not r.single_valued)
KEY_CATEGORY = {r.key: r.category for r in reversed(_RULES)}  # a key's category (first rule wins)
