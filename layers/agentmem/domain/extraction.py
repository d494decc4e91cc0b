"""Rule extraction (docs/design.md "Two sources of facts"): distil a turn into candidate facts.

Two sources:
- the user's own statements (importance 0.7): every declarative sentence or first-person clause,
  with a key/value when a known pattern matches (name, residence, job, manager, trip, response
  style...), so a later statement of the same key can supersede it;
- the exchange (importance 0.5) and accepted recommendations: domain/exchange.py.

Questions, one-off requests to the assistant, greetings, acknowledgements and small talk
(domain/smalltalk.py) are not facts; entities come from domain/entities.py.
Input text is already redacted and normalised by the guards; this module is pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from agentmem.domain.answers import is_acceptance
from agentmem.domain.entities import entity_names
from agentmem.domain.keys import KeyMatch, match_keys
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import Confidence, Source
from agentmem.domain.reading.cues import joint_subject
from agentmem.domain.smalltalk import is_small_talk
from agentmem.domain.text import language, split_sentences, terms

USER_IMPORTANCE = 0.7
EXCHANGE_IMPORTANCE = 0.5
MAX_CONTENT_CHARS = 500
_GREETING_RE = lazy_compile(
    r"^(?:(?:hi|hello|hey|yo|ok(?:ay)?|well|so|oh|um+|uh+|yeah|yes|sure|great|cool|wow|haha|lol"
    r"|thanks|thank you|good (?:morning|afternoon|evening)|also|plus|anyway|by the way|btw|oh and|and|but)\b[\s,!.]*)+"
    r"|^(?:(?:你好|您好|嗨|哈喽|好的|好吧|嗯+|哦+|啊+|哈哈+|谢谢|对了|另外|其实|那个)[\s,，!！。~]*)+",
    re.IGNORECASE,
)
_ACK_RE = lazy_compile(
    r"^(?:ok(?:ay)?|got it|sure|thanks?(?: you)?|great|cool|nice|sounds good|noted|yes|no|"
    r"好的?|嗯+|明白了?|知道了|收到|谢谢|没问题|可以|行|对)[\s!！.。~]*$",
    re.IGNORECASE,
)
_QUESTION_START_EN = lazy_compile(
    r"^(?:what|what's|how|why|who|whom|whose|where|when|which|can|could|would|will|should|do|does|"
    r"did|is|are|am|was|were|have|has|may|shall)\b",
    re.IGNORECASE,
)
_QUESTION_ZH = lazy_compile(
    r"(?:什么|怎么|为什么|为何|哪里|哪儿|哪个|哪些|多少|几[个点岁次]|是否|是不是|能不能|可不可以|有没有|吗|呢)[\s?？。]*$|^(?:请问|谁|什么|怎么|为什么|哪)"
)
_REQUEST_EN = lazy_compile(
    r"^(?:please\s+)?(?:can you|could you|would you|will you|help me|let's|let me|write|draft|"
    r"make|create|give me|show me|tell me|explain|translate|summari[sz]e|find|search|check|look up|"
    r"generate|list|book|send|remind me)\b",
    re.IGNORECASE,
)
_REQUEST_ZH = lazy_compile(
    r"^(?:请|麻烦)?(?:你)?(?:帮我|帮忙|给我|替我|能不能|可以帮|写一|生成|翻译|总结|查一下|搜一下|看看|介绍一下|解释一下|推荐|"
    r"(?:帮我)?记(?:一下|住|下来?)|提醒我)"
)
_POLICY_RE = lazy_compile(
    r"(?:以后|今后|往后|从现在(?:开始|起)|每次|所有.{0,12}都|一律|务必|必须|永远|始终|总是|不要|别再|"
    r"\bfrom now on\b|\bgoing forward\b|\bin (?:the )?future\b|\balways\b|\bnever\b|\bmake sure\b|"
    r"\bplease (?:always|never|don't|do not)\b|\bdon't ever\b)",
    re.IGNORECASE,
)
_FIRST_PERSON_RE = lazy_compile(
    r"(?:^|[^a-z])(?:i|i'm|i've|i'd|i'll|my|me|mine|we|we're|our|us)(?:[^a-z]|$)|我|咱", re.IGNORECASE
)
# Update markers. Strong: an explicit change ("搬到", "推迟到", "switched to", "no longer").
# Weak: a present-tense cue ("现在", "now") that only counts together with a shared topic.
_UPDATE_STRONG_RE = lazy_compile(
    r"(?:搬到|搬去|搬家|改成|改为|改到|改用|换成|换到|换了|换人|换用|调整为|调整成|调到|调岗|跳槽|转到|转去|迁到|迁移|"
    r"推迟|延期|提前到|提到|压到|降到|涨到|升级|卖掉|不再|已经不|不用再|取消了|新的|最新|"
    r"\bno longer\b|\banymore\b|\bnot anymore\b|\bmoved\b|\bchanged?\b|\bswitched\b|\bswapped\b|"
    r"重装|重做|\breplaced\b|\bupgraded\b|\bmigrat(?:e|ed|ing)\b|\bre-?installed\b|\brebuilt\b|\bswitched\b|\bpostponed\b|\brescheduled\b|\bpushed (?:back|to|again)\b|"
    r"\bslipped\b|\binstead\b|\bchange of plans?\b|\bupdated?\b|\bleft\b|\bquit\b|\bsold\b|"
    r"\bnew\b|\bstarting (?:monday|tomorrow|next \w+ )?as\b|\bhanded in my notice\b|\bfrom now on\b|\bgoing forward\b)",
    re.IGNORECASE,
)
_UPDATE_WEAK_RE = lazy_compile(
    r"(?:现在|目前|如今|这阵子|\bnow\b|\bthese days\b|\bnowadays\b|\bcurrently\b)", re.IGNORECASE
)


def update_strength(text: str) -> int:
    """2 for an explicit change, 1 for a present-tense cue only, 0 otherwise."""
    if _UPDATE_STRONG_RE.search(text):
        return 2
    return 1 if _UPDATE_WEAK_RE.search(text) else 0


_CLAUSE_SPLIT_EN = lazy_compile(
    r"\s*;\s*|,?\s+(?:and|but|so)\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)|,\s+(?=(?:i|i'm|i've|my)\b)"
    r"|,?\s*\b(?:by the way|btw|oh and)\b,?\s+|,\s*(?:also|anyway|plus)\b,?\s+"
    r"|,\s+(?=(?:any|what|how|can|could|would|do|does|is|are|where|which|who|should)\b[^,]*\?\s*$)",
    re.IGNORECASE,
)
_ZH_MARKER = lazy_compile(r"^(?:对了|另外|顺便(?:说一下|提一下)?|还有|其实|话说|补充一下)[，,\s]*")
_VOCATIVE = lazy_compile(r"(?:,\s*|^)(?-i:[A-Z][a-z]+)(?=\s*[!.?,]*$)|(?<=[,!]\s)(?-i:[A-Z][a-z]+)(?=[!.,])")
_SOCIAL_WORDS = "absolutely amazing awesome beautiful bye care catch chat congrats congratulations cool cute day definitely doing excited exciting fantastic feel feels fun glad good gorgeous great happy hard hear hope incredible later look looks love lovely meet meeting nice pretty proud really see soon sorry sound sounds super sweet take talk thank thanks thing time totally tough true wonderful wow yeah"
# Stemmed like the terms they are compared with ("amazing" -> "amaz").
_SOCIAL_EN = frozenset(terms(_SOCIAL_WORDS))
_CLAUSE_SPLIT_ZH = lazy_compile(r"[，,；;]\s*")
_ZH_SUBJECTLESS = lazy_compile(
    r"^(?:今年|明年|去年|在|做|是|住|喜欢|不喜欢|爱|讨厌|有|养|负责|主要|目前|现在|也|还|平时|最近|正在|刚|已经|不|没|会|想|打算|准备|希望)"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact the write path may store, before classification and embedding."""

    content: str
    source: Source
    importance: float
    confidence: Confidence = Confidence.CONFIRMED
    key: str | None = None
    value: str | None = None
    category_hint: str | None = None
    update_strength: int = 0  # see update_strength()

    @property
    def is_update(self) -> bool:
        return self.update_strength > 0

    is_policy: bool = False
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = field(default_factory=tuple)


_ZH_INDIRECT_QUESTION = lazy_compile(
    r"^(?:请问|想问一下|想问问|我想知道|我想问|不知道)|(?:为什么|为何|怎么|怎样|如何|多少|哪里|哪儿|哪[个些家门款种位条只件本部台]|几点|是否|能不能|可不可以|有没有|是不是)"
)


def is_question(text: str) -> bool:
    stripped = text.strip()
    if not stripped:
        return False
    if stripped.endswith(("?", "？")):
        return True
    if language(stripped) == "zh":
        if _QUESTION_ZH.search(stripped):
            return True
        # no question mark: an interrogative word and no full stop ("这个包多少钱")
        return not stripped.endswith(("。", "！", "!")) and bool(_ZH_INDIRECT_QUESTION.search(stripped))
    if stripped.endswith((".", "!")):
        return False  # "Do not call me before 9am." / "May is my favourite month."
    return bool(_QUESTION_START_EN.match(stripped)) and not _FIRST_PERSON_RE.match(stripped[:3])


# "请记住我喜欢美式" / "remember that I'm vegan": the lead-in goes, the fact stays.
_REMEMBER_LEAD = lazy_compile(
    r"^(?:请|麻烦你?)?(?:帮我)?(?:记住|记一下|记下来?|记着)[：:，,\s]*|"
    r"^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[:,]?\s+(?=\S)",
    re.IGNORECASE,
)


def _strip_greeting(sentence: str) -> str:
    return _REMEMBER_LEAD.sub("", _GREETING_RE.sub("", sentence).strip(" ,，~;；")).strip(" ,，~;；")


def _is_filler(sentence: str) -> bool:
    """Acknowledgements and small talk: too short, or no content term beyond social words."""
    bare = sentence.strip(" .。!！~,，")
    if not bare or _ACK_RE.match(bare):
        return True
    if match_keys(bare):
        return False  # "Be concise." is short but says something
    if is_small_talk(bare) or is_acceptance(bare):
        return True  # small talk, or "就装这个" (extract_acceptance stores what it accepts)
    if language(bare) == "zh":
        return len(re.sub(r"[\s\W]", "", bare)) < 3
    if len(re.findall(r"[A-Za-z0-9]+", bare)) < 3:
        return True
    # A name addressed in small talk ("That's amazing, Nate!") carries no fact either.
    vocative = _VOCATIVE.sub(" ", bare)
    return len([t for t in terms(vocative) if t not in _SOCIAL_EN]) < 1


def _clauses(sentence: str) -> list[str]:
    """Split a sentence into standalone clauses: several first-person facts, a fact next to a
    request or a question, a fact after a discourse marker ("对了", "by the way")."""
    if language(sentence) == "zh":
        parts = [p.strip() for p in _CLAUSE_SPLIT_ZH.split(sentence) if p.strip()]
        if len(parts) < 2:
            return [sentence]
        first_person = sentence.lstrip().startswith(("我", "咱"))
        out = [parts[0]]
        for part in parts[1:]:
            marker = _ZH_MARKER.match(part)
            rest = part[marker.end() :] if marker else part
            if (marker and rest) or (rest.startswith(("我", "咱")) and len(rest) >= 4):
                out.append(rest)
            elif first_person and _ZH_SUBJECTLESS.match(rest):
                out.append("我" + rest)
            elif is_question(rest) or _REQUEST_ZH.match(rest):
                out.append(rest)
            elif match_keys(rest):
                out.append(rest)  # a clause with its own key ("回答别太啰嗦") is its own fact
            else:
                out[-1] = out[-1] + "，" + rest
        return out
    opening = joint_subject(sentence.lstrip())  # "Nadia and I broke up": one subject, not two clauses
    head, tail = sentence.lstrip()[:opening], sentence.lstrip()[opening:]
    parts = [p for p in _CLAUSE_SPLIT_EN.split(tail) if p and p.strip()]
    if head and parts:
        parts[0] = head + parts[0]
    return [p.strip() for p in parts] if len(parts) > 1 else [sentence]


def _finish(text: str) -> str:
    text = text.strip()
    if len(text) > MAX_CONTENT_CHARS:
        text = text[:MAX_CONTENT_CHARS].rstrip() + "…"
    return text


def _entities(text: str, keys: list[KeyMatch]) -> tuple[str, ...]:
    """Key values first, then the people, places, organisations and products of the text."""
    found = [k.value for k in keys if k.value and len(k.value) <= 40]
    seen: dict[str, None] = {}
    for item in (*found, *entity_names(text)):
        cleaned = item.strip(" .,，。")
        if cleaned and cleaned.casefold() not in {s.casefold() for s in seen}:
            seen[cleaned] = None
    return tuple(seen)[:8]


def extract_from_user(text: str) -> list[Candidate]:
    """Facts the user stated about themselves, their world, or their rules for the agent."""
    candidates: list[Candidate] = []
    for raw_sentence in split_sentences(text):
        sentence = _strip_greeting(raw_sentence)
        if not sentence:
            continue
        for clause in _clauses(sentence):
            clause = _strip_greeting(clause)
            if _is_filler(clause) or is_question(clause):
                continue
            if not _POLICY_RE.search(clause) and (_REQUEST_EN.match(clause) or _REQUEST_ZH.match(clause)):
                continue
            keys = match_keys(clause)
            content = clause
            hints = [k.hint for k in keys if k.hint]
            if hints:
                content = (
                    f"{clause.rstrip('。.!！')}（{'；'.join(hints)}）"
                    if language(clause) == "zh"
                    else (f"{clause.rstrip('.!')} ({'; '.join(hints)})")
                )
            primary = keys[0] if keys else None
            candidates.append(
                Candidate(
                    content=_finish(content),
                    source=Source.USER,
                    importance=USER_IMPORTANCE,
                    key=primary.key if primary else None,
                    value=primary.value if primary else None,
                    category_hint=primary.category if primary else None,
                    update_strength=update_strength(clause),
                    is_policy=bool(_POLICY_RE.search(clause)),
                    entities=_entities(clause, keys),
                )
            )
    return candidates


def is_statement(text: str) -> bool:
    """A clause worth keeping as a fact: not small talk, a question or a one-off request."""
    clause = _strip_greeting(text)
    if _is_filler(clause) or is_question(clause):
        return False
    return bool(_POLICY_RE.search(clause)) or not (_REQUEST_EN.match(clause) or _REQUEST_ZH.match(clause))


def attribute(cand: Candidate, speaker: str) -> Candidate:
    """A fact of a multi-party transcript (LoCoMo) that says who stated it: ``"Caroline: ..."``,
    with the speaker first among its entities (at most 8). A fact already attributed to
    ``speaker`` is returned as it is."""
    if cand.content.startswith(f"{speaker}:"):
        return cand
    return replace(cand, content=f"{speaker}: {cand.content}", entities=(speaker, *cand.entities)[:8])
