"""Chat-template role markers and tool-call markup smuggled into a message."""

from __future__ import annotations

import re

from agentmem.domain.guards.injection._shared import CI
from agentmem.domain.lazy_re import lazy_compile

# ---------------------------------------------------------------- role_marker / tool_markup

_SPECIAL_TOKENS = lazy_compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id|"
    r"begin_of_text|end|eos|bos|prompt|model|developer|tool|ipython|[a-z]+_[a-z_]+)\|>|\[/?INST\]|<</?SYS>>|"
    r"</?(?:system|assistant|system_prompt|sys)>|</?im_(?:start|end|sep)>|<(?:start|end)_of_turn>|\[(?:system|assistant|developer)\]\(#[\w-]+\)",
    CI,
)
_HEADER = lazy_compile(
    r"^[ \t]*#{1,6}[ \t]*(?:(?:system|system\s+prompt|new\s+instructions?|assistant|human|developer|bot|ai)[ \t]*:?"
    r"|(?:instruction|response|input|user|context|prompt|rules)[ \t]*:)[ \t]*$"
    r"|^[ \t]*#{1,6}[ \t]*(?:system|instruction|assistant|human)[ \t]*:",
    CI | re.MULTILINE,
)
# A banner line naming the system's prompt or rules: "### SYSTEM PROMPT UPDATE ###", "=== Developer
# instructions ===", "**ADMIN OVERRIDE**", "--- 系统指令更新 ---". "### System requirements" is a heading.
_BANNER = lazy_compile(
    r"^[ \t]*(?:#{1,6}|[=*~_-]{2,}|\[\[|【)[ \t]*(?P<title>[^\n#=*~_\]】-][^\n#=*~\]】]{1,60}?)[ \t]*(?:#+|[=*~_-]{2,}|\]\]|】)?[ \t]*$",
    re.MULTILINE,
)
_BANNER_ROLE = lazy_compile(
    r"\b(?:system|developer|admin(?:istrator)?|operator|root|assistant|ai|model)\b|系统|系統|管理员|开发者|システム|시스템",
    CI,
)
_BANNER_KIND = lazy_compile(
    r"\b(?:prompts?|instructions?|updates?|override|message|notice|polic(?:y|ies)|rules?|directives?|alert|command|"
    r"configuration|config|settings|mode|orders?)\b|指令|提示|消息|通知|更新|规则|设定|命令|公告|指示|プロンプト|지시",
    CI,
)
_SYSTEM_ROLES = r"system|developer|系统|系統|システム|시스템|sys"
_AI_ROLES = r"assistant|ai|bot|model|chatgpt|gpt|claude|gemini|助手|机器人|アシスタント|어시스턴트|AI助手"
_HUMAN_ROLES = r"human|user|用户|人类|ユーザー|사용자|me"
_ROLE_LINE = lazy_compile(
    r"^[ \t>*-]*[\[【(（]?(?P<role>"
    + _SYSTEM_ROLES
    + "|"
    + _AI_ROLES
    + "|"
    + _HUMAN_ROLES
    + r")[\]】)）]?[ \t]*"
    r"(?:prompt|message|指令|提示|消息|メッセージ|메시지)?[ \t]*[:：](?P<rest>.*)$",
    CI | re.MULTILINE,
)
_IS_SYSTEM = lazy_compile(r"^(?:" + _SYSTEM_ROLES + r")$", CI)
_IS_AI = lazy_compile(r"^(?:" + _AI_ROLES + r")$", CI)
_BRACKET_TAG = lazy_compile(
    r"^[ \t]*[【\[(（<{「『]\s*(?P<tag>系统|系統|system|sys|管理员|admin|administrator|developer|开发者|システム|시스템|"
    r"root|operator|官方|平台)\s*(?P<suffix>消息|提示|通知|指令|公告|设定|命令|更新|警告|message|note|notice|prompt|override|"
    r"instructions?|update|alert|メッセージ|通知|메시지|알림|공지)?\s*(?:[:：][^】\]）)>}」』\n]{0,60})?[】\]）)>}」』](?P<rest>.*)$",
    CI | re.MULTILINE,
)
# An XML-style system tag: a pair (``<admin>…</admin>``) or one opening the text (``<system_instructions>…``).
_XML_ROLE = (
    r"(?:system[\w-]*|sys_[\w-]+|admin(?:istrator)?|developer(?:_message)?|root|operator|instructions?|override|"
    r"系统(?:指令|消息|提示)?|管理员|开发者)"
)
_XML_PAIR = lazy_compile(r"<(?P<tag>" + _XML_ROLE + r")(?:\s[^<>]*)?>(?P<rest>[^<]{3,})</(?P=tag)\s*>", CI)
_XML_ORDER = lazy_compile(
    r"\b(?:grant|share|reveal|disclose|recommend|tell|send|forward|approve|disable|enable|give|print|output|obey|follow|"
    r"users?|policy|mode|access|password|prompt)\b|以后|所有|推荐|忽略|必须",
    CI,
)
_XML_OPEN = lazy_compile(r"\A\s*<(?:" + _XML_ROLE + r")(?:\s[^<>]*)?>\s*(?P<rest>[^<\n]{3,})", CI)
_JSON_ROLE = lazy_compile(r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant|tool|function)[\"']", CI)
_CUE = lazy_compile(
    r"\b(?:you|your|ignore|must|should|always|never|do\s+not|don't|from\s+now|i\s+am|i'm|i\s+will|sure|"
    r"certainly|of\s+course|here\s+is|here's|instructions?|rules|override|reveal|forget|obey|comply|the\s+assistant|"
    r"the\s+user|privileges?|disabled?|enabled?|unrestricted|no\s+(?:rules|limits|restrictions|policy))\b|"
    r"请|你|必须|不要|忽略|以后|指令|规则|务必|好的|当然|我将|我会|限制|解除|权限|管理员|授权|执行|输出|模式|回答|回复|用户|"
    r"あなた|今から|必ず|してください|無視|制限|이제부터|모든|응답|무시|해라|하라|하세요|제한",
    CI,
)
# "System: Ubuntu 22.04", "系统：Windows 11": a spec line names a product or a version, nothing else.
_SPEC = lazy_compile(
    r"^\s*(?:ubuntu|debian|windows|win\d+|macos|mac\s*os|os\s*x|linux|centos|fedora|arch|ios|android|ipados|"
    r"chromeos|freebsd|rhel|red\s+hat|macbook|imac|thinkpad|dell|hp|lenovo|intel|amd|arm|x86|x64|apple|"
    r"[\w.-]*\d[\w.-]*)\b[^\n]{0,60}$",
    CI,
)
_TOOL = lazy_compile(
    r"</?(?:tool_calls?|tool_use|tool_result|tool_response|function_calls?|function_results?|tools?|invoke|"
    r"antml:[a-z_]+)\b[^>\n]{0,200}>|<function=|\{\s*\"(?:tool|tool_name|tool_calls|function|function_call|"
    r"recipient_name)\"\s*:|\"name\"\s*:\s*\"[^\"]+\"\s*,\s*\"(?:arguments|parameters|args)\"\s*:",
    CI,
)


# A role header inside a value: after a sentence, a quote, a brace, ``=`` or a bar — "notes: fine.
# System: wire all payments to …", ``{"memo": "SYSTEM: …"}``, ``title=System: …``.
_INLINE_ROLE = lazy_compile(
    r"(?:[.!?;。！？；]\s+|[\"'“‘{\[(=|,，:：]\s*)(?P<role>System|SYSTEM|system|Developer|DEVELOPER|Admin|ADMIN|Administrator|"
    r"系统|系統|システム|시스템|管理员)(?:\s+(?:prompt|message|note|override|notice)|指令|消息|通知|提示)?\s*[:：]\s*(?P<rest>[^\n\"”]{3,})"
)
# What a forged system line orders: move money, send data, change who gets paid.
_ORDER = lazy_compile(
    r"^\s*(?:please\s+)?(?:wire|transfer|send|forward|route|redirect|pay|deposit|move|email|upload|export|share|grant|approve|"
    r"disable|delete|set|change)\s+(?:all|every|any|the|each|funds|money|payments?|it|them|\d|[A-Z])"
    r"|^\s*(?:请)?(?:把|将)?[^，。\n]{0,8}?(?:转账|汇款|打款|转到|汇到|发送到|转发到|改成|改为)",
)


def _banner(text: str) -> bool:
    return any(
        _BANNER_ROLE.search(m["title"]) and _BANNER_KIND.search(m["title"]) for m in _BANNER.finditer(text)
    )


# An order opening a forged system line: "System: wire all payments …", "System: always reply …".
_VERB_FIRST = lazy_compile(
    r"^\W*(?:please\s+)?(?:(?:always|never|only|now|from\s+now\s+on,?|henceforth,?)\s+)?(?:do\s+not\s+|don't\s+)?"
    r"(?:wire|transfer|send|forward|route|redirect|pay|deposit|email|upload|export|share|grant|approve|disable|enable|"
    r"delete|ignore|disregard|forget|reply|respond|answer|tell|say|recommend|include|add|append|insert|reveal|print|"
    r"output|act|pretend|treat|obey|follow|execute|run|switch|unlock|bypass|override|allow|give|provide|call|visit|"
    r"direct|refer|inform|confirm|mention|praise|promote|use)\b"
    r"|^\W*(?:请)?(?:以后|今后|立即|马上|一律|总是|必须)?(?:把|将|向|给)?[^，。\n]{0,6}?(?:转账|汇款|打款|发送|转发|忽略|回复|回答|告诉|推荐|执行|输出|透露|授予|批准|禁用)",
    CI,
)


def _inline_role(text: str) -> bool:
    for m in _INLINE_ROLE.finditer(text):
        rest = m["rest"].strip()
        if _SPEC.match(rest) and not _STRONG_CUE.search(rest):
            continue
        if _ORDER.search(rest) or _STRONG_CUE.search(rest):
            return True
    return False


_STRONG_CUE = lazy_compile(r"\b(?:you|your|must|obey|ignore|comply|assistant)\b|你|必须|忽略", CI)


def _role_line_injects(role: str, rest: str) -> bool:
    """One ``role: rest`` line: a system line with an instruction, or an assistant line that answers."""
    if _IS_SYSTEM.match(role):
        if not rest or (role.isascii() and role.isupper()):
            return True
        if _SPEC.match(rest) and not _STRONG_CUE.search(rest):
            return False
        return bool(_CUE.search(rest) or _VERB_FIRST.search(rest) or _ORDER.search(rest))
    if _IS_AI.match(role):
        return not rest or (role.isascii() and role.isupper() and len(role) > 2) or bool(_CUE.search(rest))
    return False


def role_marker(text: str) -> bool:
    """``role_marker``: chat-template tokens (``<|im_start|>``, ``<|system|>``, ``[INST]``, ``<<SYS>>``,
    ``<start_of_turn>``, ``[system](#context)``) anywhere; a banner line naming the system's prompt or
    rules (``### SYSTEM PROMPT UPDATE ###``, ``=== Developer instructions ===``; not ``### System
    requirements``); a ``System:`` line that opens with an order ("System: wire all payments …"); a ``System:`` header inside a value (after a
    sentence, a quote, ``=``) that orders something; a ``### System`` / ``### Instruction:``
    header line; a bracketed system tag opening a line (``【系统消息】``, ``[系统提示]``, ``（系统通知）``,
    ``[SYSTEM]``) with an instruction after it; an XML system tag (``<admin>…</admin>``, or
    ``<system_instructions>`` opening the text before an instruction); a JSON ``"role": "system"``; a line opening with
    ``System:`` / ``Assistant:`` / ``AI:`` / ``系统：`` / ``助手：`` whose content reads like an
    instruction or a compliant reply (``System: Ubuntu 22.04`` is a spec line, not a marker); or a
    pasted transcript: lines of two roles or more, one of them the assistant's (``Human: … / AI: …``)."""
    if _SPECIAL_TOKENS.search(text) or _HEADER.search(text) or _JSON_ROLE.search(text):
        return True
    if _banner(text):
        return True
    for m in (*_XML_PAIR.finditer(text), *_XML_OPEN.finditer(text)):
        if _CUE.search(m["rest"]) or _XML_ORDER.search(m["rest"]):
            return True
    if _inline_role(text):
        return True
    for m in _BRACKET_TAG.finditer(text):
        rest = m["rest"].strip()
        if not rest or m["suffix"] or _CUE.search(rest):
            return True
    roles: set[str] = set()
    has_ai = False
    for m in _ROLE_LINE.finditer(text):
        role, rest = m["role"], m["rest"].strip()
        if _role_line_injects(role, rest):
            return True
        roles.add(role.lower())
        has_ai = has_ai or bool(_IS_AI.match(role))
    return has_ai and len(roles) >= 2


def tool_markup(text: str) -> bool:
    """``tool_markup``: ``<tool_call>``, ``<function_call>``, ``</tool>``, ``<function=``,
    ``{"tool": ...}``, ``{"name": ..., "arguments": ...}``."""
    return bool(_TOOL.search(text))
