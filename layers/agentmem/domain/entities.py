"""Entities for the graph: people (Chinese names included), places, organisations and products.

Methods, not lists of answers:
- English: runs of capitalised words (with ``of``/``de``/``&`` inside: "Bank of America"),
  honorific + name ("Dr. Smith"), initials ("J. R. R. Tolkien"), acronyms and product shapes
  (``AWS``, ``iPhone``, ``PostgreSQL``, ``GPT-4``). A capitalised first word is an entity unless
  it is a function word, a sentence opener or has a common word's shape (``-ly``, ``-ing``,
  ``-ed``); a capitalised first word followed by another capitalised word is read as one name.
- Chinese: a person is a surname (lexicon, compound surnames too) plus a one- or two-character
  given name, recognised only next to a context cue (我同事/老板/朋友..., 叫, 和/跟/与, or a title
  after it: 王总, 李老师) or as 小X/老X after a cue; a name introduced by 叫 ("叫豆豆的柯基") is
  taken up to 的. Places: a city/province lexicon, or a run ending in a place suffix (市 省 区
  县 镇 路 街 山 湖 岛 ...) after a motion or location cue. Organisations: a run ending in an
  organisation suffix (公司 集团 银行 大学 医院 ...), a run between 在/加入/入职 and 工作/上班, and a
  small lexicon of well-known ones. Latin tokens and quoted titles inside Chinese are products
  or names.
Pure; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmem.domain.lazy_re import lazy_compile

__all__ = ["Entity", "find_entities"]


def _words(text: str) -> frozenset[str]:
    """A lexicon written as one space-separated string."""
    return frozenset(text.split())


MAX_ENTITIES = 8


@dataclass(frozen=True, slots=True)
class Entity:
    text: str
    kind: str  # person | place | org | product | name


_EN_COMMON = _words(
    "i i'm i've i'd i'll the a an my we our us you your he she it its they their this that these those there here "
    "and but or so then also however anyway after before now today yesterday tomorrow tonight still yet if when "
    "while since because although though as what who where why how which do does did is are was were can could "
    "would should will please thanks thank sorry yes no ok okay oh well sure hi hello hey wow haha lol yeah yep "
    "nope maybe perhaps just really actually honestly luckily sadly finally first next last recently lately "
    "sometimes usually always never every each some any all both many most much more less few one two three "
    "not don't didn't can't won't isn't it's that's there's let's let go got get have has had been being am "
    "be to of in on at by for with from about into over under up down out off again great good nice cool "
    "awesome amazing love like same last next new old big small anyway besides plus btw bye see look wait "
    "speaking talking guess hmm um uh mine yours his hers ours theirs him her them me also ah aw omg "
    # imperative verbs that open advice ("Try Nopa", "Visit Kyoto")
    "try visit check use take make call ask book buy order preheat add put start consider pick choose head "
    "grab bring keep read watch listen install open run set tell give send find search remember note avoid "
    "stay leave come turn follow drive walk eat drink cook bake mix stir serve enjoy remove replace update"
)
_TITLE = r"(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Sen|Gov|Gen|Capt|Rev|Sir|Dame|Lady|Lord|Uncle|Aunt)\.?"
_NAME_RUN = lazy_compile(
    rf"\b(?:{_TITLE}\s+)?(?:[A-Z]\.\s*)*[A-Z][A-Za-z'’-]+(?:(?:\s+(?:of(?:\s+the)?|de|da|van|von|&))?\s+(?:[A-Z]\.\s*)*[A-Z][A-Za-z0-9'’-]+)*(?:\s+\d+[A-Za-z]*\b)?"
)
_SHAPE = lazy_compile(
    r"\b(?:[A-Za-z]+-?\d+[A-Za-z0-9]*|[A-Z]{2,}[A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*(?:\s\d+)?|[A-Z][a-z]+[A-Z][A-Za-z0-9]*)\b"
)

_ZH_SURNAMES_2 = [
    "欧阳",
    "司马",
    "诸葛",
    "上官",
    "东方",
    "皇甫",
    "尉迟",
    "公孙",
    "慕容",
    "令狐",
    "长孙",
    "宇文",
    "司徒",
    "夏侯",
    "端木",
    "独孤",
    "南宫",
    "西门",
]
_ZH_SURNAMES_1 = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施"
    "文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷"
    "盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷"
    "晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
# Characters that end a given name: function words and common verbs right after a name.
_ZH_STOP = set(
    "说是的了和跟与在也都去来要会很一不告让给把被对找问叫和着过吗呢吧啊还就又才刚从向往到为以及今昨每这那个们"
)
_ZH_PERSON_CUE = (
    r"(?:同事|老板|领导|上司|经理|主管|朋友|同学|室友|舍友|老师|导师|师傅|邻居|男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|"
    r"儿子|女儿|哥哥|姐姐|弟弟|妹妹|表哥|表姐|客户|合伙人|搭档|教练|医生|叫做|名叫|叫|和|跟|与|找|给|问|陪|见了?|认识)"
)
_ZH_TITLE_AFTER = r"(?:总|老师|经理|先生|女士|小姐|医生|教授|博士|主任|律师)"
_ZH_PERSON_AFTER = r"(?:是我|说|告诉|觉得|建议|让我|帮我|同学|负责|答应|同意|通知|打电话)"
_ZH_CITIES = [
    "北京",
    "上海",
    "天津",
    "重庆",
    "深圳",
    "广州",
    "杭州",
    "南京",
    "苏州",
    "成都",
    "武汉",
    "西安",
    "长沙",
    "郑州",
    "青岛",
    "厦门",
    "大连",
    "宁波",
    "沈阳",
    "哈尔滨",
    "长春",
    "济南",
    "合肥",
    "福州",
    "昆明",
    "贵阳",
    "南宁",
    "海口",
    "三亚",
    "兰州",
    "西宁",
    "银川",
    "乌鲁木齐",
    "拉萨",
    "呼和浩特",
    "石家庄",
    "太原",
    "南昌",
    "无锡",
    "东莞",
    "佛山",
    "珠海",
    "香港",
    "澳门",
    "台北",
    "广东",
    "广西",
    "浙江",
    "江苏",
    "四川",
    "湖北",
    "湖南",
    "河南",
    "河北",
    "山东",
    "山西",
    "陕西",
    "福建",
    "云南",
    "贵州",
    "海南",
    "甘肃",
    "青海",
    "宁夏",
    "新疆",
    "西藏",
    "内蒙古",
    "辽宁",
    "吉林",
    "黑龙江",
    "安徽",
    "江西",
    "台湾",
    "浦东",
    "海淀",
    "朝阳",
    "南山",
    "福田",
    "徐汇",
    "静安",
    "日本",
    "东京",
    "大阪",
    "京都",
    "韩国",
    "首尔",
    "美国",
    "纽约",
    "旧金山",
    "洛杉矶",
    "西雅图",
    "英国",
    "伦敦",
    "法国",
    "巴黎",
    "德国",
    "柏林",
    "新加坡",
    "澳大利亚",
    "悉尼",
    "加拿大",
    "多伦多",
]
_ZH_ORGS = [
    "腾讯",
    "阿里巴巴",
    "阿里",
    "字节跳动",
    "字节",
    "百度",
    "华为",
    "小米",
    "京东",
    "美团",
    "网易",
    "滴滴",
    "拼多多",
    "微软",
    "谷歌",
    "苹果公司",
    "亚马逊",
    "特斯拉",
    "比亚迪",
    "蔚来",
    "小鹏",
    "理想汽车",
]
_ZH_PLACE_SUFFIX = r"(?:市|省|区|县|镇|乡|村|路|街|大道|山|湖|江|河|岛|湾|公园|机场|车站|站|广场|小区)"
_ZH_ORG_SUFFIX = (
    r"(?:公司|集团|银行|大学|学院|中学|小学|医院|研究院|研究所|实验室|工作室|事务所|科技|协会|基金会)"
)
_HAN = r"[\u4e00-\u9fff]"
# A Han character that may start a place or organisation name (not a pronoun, cue or particle).
_BODY0 = r"[^\W\dA-Za-z_我你他她它在到去从住回的了过着和与跟是也都就爬游逛看吃玩买做]"


def _person_re() -> re.Pattern[str]:
    surname = "(?:" + "|".join(_ZH_SURNAMES_2) + f"|[{_ZH_SURNAMES_1}])"
    given = f"[^{''.join(sorted(_ZH_STOP))}\\W\\dA-Za-z]{{1,2}}"
    return re.compile(
        rf"{_ZH_PERSON_CUE}({surname}{given}|[小老]{_HAN})"
        rf"|({surname}{_HAN}{{0,2}}?{_ZH_TITLE_AFTER}|{surname}{_HAN}{{1,2}}?(?={_ZH_PERSON_AFTER}))"
    )


_ZH_PERSON_RE = _person_re()
_ZH_CALLED_RE = lazy_compile(rf"叫(?:做)?({_HAN}{{1,4}}?)的")
_ZH_CITY_RE = lazy_compile("|".join(sorted(_ZH_CITIES, key=len, reverse=True)))
_ZH_ORG_LEX_RE = lazy_compile("|".join(sorted(_ZH_ORGS, key=len, reverse=True)))
_ZH_PLACE_RE = lazy_compile(
    rf"(?:住在|搬到|来自|在|到|去了?|住|回|从|飞)({_BODY0}{_HAN}{{0,4}}{_ZH_PLACE_SUFFIX})(?!{_HAN}?(?:公司|集团|银行))"
)
_ZH_ORG_RE = lazy_compile(rf"({_BODY0}{_HAN}{{1,7}}?{_ZH_ORG_SUFFIX})")
_ZH_WORK_AT_RE = lazy_compile(rf"(?:在|加入了?|入职了?)({_BODY0}{_HAN}{{1,5}}?)(?:工作|上班|实习|任职)")
_LATIN_IN_ZH = lazy_compile(r"[A-Za-z][A-Za-z0-9.+#-]*(?:\s?\d+[A-Za-z]*)?")
_QUOTED = lazy_compile(r"[「“\"《]([^」”\"》]{1,20})[」”\"》]")


def _is_common(word: str) -> bool:
    low = word.lower().rstrip("'’s")
    return (
        low in _EN_COMMON
        or word.lower() in _EN_COMMON
        or (len(word) > 4 and (low.endswith("ly") or low.endswith("ing") or low.endswith("ed")))
    )


def _at_sentence_start(text: str, index: int) -> bool:
    """Whether only spaces lie between ``index`` and the text's start or a sentence/quote opener."""
    j = index - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j < 0 or text[j] in '.!?。！？"“(:：;；'


def _english(text: str) -> list[Entity]:
    found: list[Entity] = []
    for match in _NAME_RUN.finditer(text):
        run = match.group(0).strip()
        words = run.split()
        at_start = _at_sentence_start(text, match.start())
        if at_start and _is_common(words[0].strip(".")):
            words = words[1:]  # "Yesterday Alice ..." -> "Alice"; "Luckily" -> nothing
            while words and words[0].lower() in {"of", "de", "da", "van", "von", "the", "&", "and"}:
                words = words[1:]
        if not words:
            continue
        if len(words) == 1 and (_is_common(words[0]) or words[0] in {"I", "I'm"}):
            continue
        name = " ".join(words).rstrip("-")
        name = name[:-2] if name.endswith(("'s", "’s")) else name
        kind = (
            "place"
            if re.match(r"(?:St|Mt)\.?\s", name)
            else "person"
            if re.match(_TITLE + r"\s", name)
            else "name"
        )
        found.append(Entity(name, kind))
    for match in _SHAPE.finditer(text):
        if match.group(0) not in {"I", "OK", "AM", "PM"}:
            found.append(Entity(match.group(0), "product"))
    return found


def _chinese(text: str) -> list[Entity]:
    found: list[Entity] = []
    for match in _ZH_PERSON_RE.finditer(text):
        name = match.group(1) or match.group(2)
        if name and not _ZH_CITY_RE.fullmatch(name):
            found.append(Entity(name, "person"))
    found.extend(Entity(m.group(1), "name") for m in _ZH_CALLED_RE.finditer(text))
    found.extend(Entity(m.group(0), "place") for m in _ZH_CITY_RE.finditer(text))
    found.extend(Entity(m.group(1), "place") for m in _ZH_PLACE_RE.finditer(text))
    found.extend(Entity(m.group(0), "org") for m in _ZH_ORG_LEX_RE.finditer(text))
    found.extend(Entity(m.group(1), "org") for m in _ZH_ORG_RE.finditer(text))
    found.extend(
        Entity(m.group(1), "org")
        for m in _ZH_WORK_AT_RE.finditer(text)
        if not _ZH_CITY_RE.fullmatch(m.group(1))
    )
    found.extend(
        Entity(m.group(0).strip(), "product") for m in _LATIN_IN_ZH.finditer(text) if len(m.group(0)) > 1
    )
    found.extend(Entity(m.group(1), "name") for m in _QUOTED.finditer(text))
    return found


def find_entities(text: str) -> list[Entity]:
    """The entities of ``text``, first occurrence first, without duplicates (case-folded) and
    without an entity that is part of a longer one found too."""
    text = re.sub(r"\[[A-Z_]+\]", " ", text)  # redaction placeholders are no entities
    raw = _chinese(text) if re.search(_HAN, text) else []
    raw += _english(re.sub(rf"{_HAN}+", " . ", text) if raw else text)
    out: list[Entity] = []
    seen: set[str] = set()
    for ent in raw:
        name = ent.text.strip(" .,，。:：;；!?！？'\"")
        if len(name) < 2 or name.casefold() in seen or name.startswith("["):
            continue
        seen.add(name.casefold())
        out.append(Entity(name, ent.kind))
    longer = [e.text.casefold() for e in out]
    return [e for e in out if not any(e.text.casefold() != o and e.text.casefold() in o for o in longer)]


def entity_names(text: str, limit: int = MAX_ENTITIES) -> tuple[str, ...]:
    """The names of :func:`find_entities`, at most ``limit``."""
    return tuple(e.text for e in find_entities(text))[:limit]
