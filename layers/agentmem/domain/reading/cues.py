"""What the rules read from a statement's structure, in Chinese and English: the grammatical
subject (a pronoun, a possessive with a relation noun, a leading name), irrealis and modal markers
(a conditional opener, a wish or plan verb, a question's form), and the markers of a retraction,
a correction or an acceptance. Closed classes only (pronouns, relation nouns, modal verbs,
conditional conjunctions): what varies beyond them is left to the learned heads. Pure."""

from __future__ import annotations

import re

from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.reading.model import Modality, Stance, Subject

_I = re.IGNORECASE
# --------------------------------------------------------------------------- subject
RELATION_NOUNS_EN = (
    r"sister|brother|sibling|son|daughter|kids?|children|child|baby|wife|husband|partner|spouse|girlfriend|"
    r"boyfriend|fianc[ée]e?|ex|mom|mum|mother|dad|father|parents?|grand\w+|aunt|uncle|cousin|nephew|niece|"
    r"in-laws?|\w+-in-law|friend|bestie|buddy|mate|classmate|flatmate|roommate|housemate|neighbou?r|boss|"
    r"manager|colleague|coworker|co-worker|teammate|tenant|doctor|teacher|coach|therapist|"
    r"dog|cat|puppy|kitten"
)
RELATION_NOUNS_ZH = (
    r"女儿|儿子|孩子|娃|宝宝|老婆|老公|媳妇|妻子|丈夫|太太|先生|爱人|对象|男朋友|女朋友|男友|女友|前任|"
    r"妈妈|爸爸|妈|爸|母亲|父亲|爸妈|父母|家人|姐姐|妹妹|哥哥|弟弟|姐|妹|哥|弟|姐夫|嫂子|弟妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|"
    r"叔叔|阿姨|舅舅|舅妈|姑姑|姨妈|表哥|表姐|表妹|表弟|堂哥|堂姐|堂妹|堂弟|侄子|侄女|外甥|"
    r"朋友|好友|闺蜜|哥们|兄弟|同学|室友|舍友|邻居|同事|老板|领导|上司|经理|主管|医生|老师|教练|"
    r"猫|狗|女兒|兒子|媽媽|爸爸|媽|哥們|閨蜜|同學|鄰居|同事|老闆|領導"
)
_LEAD_EN = lazy_compile(
    r"^(?:(?:so|well|oh|ok(?:ay)?|yeah|yes|also|and|but|anyway|btw|by the way|update|fyi|guess what|"
    r"good news|bad news|big news|finally|actually|just so you know|so yeah|honestly)\b[\s,:!—–-]*)+",
    _I,
)
_LEAD_ZH = lazy_compile(
    r"^(?:(?:对了|另外|其实|话说|顺便说一下|告诉你|跟你说|好消息|坏消息|终于|哈哈|嗯|哦|诶|啊|所以|然后|最近)[，,：:！!\s]*)+"
)
_SPEAKER_PREFIX = lazy_compile(r"^[^:：\n]{1,40}[:：]\s+")
_APPENDED = lazy_compile(r"\s*[（(][^（）()]*[）)]\s*$")
_POSSESSED_RELATION_EN = lazy_compile(
    rf"^(?:my|our|his|her|their)\s+(?:(?:new|old|little|big|younger|older|elder|best|current|former|"
    rf"\w+'s)\s+)*(?:{RELATION_NOUNS_EN})\b",
    _I,
)
_OTHER_PRONOUN_EN = lazy_compile(r"^(?:he|she|they|his|her|their|he's|she's|they're)\b", _I)
_SELF_EN = lazy_compile(r"^(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|we'd|we'll|us|our)\b", _I)
_SELF_OBJECT_EN = lazy_compile(r"\b(?:i|i'm|i've|me|my|we|we're|our|us)\b", _I)
_ASSISTANT_EN = lazy_compile(r"^(?:you|your|you're|you've|you'd)\b", _I)
_NAME_EN = lazy_compile(
    r"^(?-i:(?!(?:I|I'm|The|This|That|These|Those|There|Here|It|It's|Its|A|An|My|Our|Your|We|You|"
    r"Today|Tomorrow|Yesterday|Last|Next|Every|Each|Some|Most|All|What|When|Where|Which|Who|How|Why|If|"
    r"Got|Just|Finally|Sold|Moved|Started|Switched|Bought|First|Now|Still|Since|After|Before|Monday|"
    r"Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)[A-Z][a-z]+)"
    r"(?:\s+(?:from|at)\s+(?:the\s+)?\w+)?(?:'s|,|\s+(?:is|was|has|had|just|got|moved|lives|works|bought|started|"
    r"switched|quit|left|joined|finally|now|and|'s))\b",
)
_POSSESSED_RELATION_ZH = lazy_compile(
    rf"^(?:我|我们|咱|咱们|他|她|他们)?(?:的|家的?|家)?(?:新|老|大|小|二|亲|好)?(?:{RELATION_NOUNS_ZH})"
)
_NAME_ZH = lazy_compile(
    r"^(?:小|老|阿)[\u4e00-\u9fff](?=[^\u4e00-\u9fff]|现在|刚|在|是|也|去|上|搬|跳|买|换|开|住|已经|终于)"
)
_OTHER_PRONOUN_ZH = lazy_compile(r"^(?:他|她|他们|她们|它)")
_SELF_ZH = lazy_compile(r"^(?:我|咱)")
# A joint subject with the speaker in it ("Nadia and I broke up", "my wife and I moved", "me and
# Tom", "我和小林分手了", "老婆跟我搬家了"): what it states is the speaker's life too.
_WITH_SELF_EN = lazy_compile(
    r"^(?:(?:me|i)\s+and\s+\S"
    r"|(?:(?:my|our)\s+[a-z-]+(?:\s+(?-i:[A-Z][\w-]+))?|(?-i:[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?))\s+and\s+(?:i|me)\b)",
    _I,
)
_WITH_SELF_ZH = lazy_compile(
    r"^(?:我(?:和|跟|与|與)|[^，。；：！？\s]{1,4}(?:和|与|與)我(?!说|說|讲|講|聊|提|抱怨|吐槽|商量))"
)
_ASSISTANT_ZH = lazy_compile(r"^(?:你|您)(?!们)")


# Relations that name an attribute of the user's own ("my manager is Alice" states the user's
# manager; "我男朋友叫小林" the user's partner): the fact is the user's, not the relation's.
ROLE_NOUNS = {
    "manager": lazy_compile(
        r"^(?:my|our)\s+(?:new\s+|current\s+)?(?:manager|boss|supervisor|lead)\b|^我(?:的|们的)?(?:新)?(?:经理|領導|领导|上司|老板|老闆|主管)",
        _I,
    ),
    "doctor": lazy_compile(
        r"^(?:my|our)\s+(?:new\s+)?(?:family\s+)?(?:doctor|gp|dentist)\b|^我(?:的|们的)?(?:家庭)?医生", _I
    ),
    "partner": lazy_compile(
        r"^(?:my)\s+(?:new\s+)?(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\b|^我(?:的)?(?:男朋友|女朋友|男友|女友|对象|老公|老婆)",
        _I,
    ),
}


def names_own_attribute(text: str, attribute: str) -> bool:
    """Whether ``text`` opens with a relation that names ``attribute`` of the user's own."""
    pattern = ROLE_NOUNS.get(attribute)
    return pattern is not None and bool(pattern.match(body(text)))


def body(text: str) -> str:
    """``text`` without a speaker prefix and the discourse openers before its subject."""
    out = _APPENDED.sub("", text.strip())  # a key hint or the question a choice answers
    out = _SPEAKER_PREFIX.sub("", out)
    out = _LEAD_EN.sub("", out)
    return _LEAD_ZH.sub("", out).strip()


def joint_subject(text: str) -> int:
    """The length of a joint subject with the speaker in it that opens ``text`` ("Nadia and I",
    "my wife and I", "我和小林"), or 0: one subject, not two clauses."""
    found = _WITH_SELF_EN.match(text) or _WITH_SELF_ZH.match(text)
    return found.end() if found else 0


def subject(text: str) -> Subject:
    """The grammatical subject's class, read from the clause's opening."""
    lead = body(text)
    if joint_subject(lead):
        return Subject.SPEAKER
    if _POSSESSED_RELATION_EN.match(lead) or _OTHER_PRONOUN_EN.match(lead) or _NAME_EN.match(lead):
        return Subject.OTHER
    if _POSSESSED_RELATION_ZH.match(lead) or _NAME_ZH.match(lead) or _OTHER_PRONOUN_ZH.match(lead):
        return Subject.OTHER
    if _SELF_EN.match(lead) or _SELF_ZH.match(lead):
        return Subject.SPEAKER
    if _ASSISTANT_EN.match(lead) or _ASSISTANT_ZH.match(lead):
        return Subject.ASSISTANT
    if re.match(r"[A-Za-z]", lead):
        # no pronoun first: a subjectless report ("Sold the old one", "Got promoted") is the
        # speaker's; a noun phrase with a first person in it ("The launch of our app") too.
        if re.match(r"^(?:the|a|an|this|that|these|those|it|there)\b", lead, _I):
            return Subject.SPEAKER if _SELF_OBJECT_EN.search(lead) else Subject.GENERIC
        return Subject.SPEAKER
    # A Chinese clause drops its subject freely: "房租现在每月四千五" is the speaker's, "里斯本物价很高"
    # the world's; the rules lean to the speaker and leave the world to the heads.
    return Subject.SPEAKER


# --------------------------------------------------------------------------- modality
_QUESTION_END = lazy_compile(r"[?？]\s*[)）]?\s*$|(?:吗|么|呢|嘛)[\s。.]*$")
_QUESTION_START_EN = lazy_compile(
    r"^(?:should|shall|would|could|can|do|does|did|is|are|am|was|were|will|what|which|where|when|how|"
    r"why|who)\b(?!.*[.!]$)",
    _I,
)
_HYPOTHETICAL = lazy_compile(
    r"^(?:if|suppose|supposing|imagine|assuming|in case|even if|what if|had i|had we|were i|were we)\b"
    r"|\b(?:if i|if we|if my)\b[^.]*\b(?:would|'d|will|'ll)\b"
    r"|^(?:如果|假如|假设|假設|要是|万一|萬一|就算|即使|哪怕|当初要是|當初要是|倘若|若是)",
    _I,
)
_WISH = lazy_compile(
    r"\b(?:i wish|we wish|i'd love|i would love|we'd love|would love to|i'd like to|i would like to|"
    r"dream(?:s|ing)? (?:of|about)|my dream|dream (?:car|house|job|home)|always wanted|hoping to|hope to|"
    r"i hope|someday|some day|one day i|would be (?:a dream|amazing|great) to|really want|wants? an?\b|"
    r"wanna|fantasi[sz]e)"
    r"|希望|梦想|夢想|想要|好想|真想|很想|一直想|以后想|以後想|有朝一日|就好了|多好|渴望|盼望|做梦都想",
    _I,
)
_PLAN = lazy_compile(
    r"\b(?:going to(?!\s+(?:the|that|this|a|an|my|our|his|her|school|work|church|bed|\w+ing)\b)|gonna|plan(?:ning)? to|plan on|intend to|about to|will|i'll|we'll|shall|"
    r"thinking (?:of|about)|considering|might|may (?:move|switch|buy|sell|quit|start|join)|aim(?:ing)? to)\b"
    r"|打算|准备|準備|计划|計劃|考虑|考慮|将要|將要|要开始|过两年|過兩年|"
    r"可能会|可能會|回头|回頭|年底(?:要|前)|以后(?:会|要)",
    _I,
)
_PLAN_DONE = lazy_compile(r"\b(?:planned|was going to|were going to)\b|原本打算|本来打算|本來打算", _I)
_NEGATED = lazy_compile(
    r"\b(?:not|never|no|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|haven't|hasn't|won't|can't|"
    r"cannot|neither|nor)\b|n't\b"
    r"|^(?:我|我们|他|她)?(?:[\u4e00-\u9fff]{0,4})?(?:不|没|沒|从来不|從來不|从没|從沒|未曾|并不|並不)",
    _I,
)


def modality(text: str, read_stance: Stance | None = None) -> tuple[Modality, bool]:
    """The statement's modality and whether the rule is exact (a question's form, a conditional
    opener: no head overrules those). ``read_stance``: :func:`stance` of ``text`` when known."""
    lead = body(text)
    if _QUESTION_END.search(lead) or _QUESTION_START_EN.match(lead):
        return Modality.QUESTION, True
    if _WISH.search(lead) and not re.search(r"\bhope (?:you|it|that)\b", lead, _I):
        return Modality.WISH, False
    if _HYPOTHETICAL.search(lead):
        return Modality.HYPOTHETICAL, True
    if (read_stance or stance(text)) in {Stance.RETRACTS, Stance.CORRECTS}:
        return Modality.ASSERTED, False  # "I don't go any more" asserts an end
    if _PLAN.search(lead) and not _PLAN_DONE.search(lead):
        return Modality.PLAN, False
    if _NEGATED.search(lead):
        return Modality.NEGATED, False
    return Modality.ASSERTED, False


# --------------------------------------------------------------------------- stance
_CORRECTS = lazy_compile(
    r"\b(?:got (?:that|it) wrong|i meant|i mean(?=,| \w+, not)|correction|correct myself|misspoke|mis-spoke|"
    r"scratch that|by mistake|mixed (?:them|it|those) up|typo|that was wrong|was wrong about|"
    r"(?:sorry|wait|oops|no)[,—–-]+\s*(?:it's|it is|i meant|that's))\b"
    r"|\b\w+,?\s+not\s+\w+[.!]?$"
    r"|记错|記錯|说错|說錯|更正|纠正|糾正|搞混|搞错|搞錯|打错|打錯|写错|寫錯|口误|口誤|^不对|^不對|前面那个不对|应该是|應該是",
    _I,
)
_ACCEPTS = lazy_compile(
    r"\b(?:you (?:sold|convinced|talked) me|go(?:ing)? with (?:your|that|the one you|it)|the one you "
    r"(?:recommended|suggested|mentioned)|(?<=\w )you (?:recommended|suggested)|your (?:suggestion|recommendation|"
    r"pick|plan)|it is\b[.!]?$|that settles it|deal[,!.]|sold[.!]$|great pick|adding it to the cart|"
    r"(?:i'll|i will) (?:take|book|order|buy|get) (?:it|that|the \w+ (?:one|you))|let's do (?:it|that))"
    r"|^(?:i chose|i went with|i picked)\b"
    r"|采纳|採納|我选定|我選定|就它了|就它吧|听你的|聽你的|你推荐的|你推薦的|你说的那|你說的那|就按你|就照你|就这个|就這個|就这款|就這款|成交|"
    r"被你说服|被你說服|就选|就選|就用它|就买它|就買它|照你的",
    _I,
)
_RETRACTS = lazy_compile(
    r"\b(?:stopped|quit|gave up|given up|no longer|not \w+(?: \w+)? any ?more|anymore|any more|"
    r"cancell?ed|left the|broke up|split up|unsubscribed|dropped out|moved out|not together|"
    r"over between|fizzled out|not doing it)\b"
    r"|不[\u4e00-\u9fff]{1,3}了|戒了|戒掉|已经戒|已經戒|早就戒|不再|不去了|不干了|不幹了|不做了|不玩了|不弹了|不彈了|退了|退掉|退出|分手|"
    r"已经不|已經不|没再|沒再|取消了|停了|不用了",
    _I,
)
_REPLACES = lazy_compile(
    r"\b(?:moved|relocated|switched|swapped|traded|changed|replaced|upgraded|now|these days|nowadays|"
    r"new|first (?:day|night|week|morning)|just (?:bought|got|signed|started|joined)|got the keys|"
    r"signed the lease|started at|joined|promoted|settled|went up|went down|down to|up to|instead|"
    r"after the (?:raise|move|reorg))\b"
    r"|搬到|搬去|搬家|换了|換了|换成|換成|改成|改坐|改用|跳槽|入职|入職|升职|升職|第一天|第一晚|新家|新房|新公司|新工作|"
    r"现在|現在|如今|开始在|開始在|转学|轉學|拿到.*钥匙|涨到|降到|终于|終於",
    _I,
)


_NEGATORS = lazy_compile(
    r"\b(?:i|we|don't|do not|doesn't|not|no|never|any ?more|completely|it|was|too|much)\b", _I
)


def retraction_topic(text: str) -> str:
    """What a retraction is about: the clause without its retraction markers and negators."""
    return _NEGATORS.sub(" ", _RETRACTS.sub(" ", body(text)))


def stance(text: str) -> Stance:
    """How the statement stands toward earlier facts, by its markers (most specific first)."""
    lead = body(text)
    if _CORRECTS.search(lead):
        return Stance.CORRECTS
    if _ACCEPTS.search(lead):
        return Stance.ACCEPTS
    if _RETRACTS.search(lead):
        return Stance.RETRACTS
    if _REPLACES.search(lead):
        return Stance.REPLACES
    return Stance.ADDS
