"""Small talk by structure: a sentence is small talk when it states no first-person fact and
carries no durable content.

Durable content is a named thing, a number or date, or a content word outside the social
vocabulary (greetings, thanks, laughter, weather, evaluations, pleasantries, time deixis). A
sentence with a first-person subject is small talk only when nothing but that vocabulary is left
("I'm good, thanks", "我很好"); without one, an evaluative sentence about one thing is small talk
as well ("Doudou must be adorable!", "豆豆一定很可爱！", "Paris is lovely!"), and so is one whose
only subject is the listener ("You're so helpful", "你真厉害"). Emoji-only text and laughter
are small talk. Pure.
"""

from __future__ import annotations

import re
import unicodedata

from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.text import language, terms

__all__ = ["is_small_talk"]

_SOCIAL_EN_WORDS = (
    "absolutely adorable amazing awesome beautiful best bye care catch chat cheers cold congrats congratulations "
    "cool cozy cute day definitely delightful doing enjoy excited exciting fab fabulous fantastic feel feels fine "
    "fun glad good gorgeous great happy hard hear helpful hope hot incredible kind later look looks love lovely "
    "meet meeting morning afternoon evening night nice outside perfect pleasure pretty proud rain raining rainy "
    "really see smart snow snowing soon sorry sound sounds sunny cloudy windy chilly warm humid weather super "
    "sweet take talk thank thanks thing time today tonight totally tough true welcome wonderful wow yeah yay "
    "well must sure glad lucky brilliant clever genius appreciate appreciated anytime bless haha hehe lol lmao "
    "indeed quite so such fair enough right interesting cheer terrific splendid marvelous marvellous hug hugs "
    "you're you've you'll you'd they're he's she's we're there's"
)
_WEATHER_EN = frozenset(
    terms("weather rain raining rainy sunny cloudy windy snow snowing hot cold warm chilly humid")
)
_SOCIAL_EN = frozenset(terms(_SOCIAL_EN_WORDS))
# Chinese social vocabulary, removed longest first before counting what is left.
_SOCIAL_ZH = sorted(
    [
        "早上好",
        "中午好",
        "下午好",
        "晚上好",
        "晚安",
        "你好",
        "您好",
        "大家好",
        "再见",
        "拜拜",
        "回头见",
        "谢谢",
        "多谢",
        "感谢",
        "辛苦了",
        "辛苦",
        "不客气",
        "没关系",
        "哈哈",
        "呵呵",
        "嘿嘿",
        "嘻嘻",
        "哈",
        "呵",
        "嘿",
        "嘻",
        "天气",
        "下雨",
        "下雪",
        "晴天",
        "阴天",
        "多云",
        "刮风",
        "太阳",
        "好热",
        "好冷",
        "热",
        "冷",
        "凉快",
        "暖和",
        "闷热",
        "舒服",
        "今天",
        "今晚",
        "明天",
        "外面",
        "真不错",
        "不错",
        "挺好",
        "很好",
        "真好",
        "太好了",
        "好棒",
        "真棒",
        "太棒了",
        "棒",
        "厉害",
        "聪明",
        "可爱",
        "漂亮",
        "帅",
        "赞",
        "牛",
        "优秀",
        "专业",
        "靠谱",
        "有意思",
        "有趣",
        "好玩",
        "开心",
        "高兴",
        "快乐",
        "幸福",
        "加油",
        "恭喜",
        "祝贺",
        "祝你",
        "一定",
        "肯定",
        "应该",
        "真的",
        "真是",
        "实在",
        "非常",
        "特别",
        "超级",
        "十分",
        "好的",
        "好吧",
        "嗯",
        "哦",
        "啊",
        "呀",
        "吧",
        "呢",
        "啦",
        "嘛",
        "哇",
        "喔",
        "了",
        "的",
        "很",
        "真",
        "太",
        "挺",
        "蛮",
        "好",
        "是",
        "也",
        "都",
        "还",
        "又",
        "就",
        "这",
        "那",
        "你",
        "您",
        "适合",
        "出去",
        "走走",
        "一下",
        "样子",
        "感觉",
        "看起来",
        "听起来",
        "天",
        "气",
        "呐",
        "耶",
        "噢",
    ],
    key=len,
    reverse=True,
)
_SOCIAL_ZH_RE = lazy_compile("|".join(re.escape(w) for w in _SOCIAL_ZH))
_FIRST_PERSON_EN = lazy_compile(
    r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|we|we're|we've|our|ours|us)\b", re.IGNORECASE
)
_SECOND_PERSON_EN = lazy_compile(
    r"^(?:you|you're|you are|your|thank you|thanks)\b|\byou(?:'re| are)\b", re.IGNORECASE
)
_LAUGHTER = lazy_compile(
    r"^(?:(?:ha|he|hi|ho){2,}h?|l+o+l+|lmf?ao+|rofl|xd+|233+|哈{2,}|呵{2,}|嘿{2,}|嘻{2,})$", re.I
)
_DURABLE_SHAPE = lazy_compile(
    r"\d|[A-Z][a-z]+[A-Z]|[A-Z]{2,}|[「《“\"][^」》”\"]+[」》”\"]|(?<=[\u4e00-\u9fff])[A-Za-z]{2,}"
)


def speaks_of_self(text: str) -> bool:
    """Whether ``text`` says something about its speaker (a first-person word, en or zh)."""
    return bool(_FIRST_PERSON_EN.search(text)) or "我" in text or "咱" in text


def _letters(text: str) -> str:
    """Letters and digits only (emoji, symbols and punctuation gone)."""
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def _en_content(text: str) -> list[str]:
    return [t for t in terms(text) if t not in _SOCIAL_EN]


def _proper_nouns(text: str) -> list[str]:
    """Capitalised words (a name, a place) in English text."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", text)
    return [w for w in words if w[0].isupper() and w not in {"I", "I'm", "I've", "I'd", "I'll"}]


def is_small_talk(sentence: str) -> bool:
    """Whether ``sentence`` is a greeting, thanks, laughter, weather or a pleasantry: no
    first-person fact and no durable content (see the module docstring)."""
    letters = _letters(sentence)
    if not letters or _LAUGHTER.match(letters):
        return True
    if _DURABLE_SHAPE.search(sentence):
        return False
    if language(sentence) == "zh":
        first_person = "我" in sentence or "咱" in sentence
        left = _SOCIAL_ZH_RE.sub("", re.sub(r"[我咱们]", "", _letters(sentence)))
        if not left:
            return True
        # "豆豆一定很可爱！": one short subject and an evaluation, no fact of the user's
        evaluative = len(left) < len(_letters(sentence)) / 2
        return not first_person and len(left) <= 2 and evaluative
    content = _en_content(sentence)
    if not content:
        return True
    if _FIRST_PERSON_EN.search(sentence):
        return False
    if len(content) > 1:
        return False
    if _SECOND_PERSON_EN.search(sentence.strip()) or _WEATHER_EN & set(terms(sentence)):
        return True  # "You're a lifesaver!", "Nice weather in Boston today"
    # "Doudou must be adorable!", "Paris is lovely!": one named thing evaluated, nothing stated
    named = {t for p in _proper_nouns(sentence) for t in terms(p)}
    return sentence.rstrip().endswith("!") and bool(set(content) & named)
