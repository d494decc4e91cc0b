"""What the injection detectors share: clause splitting, the qualifiers that make a target the
agent's rather than the speaker's, and the phrasing about the future that raises a score."""

from __future__ import annotations

import re

from agentmem.domain.lazy_re import LazyPattern, Regex, lazy_compile

CI = re.IGNORECASE  # case-insensitive
STOP = r"[^\n。！？!?，,；;]"  # one character inside a clause

FUTURE = lazy_compile(
    r"\b(?:from\s+now\s+on|going\s+forward|henceforth|from\s+this\s+point|in\s+(?:all\s+)?(?:the\s+)?"
    r"(?:future|subsequent)|always|every\s+time|each\s+time|whenever|remember|never\s+forget|"
    r"permanently|forever)\b|以后|今后|从现在开始|从今以后|从此|往后|每次|总是|始终|一直|永远|记住|牢记",
    CI,
)
QUALIFIER = lazy_compile(
    r"\b(?:all|any|every|previous|prior|above|earlier|preceding|foregoing|former|original|initial|"
    r"existing|system|developer|default|your|these|those)\b|"
    r"之前|以前|先前|此前|以上|上面|上述|前面|前述|原有|原来|原始|原本|初始|所有|全部|一切|任何|你|系统|开发者|默认",
    CI,
)
SELF = lazy_compile(r"\b(?:my|our|mine|i|me|myself)\b|我", CI)


_CLAUSE_END = lazy_compile(r"[。！？\n；;]|[.!?](?=\s|$|[\"'”’)\]])")


def clauses(text: str) -> list[str]:
    """Sentences and semicolon clauses; ``.``, ``!`` and ``?`` end one only before a space, a closing
    quote or the end, so a URL's query (``t.gif?u=1``) stays inside its sentence."""
    return [c for c in _CLAUSE_END.split(text) if c.strip()]


def mentions(text: str, gate: Regex) -> bool:
    """Whether lower-cased ``text`` holds one of a gate's stems: a cheap test in front of a
    detector's patterns (each stem list is a superset of the words its patterns need)."""
    return gate.search(text) is not None


def stems(words: str) -> LazyPattern:
    """``"a b|c d"`` -> a pattern that finds ``a b`` or ``c d`` anywhere: a stem list written as one
    string, compiled once (one regex scan is cheaper than one substring scan per stem)."""
    literal = sorted({w for w in words.split("|") if w}, key=len, reverse=True)
    return lazy_compile("|".join(map(re.escape, literal)))
