"""The rule tables of :mod:`agentmem.domain.attributes`: change evidence, multi-valued
attributes, value shapes (dates, amounts, brands), the single-valued attributes with their
predicates, and named events — Chinese and English. Data only (compiled patterns). Pure."""

from __future__ import annotations

import re

from agentmem.domain.lazy_re import LazyPattern, Regex, lazy_compile


def _r(pattern: str) -> LazyPattern:
    return lazy_compile(pattern, re.IGNORECASE)


# ------------------------------------------------------------------------------ evidence
CHANGE = _r(
    r"\b(?:sold|bought|buying|picked up|traded in|replaced|swapped|switched|moved|relocated|transferred|"
    r"slipped|postponed|pushed (?:back|out|to)|delayed|rescheduled|rebooked|bumped|brought forward|moved up|"
    r"cancell?ed|changed|upgraded|quit|left|joined|promoted|no longer|not anymore|anymore|instead|"
    r"starting|as of|from now on|these days|got (?:a|an|my) new|closed my|registered with|migrated|"
    r"(?:final|last) day|broke up|dating)\b"
    r"|换了|换成|换到|改成|改为|改到|改名|改签|搬到|搬去|搬家|推迟|延期|延后|往后推|提前|调到|调整|转学|转到|跳槽|"
    r"离开|离职|辞职|入职|升职|升为|卖了|卖掉|新买|买了|不再|已经不|不用了|定了|之后|涨|降"
)
OLD_REFERENCE = _r(
    r"\b(?:the old one|my old|the old|the previous|my previous|the former|that one|that hotel|the firm)\b"
    r"|原来的|以前的|之前的|之前那|旧的|旧车|老的|原先的"
)
WEAK = _r(r"\b(?:now|currently|these days|nowadays|at the moment)\b|现在|目前|如今|最近")


# ------------------------------------------------------------------------------ multi-valued
VISITED = _r(r"\b(?:been to|visited|got back from|trip to|years? in|months? in)\b|去过|去了")
MULTI: tuple[tuple[str, Regex], ...] = (
    ("allergy", _r(r"\ballerg|过敏")),
    ("language", _r(r"\bspeak\b|\bfluent\b|会说|会讲|(?:学|说)\S{0,3}(?:语|话)\b|[日韩法德英西俄粤]语")),
    (
        "pet",
        _r(
            r"\b(?:adopted|have|got|own)\s+(?:a|an|two|three)\s+(?:\w+\s+)?(?:dog|cat|kitten|puppy|beagle|"
            r"parrot|hamster|rabbit|fish)|\b(?:kitten|puppy)\b|领养|养了"
        ),
    ),
    (
        "child",
        _r(
            r"\b(?:have|had|got|expecting)\s+(?:a|an|two|three|four|\d)\s+(?:\w+\s+)?(?:sons?|daughters?|kids?|children|baby|twins)\b|"
            r"生了|(?:有|添了)(?:一|两|三|个)?个?(?:女儿|儿子|孩子|宝宝)"
        ),
    ),
    ("visited", VISITED),
    ("skill", _r(r"\b(?:know|learned|learnt|learning)\s+(?:how to\s+)?(?-i:[A-Z])|学会|会用")),
    (
        "instrument",
        _r(
            r"\bplay\s+(?:the\s+)?(?:piano|guitar|violin|drums|cello|[\u4e00-\u9fff]{2})|\bguitar\b|"
            r"[二古]胡|钢琴|吉他|小提琴"
        ),
    ),
    (
        "hobby",
        _r(
            r"\b(?:play|playing|started|enjoy|love|into)\s+\w+ing\b|\bplay (?:tennis|golf|chess|football|"
            r"soccer|basketball|badminton)\b|\brock climbing\b|喜欢(?:打|玩|踢|跑|爬|游|滑|画|弹)|迷上|爱好"
        ),
    ),
    ("friend", _r(r"\bmy (?:best )?friends?\b|我(?:的)?朋友")),
)

# ------------------------------------------------------------------------------ value shapes
MONTHS = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
DATE = (
    rf"(?:{MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTHS}\b|"
    rf"{DAYS}(?:\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th))?(?:\s+at\s+\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)?)?|"
    rf"the\s+\d{{1,2}}(?:st|nd|rd|th)\b(?!\s+of)|\d{{1,2}}:\d{{2}}|\b\d{{1,2}}\s*(?:am|pm)\b|"
    r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:周|星期|礼拜)[一二三四五六日天]|[上下]午[零一二三四五六七八九十\d]+点半?|"
    r"(?:早上|晚上|中午)[零一二三四五六七八九十\d]+点半?|\d{1,2}\s*[点:：]\s*\d{0,2})"
)
DATE_RE = _r(DATE)
RELATIVE_RE = _r(
    r"\b(?:pushed back|moved (?:up|back)|brought forward|delayed|postponed|bumped)\s+(?:by\s+)?(?:a|an|one|two|three|\d+)\s+"
    r"(?:day|week|month|hour)s?\b|(?:往后|往前)?(?:推|延|提前)了?(?:一|两|半|\d+)个?(?:小时|天|周|星期|月)"
)
AMOUNT = r"(?:\$\s?\d[\d,.]*\s*k?|\d[\d,.]*\s*(?:kg|kilos?|k|K|万|千|元|块|公斤|斤)?|[一二两三四五六七八九十]+[万千][一二三四五六七八九]?)"
AMOUNT_RE = _r(AMOUNT)
CHANGE_AMOUNT_RE = _r(
    r"\b(?:raised|increased|cut|lowered|dropped|went up|went down)\b[^.。]{0,25}?\bby\s+\S+|\b(?:lost|gained)\s+\d+\s*\w*|"
    r"(?:涨|降|减|加|少)了\s*" + AMOUNT
)

CAR_BRANDS = (
    "tesla|toyota|honda|bmw|audi|ford|mazda|volvo|kia|hyundai|subaru|nissan|volkswagen|vw|mercedes|porsche|jeep|"
    "chevy|chevrolet|lexus|byd|rivian|polestar|mini|skoda|peugeot|renault|fiat|prius|civic|corolla|camry|"
    "特斯拉|比亚迪|宝马|奔驰|奥迪|大众|丰田|本田|日产|马自达|理想|蔚来|小鹏|问界|吉利|长城|五菱|卡罗拉|凯美瑞|思域|雅阁|轩逸|朗逸|帕萨特"
)
PHONE_BRANDS = (
    r"iphone|(?-i:Pixel|Galaxy)|oneplus|xiaomi|华为mate|华为p|小米\d*|荣耀|oppo|vivo|红米|mate\s?\d+"
)
LAPTOP_BRANDS = r"macbook|thinkpad|xps|(?-i:Surface)|chromebook|联想|小新|拯救者|matebook"

VALUE_EN = (
    r"(?P<v>(?!(?:"
    + MONTHS
    + "|"
    + DAYS
    + r")\b)(?-i:[A-Z0-9\u4e00-\u9fff][\w'&.\-\u4e00-\u9fff]*(?:\s+(?:[A-Z0-9][\w'&.\-]*|of|de))*))"
)
VALUE_ZH = r"(?P<v>[\u4e00-\u9fffA-Za-z0-9·\s]{1,14}?)"
STOP_ZH = r"(?=[，,。.!！;；]|$|了|啦|住|上班|工作|上学|读书|办|玩|自驾|管)"

# (attribute, pattern with a value group "v"; or None to take the value from the object type)
ENTITY_RULES: tuple[tuple[str, Regex], ...] = (
    (
        "favourite",
        _r(r"\bfavou?rite\s+(?P<what>[a-z]+(?:\s[a-z]+)?)\s+(?:is|are|was)\s+(?:now\s+)?" + VALUE_EN),
    ),
    ("favourite", _r(r"最喜欢的(?P<what>[\u4e00-\u9fff]{1,4}?)(?:是|就是)" + VALUE_ZH + STOP_ZH)),
    (
        "partner",
        _r(
            r"\b(?:my|our)\s+(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\s+(?:is\s+)?(?-i:(?P<v>[A-Z][a-z]+))"
        ),
    ),
    ("partner", _r(r"\b(?:dating|engaged to|married to)\s+(?-i:(?P<v>[A-Z][a-z]+))")),
    (
        "partner",
        _r(
            r"(?:男朋友|女朋友|男友|女友|对象|老公|老婆)(?:叫|是)?(?P<v>[\u4e00-\u9fff]{2,3})(?=[，,。.!！;；在]|$|了)"
        ),
    ),
    (
        "manager",
        _r(
            r"\b(?:report to|reporting to|my (?:new\s+|current\s+)?(?:manager|boss|supervisor|lead) is(?: now)?)\s+"
            + VALUE_EN
        ),
    ),
    (
        "manager",
        _r(
            r"(?:领导|上司|老板|主管|经理)(?:现在)?是(?P<v>[\u4e00-\u9fff]{1,4}?)"
            + STOP_ZH
            + r"|归(?P<v2>[\u4e00-\u9fff]{2,4}?)管"
        ),
    ),
    (
        "residence",
        _r(
            r"\b(?:live|living|lives|moved|relocated|based|settled)\s+(?:(?:the family|us|back|everything|home)\s+)?"
            r"(?:in|to)\s+(?:the\s+)?" + VALUE_EN
        ),
    ),
    (
        "residence",
        _r(r"\b(?:lease|flat|apartment|house|condo|place) (?:in|near)\s+" + VALUE_EN),
    ),
    (
        "residence",
        _r(
            r"(?:住在|家在|定居在?|搬到了?|搬去了?|搬家到|调到了?)"
            + VALUE_ZH
            + r"(?=[，,。.!！;；\s]|$|了|住|租|西湖|office)"
        ),
    ),
    ("residence", _r(r"^(?:我)?在(?P<v>[\u4e00-\u9fff]{2,3}?)\S{0,4}租房")),
    ("employer", _r(r"\b(?:work|working|works)\s+(?:at|for)\s+" + VALUE_EN)),
    (
        "employer",
        _r(
            r"^(?!.*\b(?:club|group|society|community|league|choir|band|gym|class|course|school|academy|"
            r"kindergarten|team|crew|circle|guild|church|party)\b)"  # one joins many of those
            r".*?\b(?:start|starting|started|joined|join)\s+(?:at\s+)?"
            r"(?-i:(?P<v>[A-Z\u4e00-\u9fff][\w&\u4e00-\u9fff]*(?:\s+[A-Z][\w&]*)*))"
        ),
    ),
    ("employer", _r(r"(?:在|去|加入了?|入职了?)(?P<v>[\u4e00-\u9fffA-Za-z]{2,6}?)(?:做|当|上班|工作|任职)")),
    ("team", _r(r"\b(?:on|joined|join|moved to)\s+the\s+(?P<v>[a-z]+)\s+team\b")),
    (
        "title",
        _r(
            r"\b(?:title|position|role) is\s+(?P<v>[a-z][a-z \-]{2,30}?)(?=\s+(?:as of|at|in|on|from)\b|[,.;!]|$)"
        ),
    ),
    (
        "title",
        _r(
            r"\bI(?:'m| am)\s+(?:now\s+)?an?\s+(?P<v>(?:junior|senior|lead|staff|principal|chief|head)\s[a-z \-]{2,30}?)(?=\s+(?:on|at|in|for)\b|[,.;!]|$)"
        ),
    ),
    (
        "title",
        _r(
            r"(?:我)?(?:现在|已经)?(?:是|当|升职当|升为|升任)(?P<v>[\u4e00-\u9fff]{0,4}(?:工程师|主管|经理|总监|专家|组长|架构师))"
        ),
    ),
    (
        "school",
        _r(
            r"\b(?:goes to|attends|transferred [\w ]{0,20}?to|enrolled [\w ]{0,20}?(?:in|at))\s+"
            + VALUE_EN
            + r"(?=\s|[,.;!]|$)"
        ),
    ),
    ("school", _r(r"(?:在|转学到|转到)(?P<v>[\u4e00-\u9fff]{2,6}(?:小学|中学|学校|大学|幼儿园|学院))")),
    ("diet", _r(r"\b(?P<v>vegetarian|vegan|pescatarian|keto|omnivore)\b")),
    ("diet", _r(r"(?P<v>不吃素|吃素|素食|纯素|什么都吃)")),
    ("salary", _r(r"\b(?:earn|salary is|pays?|paid|making)\b[^.]{0,20}?(?P<v>" + AMOUNT + ")")),
    ("salary", _r(r"(?:月薪|年薪|工资|薪水)(?:是|涨到|到了)?(?P<v>" + AMOUNT + ")")),
    ("rent", _r(r"\brent\b[^.]{0,15}?(?P<v>" + AMOUNT + ")")),
    ("rent", _r(r"房租(?:是)?(?P<v>" + AMOUNT + ")")),
    ("weight", _r(r"\bweigh\s+(?P<v>" + AMOUNT + ")|体重(?:是)?(?P<v2>" + AMOUNT + ")")),
    (
        "vehicle",
        _r(
            r"(?<![A-Za-z])(?P<v>(?:"
            + CAR_BRANDS
            + r")(?:(?:(?![卖换买开送了是的])[\u4e00-\u9fff]){1,3}(?=[，,。.!！;；\s]|$))?"
            r"(?:\s?(?-i:[A-Z0-9][\w\-]*)){0,2})(?=[\s,.。，;!]|$|了|卖|换|送)"
        ),
    ),
    (
        "vehicle",
        _r(
            r"(?:开(?:的是|着|了)?|买了)(?:一辆|辆)(?:[\u4e00-\u9fff]{1,3}的)?(?P<v>[\u4e00-\u9fffA-Za-z0-9]{2,8})"
        ),
    ),
    ("phone", _r(r"(?<![A-Za-z])(?P<v>(?:" + PHONE_BRANDS + r")(?![a-z])(?:\s?(?-i:[A-Z0-9][\w\-]*))?)")),
    ("computer", _r(r"(?<![A-Za-z])(?P<v>(?:" + LAPTOP_BRANDS + r")(?![a-z])(?:\s?(?-i:[A-Z0-9][\w\-]*))?)")),
    (
        "editor",
        _r(r"(?<![A-Za-z])(?P<v>vs ?code|neovim|vim|emacs|intellij|pycharm|(?-i:Sublime|Zed|Cursor))\b"),
    ),
    ("database", _r(r"(?<![A-Za-z])(?P<v>mysql|postgres(?:ql)?|mongodb|sqlite|sql server|dynamodb|redis)\b")),
    ("bank", _r(r"\b(?:bank with|banking with|accounts? (?:with|at|to)|one with)\s+" + VALUE_EN)),
    ("bank", _r(r"(?:在|用)(?P<v>[\u4e00-\u9fff]{2,6}银行)(?:开|办|存)")),
    (
        "gym",
        _r(
            r"(?:\b(?:go to|train at|work out at|member (?:at|of)|joined)\s+(?:the\s+)?"
            + VALUE_EN
            + r"|在(?P<v2>[\u4e00-\u9fffA-Za-z]{2,8}?)健身)"
        ),
    ),
    (
        "commute",
        _r(
            r"(?P<v>metro|subway|line \d+|bus|train|tram|e-?bike|bike|cycl\w+|walk\w*|drive|car|地铁|公交|骑车|开车|步行|打车|班车)"
        ),
    ),
    (
        "internet",
        _r(
            r"\binternet provider is\s+"
            + VALUE_EN
            + r"|\bproviders? to\b[^.]{0,30}?\bcalled\s+(?P<v2>[A-Z][\w]*)"
        ),
    ),
    ("doctor", _r(r"\b(?:family doctor|gp)\b[^.]{0,20}?\b(?:Dr\.?\s+)(?-i:(?P<v>[A-Z][a-z]+))")),
    (
        "coffee",
        _r(r"\bcoffee order is\s+(?:an?\s+)?(?P<v>[a-z ]{3,25}?)(?=\s+(?:these|now|every)\b|[,.;!]|$)"),
    ),
    ("lodging", _r(r"\b(?:staying at|booked)\s+(?:the\s+|an?\s+)?(?P<v>[A-Z][\w]*(?:\s[a-z]+)?)")),
    ("blog", _r(r"\bblog\b[^.]{0,15}?\b(?:on|to)\s+" + VALUE_EN)),
    ("input_method", _r(r"(?P<v>(?:[A-Za-z]+\s?|[\u4e00-\u9fff]{2})输入法)")),
    ("pet_name", _r(r"(?:狗|猫)(?:改名)?叫(?P<v>[\u4e00-\u9fff]{2,3})")),
)
DISPOSAL = _r(
    r"\b(?:sold|traded in|got rid of|gave away|returned|scrapped|left|quit|cancell?ed|closed)\b|卖了|卖掉|送给|送人|处理掉|退了|离开"
)
# Attributes whose predicate is generic ("go to X", "bus"): the text must also name the topic.
RULE_CUES = {
    "gym": _r(r"gym|fitness|climbing (?:centre|center|wall)|leisure centre|健身|岩馆|游泳馆"),
    "commute": _r(r"上班|通勤|commute|to work|到公司|to the office"),
}

# The choice an accepted recommendation states and the question it answers
# (agentmem.domain.exchange.extract_acceptance):
# ("I chose Hugo (Should I move my blog to Ghost or Hugo?)", "我选定了微信输入法（输入法用哪个好？）")
ASKED = lazy_compile(r"\s*[（(]((?:[^（）()]*?)[?？])\s*[）)]\s*$")
CHOICE = lazy_compile(
    r"^(?:I chose|I went with:?|我选定了|我选了|我采纳了建议[:：]?)\s*(?P<c>.+?)[.。]?$", re.IGNORECASE
)
ENTITY_CUES = {  # the object types that stand for the attribute without its own predicate
    "vehicle": _r(r"\bcar\b|\bdrive\b|车|辆"),
}

EVENTS_EN = (
    "launch|release|wedding|deadline|trip|flight|meeting|standup|stand-up|kickoff|kick-off|appointment|"
    "recital|interview|exam|party|conference|surgery|concert|ceremony|demo|review|offsite|dinner|lunch|reunion|"
    "graduation|housewarming|presentation|hearing|checkup|check-up"
)
EVENT_EN = _r(rf"\b({EVENTS_EN})\b")
EVENT_ZH = lazy_compile(
    r"(上线|发布会|发布|婚礼|截止|航班|周会|例会|会议|面试|考试|聚会|手术|演出|生日会|国庆|春节|五一|中秋|行程|flight|launch)"
)
EVENT_CANON = {"stand-up": "standup", "kick-off": "kickoff", "发布": "上线", "例会": "周会", "行程": "国庆"}
PLURAL_EVENTS = frozenset(
    {"dinner", "lunch", "presentation", "checkup", "check-up"}
    | {
        "trip",
        "flight",
        "meeting",
        "appointment",
        "interview",
        "exam",
        "party",
        "concert",
        "review",
        "demo",
        "会议",
        "面试",
        "考试",
        "聚会",
    }
)
DESTINATION_ZH = lazy_compile(r"去(?P<v>[\u4e00-\u9fff]{2,4}?)(?:玩|旅游|旅行|度假|自驾|出差|了|。|，|$)")
NOT_QUALIFIER = frozenset(
    [
        "my",
        "our",
        "the",
        "a",
        "an",
        "this",
        "that",
        "next",
        "new",
        "his",
        "her",
        "their",
        "your",
        "its",
        "is",
        "was",
        "on",
        "at",
        "for",
        "to",
        "by",
    ]
)


AMOUNT_CUES: tuple[tuple[str, Regex], ...] = (
    ("rent", _r(r"\brent\b|房租|租金")),
    ("salary", _r(r"\b(?:salary|pay|raise|earn)\b|月薪|年薪|工资|薪水")),
    ("weight", _r(r"\b(?:weigh|weight|kilos?|kg|pounds|lbs)\b|体重|公斤|斤")),
)


# A strong single-valued reading wins over a multi-valued cue it contains ("最喜欢的歌手" is not a
# hobby; "my girlfriend" is not a friend; a school next to "my daughter" is the daughter's school).
MULTI_OVERRIDES = frozenset(
    {
        "partner",
        "school",
        "manager",
        "diet",
        "pet_name",
        "employer",
        "residence",
        "title",
        "salary",
        "rent",
        "weight",
    }
)


# What keeps a match from stating a value: a negation or a wish before it, in its phrase.
NEGATED_BEFORE = _r(
    r"\b(?:not|no longer|never|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|cannot)\s+(?:\w+\s+){0,2}$"
    r"|(?:不再?|没有?|别|并非|不是)$"
)
INTENT = lazy_compile(
    r"我想|想要|想换|想买|想搬|想去|想用|打算|准备|考虑|要不要|是否|希望|\b(?:want|wanna|thinking (?:of|about)|planning|plan to|might|maybe|"
    r"should I|considering|hoping|would like)\b",
    re.IGNORECASE,
)
PHRASE_BREAK = lazy_compile(r"\band\b|[,;，；]|然后|又|再", re.IGNORECASE)
# Relations that name the attribute itself ("my boss is Karen" is the user's manager).
ROLES = {
    "manager": {"boss"},
    "partner": {"girlfriend", "boyfriend", "wife", "husband", "fiance", "fiancee", "老婆", "老公"},
}
