"""Attacks on the agent's own instructions: overriding them, or asking for them."""

from __future__ import annotations

import re

from agentmem.domain.guards.injection._shared import CI, QUALIFIER, SELF, STOP

# ---------------------------------------------------------------- override_instructions

_NOUN_EN = (
    r"(?:instructions?|rules?|prompts?|directives?|guidelines?|guardrails?|restrictions?|constraints?|"
    r"polic(?:y|ies)|programming|commands?|orders|system\s+(?:prompt|message))"
)
_OVERRIDE_EN = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip|discard|abandon|neglect|"
    r"(?:do\s+not|don't|never|stop|no\s+longer)\s+(?:follow(?:ing)?|obey(?:ing)?|adhere\s+to|comply\s+with))"
    r"\s+(?P<mid>(?:[a-z'-]+\s+){0,4}?)" + _NOUN_EN + r"\b",
    CI,
)
_OVERRIDE_EN_ALL = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?|everything\s+|anything\s+)(?:the\s+)?"
    r"(?:above|before|previously|prior|so\s+far|you(?:'ve|\s+have)?\s+(?:been\s+|were\s+)?"
    r"(?:told|taught|instructed|given|programmed|trained))\b",
    CI,
)
_NOUN_ZH = (
    r"(?:指令|指示|提示词|规则|设定|约束|限制|命令|准则|守则|规定|system\s*prompt|prompt|"
    r"instructions?|rules)"
)
_OVERRIDE_ZH = re.compile(
    r"(?:忽略|忽视|无视|漠视|不要理会|不用理会|别理会|不要管|别管|抛开|抛弃|丢弃|忘记|忘掉|绕过|跳过|推翻|"
    r"不要遵守|不再遵守|不必遵守|不用遵守|无需遵守|停止遵守|别遵守|不要遵循|不再遵循|违反|打破|"
    r"\b(?:ignore|disregard|forget|bypass|override)\b)"
    r"(?P<mid>" + STOP + r"{0,12}?)" + _NOUN_ZH + r"(?!音|框|窗|栏)",
    CI,
)
_OVERRIDE_ZH_BARE = re.compile(
    r"(?:忽略|无视|忽视|不要理会|别管)掉?(?:以上|上面|上述|前面|之前|先前|此前)的?(?:所有|全部|一切)?的?(?:内容)?"
    r"(?=[\s，,。.！!；;：:]|$|并|然后|and\b)"
)
_FORGET_ZH = re.compile(
    r"忘(?:记|掉)你(?:之前|以前|此前|先前)?(?:被告知|被设定|收到|学到|所知道|知道)?的?(?:一切|所有|全部)"
    r"|把(?P<mid>"
    + STOP
    + r"{0,10}?)"
    + _NOUN_ZH
    + r"(?:全|都|统统|全部)?(?:忘掉|忘记|忽略|无视|抛弃|丢掉|清空|作废)"
)
# "never ignore safety instructions", "不要忽略安全提示": a negated override is advice, not an attack.
_NEGATED = re.compile(
    r"(?:\b(?:never|not|don't|do\s+not|shouldn't|mustn't|cannot|can't|won't)\s+(?:\w+\s+)?"
    r"|(?:不要|别|不能|不可以?|切勿|请勿|不得|不会|千万别)\s*)$",
    CI,
)


def _qualified(mid: str) -> bool:
    return bool(QUALIFIER.search(mid)) and not SELF.search(mid)


def override_instructions(text: str) -> bool:
    """``override_instructions``: ignore/disregard/forget/bypass + a qualified target ("all previous
    instructions", "your rules", "everything you were told"; "忽略之前的所有指令", "无视之前的规则",
    "不要遵守之前的…", "忽略以上"). The qualifier is required ("previous", "above", "your", "system",
    "之前", "以上", "你的", ...) and a speaker's own things are exempt ("ignore my previous
    instructions", "请忽略我上一条消息里的错别字"); a negated override ("never ignore safety
    instructions") is advice, not an attack."""
    for pattern in (_OVERRIDE_EN, _OVERRIDE_ZH, _OVERRIDE_EN_ALL, _OVERRIDE_ZH_BARE, _FORGET_ZH):
        for m in pattern.finditer(text):
            if _NEGATED.search(text[max(0, m.start() - 24) : m.start()]):
                continue
            mid = m.groupdict().get("mid")
            if mid is None or _qualified(mid):
                return True
    return False


# ---------------------------------------------------------------- prompt_exfiltration

_PX_EN = re.compile(
    r"\b(?:reveal|show|print|repeat|output|display|tell|give|leak|dump|share|disclose|expose|"
    r"write\s+out|spell\s+out|recite|echo|provide|send|paste|copy|return|translate|read\s+(?:back|out))"
    r"\s+(?:(?:me|us|back|out)\s+)?(?P<mid>(?:[\w'-]+\s+){0,4}?)"
    r"(?:(?P<strong>system\s+(?:prompt|message|instructions?)|(?:initial|original|hidden|secret|internal|"
    r"developer|pre-?)\s*(?:prompt|instructions?|message))|(?P<weak>prompt|instructions?|rules|guidelines|"
    r"directives|configuration))\b"
    r"(?!\s+(?:engineering|examples?|templates?|design|course|tutorials?|library|best\s+practices|"
    r"writing|of|for\s+(?:my|a|an|our)\b))",
    CI,
)
_PX_EN_QUESTION = re.compile(
    r"\bwhat\s+(?:are|were|is|was)\s+(?P<det>your|the)\s+(?:(?:exact|full|original|initial|hidden|secret|"
    r"current|actual|real)\s+)*(?:(?P<strong>system\s+(?:prompt|message|instructions))|instructions|rules|"
    r"guidelines|directives|prompt)\b(?!\s+(?:for|on|about|regarding|of|to|when|in)\b)"
    r"|\bwhat\s+(?:were\s+you|have\s+you\s+been)\s+(?:told|instructed|programmed)\s+(?:to\s+do|by)\b"
    r"|\b(?:repeat|print|output|recite|copy|echo)\s+(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:text|words|"
    r"content|everything|all)\s+(?:above|before\s+this|preceding)"
    r"|\b(?:starting|beginning)\s+with\s+[\"']?you\s+are\b",
    CI,
)
_PX_ZH = re.compile(
    r"(?:泄露|泄漏|透露|输出|打印|显示|展示|告诉我|给我看|发给我|发我|复述|重复|公开|说出|念出|列出|给出|"
    r"提供|贴出|翻译|分享|\b(?:reveal|show|print|repeat|output|tell\s+me|give\s+me)\b)"
    r"(?P<mid>" + STOP + r"{0,8}?)"
    r"(?:(?P<strong>系统提示词|系统指令|系统级指令|system\s*prompt|系统\s*prompt|(?:初始|原始|隐藏|内部|预设|底层)"
    r"(?:指令|提示词?|设定|prompt))|(?P<weak>系统提示|提示词|指令|设定|规则|prompt|instructions))",
    CI,
)
_PX_ZH_QUESTION = re.compile(
    r"你的(?:系统)?(?:提示词|指令|system\s*prompt|prompt|初始设定)(?:是什么|有哪些|是啥|内容是)|"
    r"把"
    + STOP
    + r"{0,6}?(?:系统提示词|系统指令|system\s*prompt|系统\s*prompt|你的(?:提示词|指令|设定|prompt))"
    + STOP
    + r"{0,6}?(?:输出|打印|显示|发|告诉|给我|泄露|透露|复述|贴|写出|公开)|"
    r"你(?:收到|被给予|被设定|被赋予)了?(?:什么|哪些)(?:指令|提示词)",
    CI,
)


def prompt_exfiltration(text: str) -> bool:
    """``prompt_exfiltration``: reveal/print/repeat/tell + the system prompt or *your*
    instructions; "what are your instructions"; "repeat the text above"; "泄露/输出/告诉我 系统提示词".
    Not "the system prompt engineering course" (no request) nor "give me a system prompt for my bot"."""
    for m in _PX_EN.finditer(text):
        mid = m["mid"]
        if re.search(r"\b(?:a|an|my|our|some|this|own)\b", mid, CI):
            continue
        if m["strong"] or re.search(r"\byour\b", mid, CI):
            return True
    for m in _PX_EN_QUESTION.finditer(text):
        if m["det"] is None or m["det"].lower() == "your" or m["strong"]:
            return True
    for m in _PX_ZH.finditer(text):
        mid = m["mid"]
        if "我" in mid or re.search(r"\b(?:a|an|my|our)\b", mid, CI):
            continue
        if m["strong"] or re.search(r"你|以上|上面|上述|前面|\byour\b", mid, CI):
            return True
    return bool(_PX_ZH_QUESTION.search(text))
