"""Task-memory compression: a session's task notes past a token threshold are folded, not cut.

:func:`compress_notes` keeps the notes verbatim while they fit. Past the bound it folds the oldest
note first into its *key sentences* — the sentences that carry a number, a date or time, a name
or a conclusion, each kept word for word — and drops its other sentences; the folded notes are
joined into one "earlier notes" line. The newest note (the task's current state) is never
folded. If every older note is folded and the result is still over, the key sentences shrink to
their key clauses (the parts between commas that carry the key), then the oldest folded parts are
left out (counted in :attr:`CompressedNotes.omitted`); a newest note too long for the bound on
its own is cut. The result always fits the bound (tokens by
:func:`~agentmem.domain.text.estimate_tokens`, and characters when a character bound is given).
Chinese and English alike. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.text import estimate_tokens, language, split_sentences

__all__ = ["CompressedNotes", "compress_notes", "is_key", "key_parts"]

_MONTHS = (
    "january|february|march|april|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun"
_CN_NUM = "零一二三四五六七八九十百千万亿两半"
_CN_UNIT = "个天年月日号点元块公里米次人间晚小时分钟秒岁周倍层台份张件条项名位家所%％"
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚"
    "卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_CONCLUSION_EN = (
    r"so|therefore|thus|hence|conclude[ds]?|conclusion|decided?|decision|result(?:ed)?|found|"
    r"confirm(?:s|ed)?|chose|chosen|choose|picked|selected|root\s+cause|caused?\s+by|because|fixed|"
    r"resolved|solved|works|worked|failed|fails|succeeded|done|approved|rejected|agreed|will\s+use|"
    r"going\s+with|switch(?:ed)?\s+to|must|need(?:s|ed)?\s+to"
)
_CONCLUSION_ZH = (
    "因此|所以|于是|结论|决定|结果|确认|发现|选定|选择|选了|采用|改用|原因|导致|因为|已解决|解决了|修复|失败|成功|"
    "完成|通过|批准|同意|拒绝|必须|需要"
)

_KEY = lazy_compile(
    r"[0-9０-９]"  # numbers, amounts, times, ISO dates, versions
    rf"|[{_CN_NUM}]+[{_CN_UNIT}]"  # 三天, 两个, 五公里, 十点
    rf"|(?i:\b(?:{_MONTHS}|{_DAYS}|today|tomorrow|yesterday|tonight|noon|midnight|weekend)\b)"
    r"|今天|明天|昨天|后天|前天|今晚|上午|下午|晚上|周末|[上下本这]周|[上下本这]个?月|星期[一二三四五六日天]|周[一二三四五六日]"
    r"|(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9&'’-]+|\b[A-Z]{2,}\b|\b[a-z]+[A-Z][A-Za-z]*\b"  # names, acronyms, camelCase
    rf"|[{_SURNAMES}][\u4e00-\u9fff]{{1,2}}(?=说|认为|建议|负责|表示|确认|同意|先生|女士|老师|经理|总|医生)"
    r"|《[^》]+》|“[^”]+”|「[^」]+」"  # titles and quoted names
    rf"|(?i:\b(?:{_CONCLUSION_EN})\b)|{_CONCLUSION_ZH}"
)
_CLAUSE = lazy_compile(r"(?<=[,，、;；:：])\s*")

_EARLIER = {"zh": "此前记录：", "en": "earlier notes: "}
_OMITTED = {"zh": "（另有 {n} 条更早的内容从略）", "en": "(+{n} earlier parts omitted)"}
_JOIN = " | "


def is_key(text: str) -> bool:
    """Whether ``text`` carries a number, a date or time, a name or a conclusion (zh or en)."""
    return _KEY.search(text) is not None


def key_parts(note: str) -> list[str]:
    """The sentences of ``note`` that carry a key (:func:`is_key`), word for word, in order."""
    return [s for s in split_sentences(note) if is_key(s)]


def _key_clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence`` (split after commas, semicolons, colons) that carry a key."""
    clauses = [c.strip() for c in _CLAUSE.split(sentence) if c.strip()]
    kept = [c for c in clauses if is_key(c)]
    return kept or clauses[:1]


@dataclass(frozen=True, slots=True)
class CompressedNotes:
    """The notes to show, oldest first (a folded "earlier notes" line first when any was folded);
    ``folded``: how many original notes were folded into it; ``omitted``: key parts left out;
    ``cut``: the newest note had to be shortened (nothing else fit)."""

    notes: tuple[str, ...]
    folded: int = 0
    omitted: int = 0
    cut: bool = False


def _fits(lines: Sequence[str], max_tokens: int, max_chars: int | None) -> bool:
    text = "\n".join(lines)
    if max_chars is not None and sum(len(line) for line in lines) > max_chars:
        return False
    return estimate_tokens(text) <= max_tokens


def compress_notes(notes: Sequence[str], *, max_tokens: int, max_chars: int | None = None) -> CompressedNotes:
    """``notes`` (oldest first) within ``max_tokens`` (and ``max_chars`` summed over the lines,
    when given): verbatim when they fit, else folded oldest first (see the module docstring)."""
    notes = [n for n in notes if n.strip()]
    if _fits(notes, max_tokens, max_chars):
        return CompressedNotes(tuple(notes))
    lang = language(" ".join(notes)) if notes else "en"
    prefix = _EARLIER.get(lang, _EARLIER["en"])

    def folded_line(parts: Sequence[str], omitted: int) -> list[str]:
        if not parts and not omitted:
            return []
        tail = (" " + _OMITTED.get(lang, _OMITTED["en"]).format(n=omitted)) if omitted else ""
        return [prefix + _JOIN.join(parts) + tail]

    parts: list[str] = []
    folded = 0
    newest = notes[-1:]
    while folded < len(notes) - 1:  # fold the oldest note first, keeping its key sentences
        parts += key_parts(notes[folded])
        folded += 1
        lines = folded_line(parts, 0) + notes[folded:]
        if _fits(lines, max_tokens, max_chars):
            return CompressedNotes(tuple(lines), folded)
    parts = [c for p in parts for c in _key_clauses(p)]  # then key clauses only
    omitted = 0
    while parts:
        lines = folded_line(parts, omitted) + newest
        if _fits(lines, max_tokens, max_chars):
            return CompressedNotes(tuple(lines), folded, omitted)
        parts.pop(0)  # leave out the oldest part
        omitted += 1
    # Nothing older fits beside the newest note: it alone, cut to the bound if it must be.
    shortened = tuple(c for c in (_cut(line, max_tokens, max_chars) for line in newest) if c)
    return CompressedNotes(shortened, folded, omitted, cut=shortened != tuple(newest))


def _cut(line: str, max_tokens: int, max_chars: int | None) -> str:
    """``line`` shortened from its end (marked "…") until it fits: a last resort for a newest
    note too long on its own."""
    size = len(line) if max_chars is None else min(len(line), max_chars)
    while size > 0:
        cut = line if size >= len(line) else line[: size - 1].rstrip() + "…"
        tokens = estimate_tokens(cut)
        if tokens <= max_tokens and (max_chars is None or len(cut) <= max_chars):
            return cut
        size = min(size - 1, int(size * max_tokens / max(tokens, 1)))  # shrink by the excess
    return ""
