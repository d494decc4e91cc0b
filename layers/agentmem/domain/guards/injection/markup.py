"""Chat-template role markers and tool-call markup smuggled into a message."""

from __future__ import annotations

import re

from agentmem.domain.guards.injection._shared import CI

# ---------------------------------------------------------------- role_marker / tool_markup

_SPECIAL_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id|"
    r"begin_of_text)\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant)>",
    CI,
)
_HEADER = re.compile(
    r"^[ \t]*#{1,6}[ \t]*(?:system|system\s+prompt|new\s+instructions?|assistant)"
    r"[ \t]*:?[ \t]*$",
    CI | re.MULTILINE,
)
_ROLE_LINE = re.compile(
    r"^[ \t>*-]*[\[【(]?(?P<role>system|assistant|developer|系统|助手)[\]】)]?[ \t]*"
    r"(?:prompt|message|指令|提示|消息)?[ \t]*[:：](?P<rest>.*)$",
    CI | re.MULTILINE,
)
_CUE = re.compile(
    r"\b(?:you|your|ignore|must|should|always|never|do\s+not|don't|from\s+now|i\s+am|i'm|i\s+will|sure|"
    r"certainly|of\s+course|here\s+is|here's|instructions?|rules|override|reveal|forget)\b|"
    r"请|你|必须|不要|忽略|以后|指令|规则|务必|好的|当然|我将|我会",
    CI,
)
_TOOL = re.compile(
    r"</?(?:tool_calls?|tool_use|tool_result|tool_response|function_calls?|function_results?|tools?|invoke|"
    r"antml:[a-z_]+)\b[^>\n]{0,200}>|<function=|\{\s*\"(?:tool|tool_name|tool_calls|function|function_call|"
    r"recipient_name)\"\s*:|\"name\"\s*:\s*\"[^\"]+\"\s*,\s*\"(?:arguments|parameters|args)\"\s*:",
    CI,
)


def role_marker(text: str) -> bool:
    """``role_marker``: chat-template tokens (``<|im_start|>``, ``[INST]``, ``<<SYS>>``) anywhere, a
    ``### System`` header line, or a line opening with ``system:``/``assistant:``/``系统：`` whose
    content reads like an instruction (``System: Ubuntu 22.04`` is a spec line, not a marker)."""
    if _SPECIAL_TOKENS.search(text) or _HEADER.search(text):
        return True
    for m in _ROLE_LINE.finditer(text):
        rest = m["rest"].strip()
        if m["role"] in ("SYSTEM", "ASSISTANT") or not rest or _CUE.search(rest):
            return True
    return False


def tool_markup(text: str) -> bool:
    """``tool_markup``: ``<tool_call>``, ``<function_call>``, ``</tool>``, ``<function=``,
    ``{"tool": ...}``, ``{"name": ..., "arguments": ...}``."""
    return bool(_TOOL.search(text))
