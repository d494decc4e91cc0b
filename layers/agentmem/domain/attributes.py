"""Attribute inference for updates that generalise (docs/updates.md): from a fact's predicate and the
type of its object, infer *who* it is about, *which attribute* it states and *its value*, in
Chinese and English, so that a later fact about the same subject and the same single-valued
attribute with a different value supersedes the earlier one whether or not it says "changed to".

- The attribute comes from the object's type (a car brand or the classifier 辆 -> vehicle, a date
  next to a named event -> that event's date, a sum next to "rent" -> rent) or from the predicate
  ("live in", "work at", "report to", "最喜欢的X是", "归…管").
- Multi-valued attributes (hobbies, children, pets, languages, friends, allergies, places visited,
  skills, instruments) are recognised first and never supersede; neither does a fact about a
  relation that has many members (a friend, a colleague) unless both facts name the same person.
- ``evidence`` says how strongly the turn itself signals a change: 2 for a change verb (sold,
  moved, slipped, 推迟, 换了, 不再 …) or a reference to the old value ("the old one", 原来的),
  1 for a present-tense cue (now, 现在), 0 for none. A value the rules could not pin down ("")
  never supersedes on its own: doubtful -> keep both.

:func:`same_attribute_conflict` is the decision used by the write path
(:mod:`agentmem.domain.conflict`) and by the read-time net (:func:`stale_pairs`: two active
memories recalled together about the same attribute with different values -> the newer
user-stated one wins, the older is down-ranked and labelled). Pure, but for the readings it keeps
(:func:`known_reading`). The module runs over 400 lines: the reading of a fact and the decisions on
it stay together.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from agentmem.domain.attribute_rules import (
    AMOUNT_CUES,
    ASKED,
    CHANGE,
    CHANGE_AMOUNT_RE,
    CHOICE,
    DATE_RE,
    DAYS,
    DESTINATION_ZH,
    DISPOSAL,
    ENTITY_CUES,
    ENTITY_RULES,
    EVENT_CANON,
    EVENT_EN,
    EVENT_ZH,
    INTENT,
    MONTHS,
    MULTI,
    MULTI_OVERRIDES,
    NEGATED_BEFORE,
    NOT_QUALIFIER,
    OLD_REFERENCE,
    PHRASE_BREAK,
    PLURAL_EVENTS,
    RELATIVE_RE,
    ROLES,
    RULE_CUES,
    VISITED,
    WEAK,
)
from agentmem.domain.lazy_re import LazyPattern, Regex, lazy_compile
from agentmem.domain.models import MemoryRecord, Source
from agentmem.domain.text import normalize

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Attribute:
    subject: str  # "self", a relation ("sister", "女儿"), or "event"
    name: str  # "vehicle", "residence", "event:launch", "favourite:band", "hobby", ...
    value: str  # normalised value; "" when the rules could not pin it down
    single: bool  # single-valued: one current value per subject
    evidence: int = 0  # 2 change verb / old-value reference, 1 present-tense cue, 0 none

    @property
    def key(self) -> str:
        """A storable key: the attribute, prefixed by the subject unless it is the user or an event."""
        return self.name if self.subject in {"self", "event"} else f"{self.subject}.{self.name}"


def evidence_of(text: str) -> int:
    """How strongly ``text`` itself signals a change (see the module docstring)."""
    if OLD_REFERENCE.search(text) or CHANGE.search(text):
        return 2
    return 1 if WEAK.search(text) else 0


def _r(pattern: str) -> LazyPattern:
    return lazy_compile(pattern, re.IGNORECASE)


# ------------------------------------------------------------------------------ subjects
_RELATIONS_EN = (
    "sister|brother|son|daughter|wife|husband|girlfriend|boyfriend|fiancee?|mom|mum|mother|dad|father|"
    "friend|boss|colleague|coworker|parents?|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|"
    "neighbou?r|roommate|dog|cat|kid"
)
_RELATION_EN = _r(rf"\b(?:my|our)\s+(?:\w+\s+)?({_RELATIONS_EN})(?:'s)?\b(?:\s+(?-i:([A-Z][a-z]+)))?")
_RELATIONS_ZH = (
    "女儿|儿子|老婆|老公|妻子|丈夫|太太|妈妈|爸爸|母亲|父亲|姐姐|妹妹|哥哥|弟弟|朋友|同事|爷爷|奶奶|外公|外婆|"
    "室友|邻居|猫|狗"
)
_RELATION_ZH = lazy_compile(rf"(?:^|[，,。；\s]|我|我们|的|家|给|把|大|小|二)({_RELATIONS_ZH})(?!子)")
_MANY_MEMBERS = frozenset(
    {"friend", "colleague", "coworker", "cousin", "neighbour", "neighbor", "kid", "朋友", "同事", "邻居"}
    | {"someone", "world"}  # the statement reader's unnamed third party, and the world at large
)
_NAMED = _MANY_MEMBERS | {"son", "daughter", "sister", "brother", "dog", "cat"}  # "my son Leo", "my son Max"
_LEADING_NAME = lazy_compile(r"^(?-i:([A-Z][a-z]+))(?:'s|\s+(?:is|was|has|goes|attends|lives|works))\b")
_RELATION_CANON = {
    "mum": "mom",
    "mother": "mom",
    "father": "dad",
    "neighbor": "neighbour",
    "coworker": "colleague",
    "母亲": "妈妈",
    "父亲": "爸爸",
    "妻子": "老婆",
    "太太": "老婆",
    "丈夫": "老公",
    "parents": "parent",
}


_SPEAKER = lazy_compile(r"^((?-i:[A-Z][\w'\-]*(?: [A-Z][\w'\-]*)?)|[\u4e00-\u9fff]{2,4}):\s+")


def subject(text: str) -> str:
    """Who ``text`` is about: "self" or a relation ("sister", "friend:Sam", "女儿")."""
    speaker = _SPEAKER.match(text)
    if speaker:  # "Caroline: I live in ..." (a multi-party transcript) is about Caroline
        return f"{speaker.group(1).strip()}/{subject(text[speaker.end() :])}"
    body = text.strip()
    found = _RELATION_EN.search(body)
    lead = (
        found is not None
        and found.start() <= 25
        and not re.match(r"^(?:I|We)\s+(?:live|moved|work|am|'m)", body, re.IGNORECASE)
    )
    if found and lead:
        rel = _RELATION_CANON.get(found.group(1).lower(), found.group(1).lower())
        return f"{rel}:{found.group(2)}" if found.group(2) and rel in _NAMED else rel
    zh = _RELATION_ZH.search(body[:8])
    if zh:
        rel = _RELATION_CANON.get(zh.group(1), zh.group(1))
        name = re.match(r"[\u4e00-\u9fff]{2,3}?(?=在|是|叫|住|做|去|上)", body[zh.end() :])
        return f"{rel}:{name.group(0)}" if name and rel in _NAMED else rel
    named = _LEADING_NAME.match(body)
    if named and named.group(1) not in {"The", "This", "That", "Our", "My", "It", "There", "Here"}:
        return f"?:{named.group(1)}"  # "Arlo's in Year 4": a person named, relation unknown
    return "self"


def role_holder(who: str, attribute: str) -> str:
    """ "My boss is Karen" is about the user's manager, not about the boss: a relation that names
    the attribute itself gives the subject back to the user (or the speaker)."""
    speaker, _, relation = who.rpartition("/")
    if relation.partition(":")[0] in ROLES.get(attribute, ()):
        return f"{speaker}/self" if speaker else "self"
    return who


def same_subject(a: str, b: str) -> bool:
    """Whether two :func:`subject` values name the same one: the same relation (and the same
    name where both are named), or the same name where one of them gives no relation."""
    speaker_a, _, a = a.rpartition("/")
    speaker_b, _, b = b.rpartition("/")
    if speaker_a != speaker_b:
        return False
    rel_a, _, name_a = a.partition(":")
    rel_b, _, name_b = b.partition(":")
    if name_a and name_b:
        return name_a == name_b and (rel_a == rel_b or "?" in {rel_a, rel_b})
    return rel_a == rel_b and rel_a not in _MANY_MEMBERS  # "my friend": which one?


def _canon_value(value: str) -> str:
    value = normalize(value).strip(" .,，。!！;；的了")
    value = re.sub(r"^(?:a|an|the|my|our)\s+", "", value)
    return re.sub(r"\s+", " ", value)


def _event(text: str) -> Attribute | None:
    found = EVENT_EN.search(text) or EVENT_ZH.search(text)
    if found is None:
        return None
    noun = found.group(1).lower()
    noun = EVENT_CANON.get(noun, noun)
    relative = RELATIVE_RE.search(text)
    date = DATE_RE.findall(text)
    if relative:
        value = "shift:" + _canon_value(relative.group(0))
    elif date:
        value = " ".join(_canon_value(d) for d in date)
    else:
        dest = DESTINATION_ZH.search(text) if noun in {"国庆", "春节", "五一", "中秋"} else None
        value = _canon_value(dest.group("v")) if dest else ""
    name = f"event:{noun}"
    if noun in PLURAL_EVENTS:
        # "my flight to Tokyo" and "my flight to Paris" are two events: name the qualifier.
        before = re.findall(rf"(\w+)(?:'s)?\s+{re.escape(found.group(1))}", text, re.IGNORECASE)
        quals = {w.lower() for w in before if w.lower() not in NOT_QUALIFIER}
        quals |= {
            w.lower()
            for w in re.findall(r"(?<!^)(?<![.!?]\s)\b(?-i:[A-Z][a-z]{2,})\b", text)
            if not re.fullmatch(MONTHS + "|" + DAYS, w, re.IGNORECASE)
        }
        if quals:
            name += "@" + ",".join(sorted(quals))
    return Attribute("event", name, value, True, evidence_of(text))


def _amount_shift(text: str, who: str) -> Attribute | None:
    """A relative change of an amount ("raised my rent by $150", "瘦了5斤", "房租涨了500")."""
    shift = CHANGE_AMOUNT_RE.search(text)
    if shift is None:
        return None
    for name, cue in AMOUNT_CUES:
        if cue.search(text):
            return Attribute(who, name, "shift:" + _canon_value(shift.group(0)), True, 2)
    return None


def _multi(text: str) -> Attribute | None:
    for name, pattern in MULTI:
        if pattern.search(text):
            return Attribute(subject(text), name, _canon_value(text), False, evidence_of(text))
    return None


def _phrase_of(body: str, found: re.Match[str]) -> str:
    """The phrase of ``body`` around a match: from the previous phrase break to the match's end."""
    return PHRASE_BREAK.split(body[: found.start()])[-1] + found.group(0)


def _stated(pattern: Regex, body: str) -> re.Match[str] | None:
    """The match of ``pattern`` that states the current value: after "sold my Civic and bought a
    Tesla" the last one; a value only named as disposed of ("I traded in my Subaru") is none."""
    matches = list(pattern.finditer(body))
    current = [
        m
        for m in matches
        if not DISPOSAL.search(PHRASE_BREAK.split(body[: m.start()])[-1])
        and not DISPOSAL.match(body, m.end())  # "朗逸卖了": disposed of, said after the value
    ]
    if not current:
        return None
    return current[-1] if len(current) < len(matches) else current[0]


def infer(text: str) -> Attribute | None:
    """The first (subject, attribute, value) ``text`` states (see :func:`infer_all`), or None."""
    found = infer_all(text)
    return found[0] if found else None


KNOWN_READINGS = 32768
"""Texts whose reading :func:`infer_all` keeps (computed here, or stored with a memory and handed
over by :func:`known_reading`); the oldest go first."""
_KNOWN: dict[str, tuple[Attribute, ...]] = {}
_KNOWN_LOCK = threading.Lock()


def _keep(text: str, reading: tuple[Attribute, ...]) -> None:
    with _KNOWN_LOCK:
        if text not in _KNOWN and len(_KNOWN) >= KNOWN_READINGS:
            del _KNOWN[next(iter(_KNOWN))]
        _KNOWN[text] = reading


def forget_readings() -> None:
    """Forget every kept reading (a benchmark that times reading texts as if new)."""
    with _KNOWN_LOCK:
        _KNOWN.clear()
    _infer_all.cache_clear()


def known_reading(text: str, reading: tuple[Attribute, ...]) -> None:
    """Take ``reading`` as :func:`infer_all` of ``text`` from now on. For a store that keeps each
    memory's reading with it (the embedded store does): reading a memory back then runs none of
    the rules' ~60 patterns again, which was most of what a context call or a turn's conflict
    check spent on memories it had not met before. The caller vouches that ``reading`` came from
    these same rules (the store keeps a fingerprint of their source with it)."""
    _keep(text, reading)


def infer_all(text: str) -> tuple[Attribute, ...]:
    """Every (subject, attribute, value) ``text`` states, one per attribute, most specific first:
    a dated event, a relative change of an amount, then the single-valued attributes; the
    multi-valued reading alone when nothing single-valued outranks it. Empty when none is found.
    A choice that answers a question ("I chose Hugo (Should I move my blog to Ghost or Hugo?)",
    :func:`agentmem.domain.exchange.extract_acceptance`) fills the question's slot. The last
    :data:`KNOWN_READINGS` readings are kept."""
    found = _KNOWN.get(text)
    if found is None:
        found = _read(text)
        _keep(text, found)
    return found


def _read(text: str) -> tuple[Attribute, ...]:
    asked = ASKED.search(text)
    if asked is None:
        return _infer_all(text, wish=False)
    main = text[: asked.start()].strip()
    own = _infer_all(main, wish=False)
    choice = CHOICE.match(main)
    if own or choice is None:
        return own
    value = _canon_value(choice.group("c"))
    return tuple(
        Attribute(a.subject, a.name, value, True, 2)
        for a in _infer_all(asked.group(1), wish=True)
        if a.single
    )


@lru_cache(maxsize=4096)
def _infer_all(text: str, *, wish: bool) -> tuple[Attribute, ...]:
    """:func:`infer_all` of one statement; ``wish``: read a wish or a question as if stated."""
    body = re.sub(r"\s*[（(][^）)]*[：:][^）)]*[）)]\s*$", "", text).strip()  # an appended key hint
    who = subject(body)
    evidence = evidence_of(body)
    out: list[Attribute] = []
    event = _event(body)
    if event is not None and event.value:
        out.append(event)
    shift = _amount_shift(body, who)
    if shift is not None:
        out.append(shift)
    names = {a.name for a in out}
    for name, pattern in ENTITY_RULES:
        cue = RULE_CUES.get(name)
        if cue is not None and not cue.search(body):
            continue
        found = _stated(pattern, body)
        if not found:
            continue
        groups = found.groupdict()
        raw = groups.get("v") or groups.get("v2") or ""
        if not raw.strip():
            continue
        if not wish and INTENT.search(_phrase_of(body, found)):
            continue  # "想换个输入法", "thinking of moving to Berlin": a wish, not the value
        if NEGATED_BEFORE.search(body[max(0, found.start() - 16) : found.start()]):
            continue  # "I don't live in Leeds", "我不住在杭州": no value stated
        if name == "favourite":
            name = "favourite:" + _canon_value(groups.get("what") or "")
        if name in names or (name in {"residence", "employer"} and VISITED.search(body)):
            continue  # one value per attribute; "two years in Berlin" is not a move
        names.add(name)
        out.append(Attribute(role_holder(who, name), name, _canon_value(raw), True, evidence))
    multi = _multi(body)
    strong = [a for a in out if a.name in MULTI_OVERRIDES or a.name.startswith(("favourite:", "event:"))]
    if multi is not None and not strong:
        return (multi,)
    if not out and event is not None:
        out.append(event)  # a named event without a value: doubtful, never supersedes alone
    if not out:
        out.extend(
            Attribute(who, n, "", True, evidence) for n, cue in ENTITY_CUES.items() if cue.search(body)
        )
    return tuple(out)


def _tokens(value: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[\s,，]+", value) if t)


def same_attribute_conflict(new: Attribute | None, old: Attribute | None) -> bool:
    """Whether ``new`` replaces ``old``: same subject and attribute, single-valued, both values
    known and different. A relation with many members (friend, colleague) without a name, or a
    named event whose qualifier is known only on one side, needs change evidence in ``new``."""
    if new is None or old is None or not (new.single and old.single):
        return False
    if not new.value or not old.value or _tokens(new.value) == _tokens(old.value):
        return False
    if not same_subject(new.subject, old.subject):
        return False
    base_new, _, qual_new = new.name.partition("@")
    base_old, _, qual_old = old.name.partition("@")
    if base_new != base_old:
        return False
    if base_new.startswith("favourite:") and not base_new.removeprefix("favourite:"):
        return False
    if qual_new and qual_old:
        return bool(set(qual_new.split(",")) & set(qual_old.split(",")))  # Tokyo's flight is not Paris's
    if qual_new or qual_old or base_new.removeprefix("event:") in PLURAL_EVENTS:
        return new.evidence >= 1  # one side unqualified, or "a meeting" of many: say it moved
    return True


def supersedes_text(new_text: str, old_text: str) -> bool:
    """Whether any attribute ``new_text`` states replaces one ``old_text`` states
    (:func:`same_attribute_conflict`)."""
    olds = infer_all(old_text)
    return any(same_attribute_conflict(n, o) for n in infer_all(new_text) for o in olds)


def is_multi_valued(text: str) -> bool:
    """Whether ``text`` states a multi-valued attribute (a hobby, a pet, a language ...)."""
    return any(not a.single for a in infer_all(text))


# ------------------------------------------------------------------------------ read-time net
STALE_FACTOR = 0.5  # a memory a newer user statement replaces keeps half its score
STALE_CHANNEL = "stale"  # the label it carries: "stale:<id of the newer memory>"


_ASIDE = ("subject:", "modality:wish", "modality:plan", "modality:hypothetical", "modality:question")


def _read_aside(record: MemoryRecord) -> bool:
    """A record the statement reader marked as another's fact, or as wished, planned, supposed or
    asked (its tags): it neither replaces nor is replaced by the user's own statements here."""
    return any(tag.startswith(_ASIDE) for tag in record.tags)


def stale_pairs(records: Sequence[MemoryRecord]) -> dict[str, str]:
    """The read-time safety net: among ``records`` (recalled, active), each one that a newer
    user-stated record replaces (same subject, same single-valued attribute, another value),
    mapped to the id of the newest such record. The older one is only reported: the caller
    down-ranks and labels it. Pinned records are never reported (they wait for a confirmation)."""
    # Only records stating a single-valued attribute's value can take part (same_attribute_conflict).
    found = {
        r.memory_id: [a for a in infer_all(r.content) if a.single and a.value]
        for r in records
        if r.is_active and not _read_aside(r)
    }
    stated = {m: attributes for m, attributes in found.items() if attributes}
    stamped = sorted(
        (r for r in records if r.memory_id in stated),
        key=lambda r: (r.valid_from or r.created_at or _EPOCH, r.memory_id),
        reverse=True,
    )
    out: dict[str, str] = {}
    for i, newer in enumerate(stamped):
        if newer.source is not Source.USER or newer.memory_id in out:
            continue
        news = stated[newer.memory_id]
        for older in stamped[i + 1 :]:
            if older.pinned or older.memory_id in out:
                continue
            if set(newer.source_refs.message_ids) & set(older.source_refs.message_ids):
                continue  # one turn does not contradict itself
            olds = stated[older.memory_id]
            if any(same_attribute_conflict(n, o) for n in news for o in olds):
                out[older.memory_id] = newer.memory_id
    return out
