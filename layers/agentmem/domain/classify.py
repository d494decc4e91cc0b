"""Rule classification (docs/design.md "Classification: rules first"): identity / preference / fact / episodic / tool_failure /
general. Rules first: zero cost, explainable; an LLM may refine what they leave as ``general``
when one is configured.

Never ``policy`` (:data:`~agentmem.domain.authority.InferredCategory`): a text shaped like a
standing rule ("from now on always answer in French", "以后都用简体中文") is the writer's
``preference``. Only an authorised write that states the category makes a policy
(:mod:`agentmem.domain.authority`)."""

from __future__ import annotations

import re

from agentmem.domain.authority import InferredCategory, conversational_category
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import Category

_RULES: tuple[tuple[InferredCategory, re.Pattern[str]], ...] = (
    (
        Category.TOOL_FAILURE,
        re.compile(
            r"(?:工具|接口|调用|脚本|命令|插件|API|api).{0,12}(?:失败|报错|出错|超时|异常|挂了)|"
            r"\b(?:tool|api|call|request|command|script|plugin|endpoint)\b.{0,30}\b(?:failed|fails|error(?:ed)?|timed out|timeout|crash(?:ed)?|returned (?:4|5)\d\d)\b",
            re.IGNORECASE,
        ),
    ),
    (
        Category.PREFERENCE,  # a standing rule the writer sets for their own answers
        re.compile(
            r"(?:以后|今后|往后|从现在(?:开始|起)|每次|一律|务必|必须|始终|总是).{0,20}(?:用|回答|回复|写|报告|输出|给|按|不要|别)|"
            r"所有.{0,10}都(?:要|用|得)|(?:不要|别|禁止|不许|不准).{0,6}(?:编造|使用|用|提到|写|回答|透露)|"
            r"\b(?:from now on|going forward|in (?:the )?future|always|never|make sure to|don't ever|do not ever)\b.{0,40}\b(?:answer|reply|respond|use|write|include|format|call|address|say|mention|give|report)|"
            r"\b(?:answer|reply|respond|write)\b.{0,20}\b(?:in (?:english|chinese)|always|only)\b|"
            r"\bplease (?:skip|avoid|don't|do not|never|always|use|keep|write|answer|reply|format|stick to|stop)\b|"
            r"\bwhen you (?:answer|reply|respond|write|explain)\b|\bin your (?:answers|replies|responses)\b|"
            r"\b(?:all|any|every) (?:the )?(?:scripts?|reports?|answers?|code|emails?|docs?|queries|sql|replies)\b.{0,40}\b(?:should|must|need to|have to)\b|"
            r"\b(?:should|must) target\b|\btarget (?:python|node|java|go)\b|"
            r"\b(?:should|must|need to|has to|have to) (?:always|never)\b|\balways (?:be|use|follow|include|round|cite)\b|"
            r"千万(?:别|不要)|都(?:要|先|得|用|按)|一律|统一(?:用|按)|(?:直接|先)用.{0,12}(?:就行|即可)|(?:称呼|叫|喊)我",
            re.IGNORECASE,
        ),
    ),
    (
        Category.IDENTITY,
        re.compile(
            r"我叫|我的名字|叫我|我是(?!说)|我(?:今年)?\d+岁|我住|我家在|我在.{0,10}(?:工作|上班|做|读书|上学)|我的(?:职业|工作|岗位|经理|领导|老板|上司)|我(?:老婆|老公|妻子|丈夫|女儿|儿子|孩子|妈妈|爸爸)|"
            r"\bmy name\b|\bcall me\b|\bI(?:'m| am) (?:a|an|the|from|\d+)\b|\bI work\b|\bI live\b|\bI(?:'ve| have)? moved\b|"
            r"\bI(?:'m| am) (?:on[- ]call|based|married|retired|pregnant|studying|majoring)\b|\bI use a (?:screen reader|wheelchair|hearing aid)\b|"
            r"\bI (?:mainly |mostly |usually )?(?:handle|manage|lead|run|own|cover|look after|am responsible for|take care of|support)\b(?!\s+(?:it|this|that|them)\b)|"
            r"我(?:最近|目前|现在|平时)?(?:主要)?(?:负责|处理|管理|对接|跟进|带)|"
            r"\bmy (?:job|role|manager|boss|wife|husband|partner|daughter|son|kids?|children|mom|dad|mother|father|family)\b|\bI(?:'m| am) based\b",
            re.IGNORECASE,
        ),
    ),
    (
        Category.PREFERENCE,
        re.compile(
            r"\b(?:don't|do not|never|can't|cannot|won't) (?:eat|drink|mix|touch|stand)\b|不喝|不碰|"
            r"喜欢|不喜欢|偏好|爱吃|讨厌|不吃|不能吃|不太能吃|忌口|过敏|素食|吃素|习惯|希望|宁愿|别太|不要太|最爱|"
            r"\b(?:like|love|enjoy|prefer|hate|dislike|favou?rite|can't stand|allergic|vegetarian|vegan|fan of|into)\b",
            re.IGNORECASE,
        ),
    ),
    (
        Category.EPISODIC,
        re.compile(
            # past events; plans and schedules ("答辩定在5月20号") are facts, not episodes
            r"昨天|今天|前天|上周[一二三四五六日末]?|上个?月|去年|前年|刚刚|刚才|那天|上次|(?:去|看|见|参加|吃|买)了|"
            r"\b(?:yesterday|today|last (?:week|month|year|night|weekend|summer|winter)|this (?:morning|afternoon)|ago|went|visited|attended|met|saw|watched)\b",
            re.IGNORECASE,
        ),
    ),
)

_FACT_HINT = lazy_compile(r"是|有|在|为|\b(?:is|are|was|were|has|have)\b|\d", re.IGNORECASE)


def classify(text: str, hint: str | None = None) -> InferredCategory:
    """The category of one fact. ``hint`` (from a key pattern or the extractor) wins when given,
    ``policy`` read as ``preference``."""
    if hint:
        try:
            return conversational_category(Category(hint))
        except ValueError:
            pass
    for category, pattern in _RULES:
        if pattern.search(text):
            return category
    return Category.FACT if _FACT_HINT.search(text) else Category.GENERAL
