"""Attribute inference for updates that generalise (issue 10): from a fact's predicate and the
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
(:mod:`agentmem.domain.conflict`) and by the read-time net (:func:`stale_pairs`). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agentmem.domain.text import normalize


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


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# ------------------------------------------------------------------------------ evidence
_CHANGE = _r(
    r"\b(?:sold|bought|buying|picked up|traded in|replaced|swapped|switched|moved|relocated|transferred|"
    r"slipped|postponed|pushed (?:back|out|to)|delayed|rescheduled|rebooked|bumped|brought forward|moved up|"
    r"cancell?ed|changed|upgraded|quit|left|joined|promoted|no longer|not anymore|anymore|instead|"
    r"starting|as of|from now on|these days|got (?:a|an|my) new|closed my|registered with|migrated|"
    r"(?:final|last) day|broke up|dating)\b"
    r"|换了|换成|换到|改成|改为|改到|改名|改签|搬到|搬去|搬家|推迟|延期|延后|往后推|提前|调到|调整|转学|转到|跳槽|"
    r"离开|离职|辞职|入职|升职|升为|卖了|卖掉|新买|买了|不再|已经不|不用了|定了|之后|涨|降"
)
_OLD_REFERENCE = _r(
    r"\b(?:the old one|my old|the old|the previous|my previous|the former|that one|that hotel|the firm)\b"
    r"|原来的|以前的|之前的|之前那|旧的|旧车|老的|原先的"
)
_WEAK = _r(r"\b(?:now|currently|these days|nowadays|at the moment)\b|现在|目前|如今|最近")


def evidence_of(text: str) -> int:
    """How strongly ``text`` itself signals a change (see the module docstring)."""
    if _OLD_REFERENCE.search(text) or _CHANGE.search(text):
        return 2
    return 1 if _WEAK.search(text) else 0


# ------------------------------------------------------------------------------ subjects
_RELATIONS_EN = (
    "sister|brother|son|daughter|wife|husband|girlfriend|boyfriend|fiancee?|mom|mum|mother|dad|father|"
    "friend|boss|colleague|coworker|parents?|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|"
    "neighbou?r|roommate|dog|cat|kid"
)
_RELATION_EN = _r(
    rf"\b(?:my|our)\s+(?:\w+\s+)?({_RELATIONS_EN})(?:'s)?\b(?:\s+(?-i:([A-Z][a-z]+)))?"
)
_RELATIONS_ZH = (
    "女儿|儿子|老婆|老公|妻子|丈夫|太太|妈妈|爸爸|母亲|父亲|姐姐|妹妹|哥哥|弟弟|朋友|同事|爷爷|奶奶|外公|外婆|"
    "室友|邻居|猫|狗"
)
_RELATION_ZH = re.compile(rf"(?:^|[，,。；\s]|我|我们|的|家|给|把|大|小|二)({_RELATIONS_ZH})(?!子)")
_MANY_MEMBERS = frozenset({"friend", "colleague", "coworker", "cousin", "neighbour", "neighbor", "kid",
                           "朋友", "同事", "邻居"})
_NAMED = _MANY_MEMBERS | {"son", "daughter", "sister", "brother", "dog", "cat"}  # "my son Leo", "my son Max"
_LEADING_NAME = re.compile(r"^(?-i:([A-Z][a-z]+))(?:'s|\s+(?:is|was|has|goes|attends|lives|works))\b")
_ROLE_WORDS = frozenset({"girlfriend", "boyfriend", "wife", "husband", "boss", "fiance", "fiancee",
                         "男朋友", "女朋友", "老婆", "老公", "妻子", "丈夫"})
_RELATION_CANON = {"mum": "mom", "mother": "mom", "father": "dad", "neighbor": "neighbour",
                   "coworker": "colleague", "母亲": "妈妈", "父亲": "爸爸", "妻子": "老婆", "太太": "老婆",
                   "丈夫": "老公", "parents": "parent"}


_SPEAKER = re.compile(r"^((?-i:[A-Z][\w'\-]*(?: [A-Z][\w'\-]*)?)|[\u4e00-\u9fff]{2,4}):\s+")


def subject(text: str) -> str:
    """Who ``text`` is about: "self" or a relation ("sister", "friend:Sam", "女儿")."""
    speaker = _SPEAKER.match(text)
    if speaker:  # "Caroline: I live in ..." (a multi-party transcript) is about Caroline
        return f"{speaker.group(1).strip()}/{subject(text[speaker.end():])}"
    body = text.strip()
    found = _RELATION_EN.search(body)
    lead = found is not None and found.start() <= 25 and not re.match(
        r"^(?:I|We)\s+(?:live|moved|work|am|'m)", body, re.IGNORECASE
    )
    if found and lead:
        rel = _RELATION_CANON.get(found.group(1).lower(), found.group(1).lower())
        return f"{rel}:{found.group(2)}" if found.group(2) and rel in _NAMED else rel
    zh = _RELATION_ZH.search(body[:8])
    if zh:
        rel = _RELATION_CANON.get(zh.group(1), zh.group(1))
        name = re.match(r"[\u4e00-\u9fff]{2,3}?(?=在|是|叫|住|做|去|上)", body[zh.end():])
        return f"{rel}:{name.group(0)}" if name and rel in _NAMED else rel
    named = _LEADING_NAME.match(body)
    if named and named.group(1) not in {"The", "This", "That", "Our", "My", "It", "There", "Here"}:
        return f"?:{named.group(1)}"  # "Arlo's in Year 4": a person named, relation unknown
    return "self"


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


# ------------------------------------------------------------------------------ multi-valued
_VISITED = _r(r"\b(?:been to|visited|got back from|trip to|years? in|months? in)\b|去过|去了")
_MULTI: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("allergy", _r(r"\ballerg|过敏")),
    ("language", _r(r"\bspeak\b|\bfluent\b|会说|会讲|(?:学|说)\S{0,3}(?:语|话)\b|[日韩法德英西俄粤]语")),
    ("pet", _r(r"\b(?:adopted|have|got|own)\s+(?:a|an|two|three)\s+(?:\w+\s+)?(?:dog|cat|kitten|puppy|beagle|"
               r"parrot|hamster|rabbit|fish)|\b(?:kitten|puppy)\b|领养|养了")),
    ("child", _r(r"\b(?:have|had|got|expecting)\s+(?:a|an|two|three|four|\d)\s+(?:\w+\s+)?(?:sons?|daughters?|kids?|children|baby|twins)\b|"
                 r"生了|(?:有|添了)(?:一|两|三|个)?个?(?:女儿|儿子|孩子|宝宝)")),
    ("visited", _VISITED),
    ("skill", _r(r"\b(?:know|learned|learnt|learning)\s+(?:how to\s+)?(?-i:[A-Z])|学会|会用")),
    ("instrument", _r(r"\bplay\s+(?:the\s+)?(?:piano|guitar|violin|drums|cello|[\u4e00-\u9fff]{2})|\bguitar\b|"
                      r"[二古]胡|钢琴|吉他|小提琴")),
    ("hobby", _r(r"\b(?:play|playing|started|enjoy|love|into)\s+\w+ing\b|\bplay (?:tennis|golf|chess|football|"
                 r"soccer|basketball|badminton)\b|\brock climbing\b|喜欢打|喜欢玩|迷上|爱好|喜欢(?!的)")),
    ("friend", _r(r"\bmy (?:best )?friends?\b|我(?:的)?朋友")),
)

# ------------------------------------------------------------------------------ value shapes
_MONTHS = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DATE = (
    rf"(?:{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b|"
    rf"{_DAYS}(?:\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th))?(?:\s+at\s+\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)?)?|"
    rf"the\s+\d{{1,2}}(?:st|nd|rd|th)\b|\d{{1,2}}:\d{{2}}|\b\d{{1,2}}\s*(?:am|pm)\b|"
    r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:周|星期|礼拜)[一二三四五六日天]|[上下]午[零一二三四五六七八九十\d]+点半?|"
    r"(?:早上|晚上|中午)[零一二三四五六七八九十\d]+点半?|\d{1,2}\s*[点:：]\s*\d{0,2})"
)
_DATE_RE = _r(_DATE)
_RELATIVE_RE = _r(
    r"\b(?:pushed back|moved (?:up|back)|brought forward|delayed|postponed|bumped)\s+(?:by\s+)?(?:a|an|one|two|three|\d+)\s+"
    r"(?:day|week|month|hour)s?\b|(?:往后|往前)?(?:推|延|提前)了?(?:一|两|半|\d+)个?(?:小时|天|周|星期|月)"
)
_AMOUNT = r"(?:\$\s?\d[\d,.]*\s*k?|\d[\d,.]*\s*(?:kg|kilos?|k|K|万|千|元|块|公斤|斤)?|[一二两三四五六七八九十]+[万千][一二三四五六七八九]?)"
_AMOUNT_RE = _r(_AMOUNT)
_CHANGE_AMOUNT_RE = _r(
    r"\b(?:raised|increased|cut|lowered|dropped|went up|went down)\b[^.。]{0,25}?\bby\s+\S+|\b(?:lost|gained)\s+\d+\s*\w*|"
    r"(?:涨|降|减|加|少)了\s*" + _AMOUNT
)

_CAR_BRANDS = (
    "tesla|toyota|honda|bmw|audi|ford|mazda|volvo|kia|hyundai|subaru|nissan|volkswagen|vw|mercedes|porsche|jeep|"
    "chevy|chevrolet|lexus|byd|rivian|polestar|mini|skoda|peugeot|renault|fiat|prius|civic|corolla|camry|"
    "特斯拉|比亚迪|宝马|奔驰|奥迪|大众|丰田|本田|日产|马自达|理想|蔚来|小鹏|问界|吉利|长城|五菱|卡罗拉|凯美瑞|思域|雅阁|轩逸|朗逸|帕萨特"
)
_PHONE_BRANDS = r"iphone|pixel|galaxy|oneplus|xiaomi|华为mate|华为p|小米\d*|荣耀|oppo|vivo|红米|mate\s?\d+"
_LAPTOP_BRANDS = r"macbook|thinkpad|xps|surface|chromebook|联想|小新|拯救者|matebook"

_VALUE_EN = r"(?P<v>(?-i:[A-Z0-9\u4e00-\u9fff][\w'&.\-\u4e00-\u9fff]*(?:\s+(?:[A-Z0-9][\w'&.\-]*|of|de))*))"
_VALUE_ZH = r"(?P<v>[\u4e00-\u9fffA-Za-z0-9·\s]{1,14}?)"
_STOP_ZH = r"(?=[，,。.!！;；]|$|了|啦|住|上班|工作|上学|读书|办|玩|自驾|管)"

# (attribute, pattern with a value group "v"; or None to take the value from the object type)
_ENTITY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("favourite", _r(r"\bfavou?rite\s+(?P<what>[a-z]+(?:\s[a-z]+)?)\s+(?:is|are|was)\s+(?:now\s+)?" + _VALUE_EN)),
    ("favourite", _r(r"最喜欢的(?P<what>[\u4e00-\u9fff]{1,4}?)(?:是|就是)" + _VALUE_ZH + _STOP_ZH)),
    ("partner", _r(r"\b(?:my|our)\s+(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\s+(?:is\s+)?(?-i:(?P<v>[A-Z][a-z]+))")),
    ("partner", _r(r"\b(?:dating|engaged to|married to)\s+(?-i:(?P<v>[A-Z][a-z]+))")),
    ("partner", _r(r"(?:男朋友|女朋友|男友|女友|对象|老公|老婆)(?:叫|是)?(?P<v>[\u4e00-\u9fff]{2,3})(?=[，,。.!！;；在]|$|了)")),
    ("manager", _r(r"\b(?:report to|reporting to|my (?:manager|boss|supervisor|lead) is(?: now)?)\s+" + _VALUE_EN)),
    ("manager", _r(r"(?:领导|上司|老板|主管|经理)(?:现在)?是(?P<v>[\u4e00-\u9fff]{1,4}?)" + _STOP_ZH + r"|归(?P<v2>[\u4e00-\u9fff]{2,4}?)管")),
    ("residence", _r(r"\b(?:live|living|lives|moved|relocated|based|settled)\s+(?:in|to)\s+(?:the\s+)?" + _VALUE_EN)),
    ("residence", _r(r"(?:住在|家在|定居在?|搬到了?|搬去了?|搬家到|调到了?)" + _VALUE_ZH + r"(?=[，,。.!！;；\s]|$|了|住|租|西湖|office)")),
    ("residence", _r(r"^(?:我)?在(?P<v>[\u4e00-\u9fff]{2,3}?)\S{0,4}租房")),
    ("employer", _r(r"\b(?:work|working|works)\s+(?:at|for)\s+" + _VALUE_EN)),
    ("employer", _r(r"\b(?:start|starting|started|joined|join)\s+(?:at\s+)?(?-i:(?P<v>[A-Z\u4e00-\u9fff][\w&\u4e00-\u9fff]*(?:\s+[A-Z][\w&]*)*))")),
    ("employer", _r(r"(?:在|去|加入了?|入职了?)(?P<v>[\u4e00-\u9fffA-Za-z]{2,6}?)(?:做|当|上班|工作|任职)")),
    ("team", _r(r"\b(?:on|joined|join|moved to)\s+the\s+(?P<v>[a-z]+)\s+team\b")),
    ("title", _r(r"\b(?:title|position|role) is\s+(?P<v>[a-z][a-z \-]{2,30}?)(?=\s+(?:as of|at|in|on|from)\b|[,.;!]|$)")),
    ("title", _r(r"\bI(?:'m| am)\s+(?:now\s+)?an?\s+(?P<v>(?:junior|senior|lead|staff|principal|chief|head)\s[a-z \-]{2,30}?)(?=\s+(?:on|at|in|for)\b|[,.;!]|$)")),
    ("title", _r(r"(?:我)?(?:现在|已经)?(?:是|当|升职当|升为|升任)(?P<v>[\u4e00-\u9fff]{0,4}(?:工程师|主管|经理|总监|专家|组长|架构师))")),
    ("school", _r(r"\b(?:goes to|attends|transferred [\w ]{0,20}?to|enrolled [\w ]{0,20}?(?:in|at))\s+" + _VALUE_EN + r"(?=\s|[,.;!]|$)")),
    ("school", _r(r"(?:在|转学到|转到)(?P<v>[\u4e00-\u9fff]{2,6}(?:小学|中学|学校|大学|幼儿园|学院))")),
    ("diet", _r(r"\b(?P<v>vegetarian|vegan|pescatarian|keto|omnivore)\b")),
    ("diet", _r(r"(?P<v>不吃素|吃素|素食|纯素|什么都吃)")),
    ("salary", _r(r"\b(?:earn|salary is|pays?|paid|making)\b[^.]{0,20}?(?P<v>" + _AMOUNT + ")")),
    ("salary", _r(r"(?:月薪|年薪|工资|薪水)(?:是|涨到|到了)?(?P<v>" + _AMOUNT + ")")),
    ("rent", _r(r"\brent\b[^.]{0,15}?(?P<v>" + _AMOUNT + ")")),
    ("rent", _r(r"房租(?:是)?(?P<v>" + _AMOUNT + ")")),
    ("weight", _r(r"\bweigh\s+(?P<v>" + _AMOUNT + ")|体重(?:是)?(?P<v2>" + _AMOUNT + ")")),
    ("vehicle", _r(r"(?<![A-Za-z])(?P<v>(?:" + _CAR_BRANDS + r")(?:\s?[\w\-]+){0,2}?)(?=[\s,.。，;!]|$|了|，)")),
    ("vehicle", _r(r"(?:开(?:的是|着|了)?|买了)(?:一辆|辆)(?:[\u4e00-\u9fff]{1,3}的)?(?P<v>[\u4e00-\u9fffA-Za-z0-9]{2,8})")),
    ("phone", _r(r"(?P<v>(?:" + _PHONE_BRANDS + r")(?:\s?[\w\-]+)?)")),
    ("computer", _r(r"(?P<v>(?:" + _LAPTOP_BRANDS + r")(?:\s?[\w\-]+)?)")),
    ("editor", _r(r"(?P<v>vs ?code|neovim|vim|emacs|sublime|intellij|pycharm|zed|cursor)\b")),
    ("database", _r(r"(?P<v>mysql|postgres(?:ql)?|mongodb|sqlite|oracle|sql server|dynamodb|redis)\b")),
    ("bank", _r(r"\b(?:bank with|banking with|accounts? (?:with|at|to)|one with)\s+" + _VALUE_EN)),
    ("bank", _r(r"(?:在|用)(?P<v>[\u4e00-\u9fff]{2,6}银行)(?:开|办|存)")),
    ("gym", _r(r"(?=.*(?:gym|fitness|climbing (?:centre|center|wall)|leisure centre|健身|岩馆|游泳馆))(?:\b(?:go to|train at|work out at|member (?:at|of)|joined)\s+(?:the\s+)?" + _VALUE_EN + r"|在(?P<v2>[\u4e00-\u9fffA-Za-z]{2,8}?)健身)")),
    ("commute", _r(r"(?=.*(?:上班|通勤|commute|to work|到公司|to the office))(?P<v>metro|subway|line \d+|bus|train|tram|e-?bike|bike|cycl\w+|walk\w*|drive|car|地铁|公交|骑车|开车|步行|打车|班车)")),
    ("internet", _r(r"\binternet provider is\s+" + _VALUE_EN + r"|\bproviders? to\b[^.]{0,30}?\bcalled\s+(?P<v2>[A-Z][\w]*)")),
    ("doctor", _r(r"\b(?:family doctor|gp)\b[^.]{0,20}?\b(?:Dr\.?\s+)(?-i:(?P<v>[A-Z][a-z]+))")),
    ("coffee", _r(r"\bcoffee order is\s+(?:an?\s+)?(?P<v>[a-z ]{3,25}?)(?=\s+(?:these|now|every)\b|[,.;!]|$)")),
    ("lodging", _r(r"\b(?:staying at|booked)\s+(?:the\s+|an?\s+)?(?P<v>[A-Z][\w]*(?:\s[a-z]+)?)")),
    ("blog", _r(r"\bblog\b[^.]{0,15}?\b(?:on|to)\s+" + _VALUE_EN)),
    ("input_method", _r(r"(?P<v>[\u4e00-\u9fff]{2,4}输入法)")),
    ("pet_name", _r(r"(?:狗|猫)(?:改名)?叫(?P<v>[\u4e00-\u9fff]{2,3})")),
)
_ENTITY_CUES = {  # the object types that stand for the attribute without its own predicate
    "vehicle": _r(r"\bcar\b|\bdrive\b|车|辆"),
}

_EVENTS_EN = (
    "launch|release|wedding|deadline|trip|flight|meeting|standup|stand-up|kickoff|kick-off|appointment|"
    "recital|interview|exam|party|conference|surgery|concert|ceremony|demo|review|offsite"
)
_EVENT_EN = _r(rf"\b({_EVENTS_EN})\b")
_EVENT_ZH = re.compile(r"(上线|发布会|发布|婚礼|截止|航班|周会|例会|会议|面试|考试|聚会|手术|演出|生日会|国庆|春节|五一|中秋|行程|flight|launch)")
_EVENT_CANON = {"stand-up": "standup", "kick-off": "kickoff", "发布": "上线", "例会": "周会", "行程": "国庆"}
_PLURAL_EVENTS = frozenset({"trip", "flight", "meeting", "appointment", "interview", "exam", "party", "concert",
                            "review", "demo", "会议", "面试", "考试", "聚会"})
_DESTINATION_ZH = re.compile(r"去(?P<v>[\u4e00-\u9fff]{2,4}?)(?:玩|旅游|旅行|度假|自驾|出差|了|。|，|$)")
_NOT_QUALIFIER = frozenset(
    "my our the a an this that next new his her their your its is was on at for to by".split()
)


def _canon_value(value: str) -> str:
    value = normalize(value).strip(" .,，。!！;；的了")
    value = re.sub(r"^(?:a|an|the|my|our)\s+", "", value)
    return re.sub(r"\s+", " ", value)


def _event(text: str) -> Attribute | None:
    found = _EVENT_EN.search(text) or _EVENT_ZH.search(text)
    if found is None:
        return None
    noun = found.group(1).lower()
    noun = _EVENT_CANON.get(noun, noun)
    relative = _RELATIVE_RE.search(text)
    date = _DATE_RE.findall(text)
    if relative:
        value = "shift:" + _canon_value(relative.group(0))
    elif date:
        value = " ".join(_canon_value(d) for d in date)
    else:
        dest = _DESTINATION_ZH.search(text) if noun in {"国庆", "春节", "五一", "中秋"} else None
        value = _canon_value(dest.group("v")) if dest else ""
    name = f"event:{noun}"
    if noun in _PLURAL_EVENTS:
        # "my flight to Tokyo" and "my flight to Paris" are two events: name the qualifier.
        before = re.findall(rf"(\w+)(?:'s)?\s+{re.escape(found.group(1))}", text, re.IGNORECASE)
        quals = {w.lower() for w in before if w.lower() not in _NOT_QUALIFIER}
        quals |= {
            w.lower()
            for w in re.findall(r"(?<!^)(?<![.!?]\s)\b(?-i:[A-Z][a-z]{2,})\b", text)
            if not re.fullmatch(_MONTHS + "|" + _DAYS, w, re.IGNORECASE)
        }
        if quals:
            name += "@" + ",".join(sorted(quals))
    return Attribute("event", name, value, True, evidence_of(text))


_AMOUNT_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rent", _r(r"\brent\b|房租|租金")),
    ("salary", _r(r"\b(?:salary|pay|raise|earn)\b|月薪|年薪|工资|薪水")),
    ("weight", _r(r"\b(?:weigh|weight|kilos?|kg|pounds|lbs)\b|体重|公斤|斤")),
)


def _amount_shift(text: str, who: str) -> Attribute | None:
    """A relative change of an amount ("raised my rent by $150", "瘦了5斤", "房租涨了500")."""
    shift = _CHANGE_AMOUNT_RE.search(text)
    if shift is None:
        return None
    for name, cue in _AMOUNT_CUES:
        if cue.search(text):
            return Attribute(who, name, "shift:" + _canon_value(shift.group(0)), True, 2)
    return None


def _multi(text: str) -> Attribute | None:
    for name, pattern in _MULTI:
        if pattern.search(text):
            return Attribute(subject(text), name, _canon_value(text), False, evidence_of(text))
    return None


def infer(text: str) -> Attribute | None:
    """The first (subject, attribute, value) ``text`` states (see :func:`infer_all`), or None."""
    found = infer_all(text)
    return found[0] if found else None


@lru_cache(maxsize=4096)
def infer_all(text: str) -> tuple[Attribute, ...]:
    """Every (subject, attribute, value) ``text`` states, one per attribute, most specific first:
    a dated event, a relative change of an amount, then the single-valued attributes; the
    multi-valued reading alone when nothing single-valued outranks it. Empty when none is found."""
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
    for name, pattern in _ENTITY_RULES:
        found = pattern.search(body)
        if not found:
            continue
        groups = found.groupdict()
        raw = groups.get("v") or groups.get("v2") or ""
        if not raw.strip():
            continue
        if name == "favourite":
            name = "favourite:" + _canon_value(groups.get("what") or "")
        if name in names or (name in {"residence", "employer"} and _VISITED.search(body)):
            continue  # one value per attribute; "two years in Berlin" is not a move
        names.add(name)
        out.append(Attribute(who, name, _canon_value(raw), True, evidence))
    multi = _multi(body)
    strong = [a for a in out if a.name in _MULTI_OVERRIDES or a.name.startswith(("favourite:", "event:"))]
    if multi is not None and not strong:
        return (multi,)
    if not out and event is not None:
        out.append(event)  # a named event without a value: doubtful, never supersedes alone
    if not out:
        out.extend(Attribute(who, n, "", True, evidence) for n, cue in _ENTITY_CUES.items() if cue.search(body))
    return tuple(out)


# A strong single-valued reading wins over a multi-valued cue it contains ("最喜欢的歌手" is not a
# hobby; "my girlfriend" is not a friend; a school next to "my daughter" is the daughter's school).
_MULTI_OVERRIDES = frozenset(
    {"partner", "school", "manager", "diet", "pet_name", "employer", "residence", "title", "salary", "rent", "weight"}
)


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
        if not set(qual_new.split(",")) & set(qual_old.split(",")):
            return False  # the flight to Tokyo, the flight to Paris
        return True
    if qual_new or qual_old or base_new.removeprefix("event:") in _PLURAL_EVENTS:
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
