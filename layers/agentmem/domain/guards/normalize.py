"""Text normalisation shared by the write-time guards (PII redaction and injection detection).

Both guards *judge* the normalised text — a view — so evasions that only change how a string looks
cannot slip past the patterns; nothing *stores* it. :func:`scan_view` builds the view with a map
back to the original, so the spans the PII rules find on the view are cut out of the original
text and every other character is kept as its writer typed it (a Russian "Москва" stays Cyrillic,
a full-width "１３８" stays full-width). The view:

1. Compatibility folding (NFKC): full-width digits and letters become ASCII (``１３８`` -> ``138``,
   ``ｉｇｎｏｒｅ`` -> ``ignore``), ligatures and circled forms are unpacked; the decimal digits of
   every script are read as ASCII ones (``١٣٨`` -> ``138``). The everyday Chinese
   sentence punctuation ``，：；！？（）`` is kept as written, so stored Chinese text keeps its look;
   the guards' patterns accept both widths of these marks.
2. Invisible characters are removed: every format character (Unicode category Cf: zero-width
   space/joiners U+200B..U+200F, word joiner U+2060, BOM U+FEFF, soft hyphen, bidi overrides, tag
   characters) and every control character except ``\\n`` and ``\\t``. ``\\r\\n`` and a lone ``\\r``
   become ``\\n``; the Unicode line/paragraph separators become ``\\n`` too.
3. Homoglyphs: Cyrillic and Greek letters that look like Latin ones (``а е о р с х і ѕ ο ν`` ...)
   are folded to Latin, word by word, when the word also holds a Latin letter (``ignоre`` with a
   Cyrillic ``о``) or consists only of look-alikes. Genuine Russian or Greek words, which hold
   letters with no Latin twin, are left alone.

The module also finds base64 payloads (:func:`iter_base64_payloads`), which both guards decode and
scan, and gives the injection rules a Simplified-Chinese view of Traditional text
(:func:`simplified_view`, OpenCC's ``t2s``): the rules are written once, in Simplified characters,
and a user in Taipei or Hong Kong is judged by the same ones. The view is only scanned; stored text
keeps the characters its writer used. Everything here is pure: no I/O, no environment, no clock.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentmem.domain.lazy_re import lazy_compile

__all__ = [
    "Base64Payload",
    "ScanView",
    "iter_base64_payloads",
    "normalize_for_scan",
    "scan_view",
    "simplified_view",
]

# Full-width punctuation that Chinese prose uses every day; NFKC would turn it into ASCII.
_KEPT_PUNCTUATION = "，：；！？（）"
_KEPT_SPLIT = lazy_compile(f"([{_KEPT_PUNCTUATION}])")

_LINE_BREAKS = lazy_compile(r"\r\n?|[\u2028\u2029\x85]")

_HOMOGLYPHS: dict[str, str] = {
    # Cyrillic lower case
    "а": "a", "в": "b", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i",
    "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "к": "k", "м": "m",
    "т": "t", "п": "n", "г": "r", "ё": "e", "ї": "i", "ո": "n",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    "Ү": "Y",
    # Greek lower case
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ς": "s",
    # Greek upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes outside ASCII that NFKC leaves alone
    "ı": "i", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ʏ": "y", "ɴ": "N", "ʀ": "R", "ꓲ": "I",
}  # fmt: skip
_HOMOGLYPH_TABLE = str.maketrans(_HOMOGLYPHS)
_WORD = lazy_compile(r"[^\W\d_]+")


def _is_cyrillic_or_greek(ch: str) -> bool:
    return "\u0370" <= ch <= "\u052f"


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    if not any(ch in _HOMOGLYPHS for ch in word):
        return word
    has_latin = any(ch.isascii() for ch in word)
    foreign = [ch for ch in word if _is_cyrillic_or_greek(ch)]
    if has_latin or all(ch in _HOMOGLYPHS for ch in foreign):
        return word.translate(_HOMOGLYPH_TABLE)
    return word


def _visible(ch: str) -> bool:
    if ch in "\n\t":
        return True
    return unicodedata.category(ch) not in ("Cc", "Cf")


class _InvisibleTable(dict[int, int | None]):
    """A ``str.translate`` table that drops invisible characters, filled as characters are first
    seen (``translate`` then looks each one up in C)."""

    def __missing__(self, codepoint: int) -> int | None:
        value = codepoint if _visible(chr(codepoint)) else None
        if len(self) < 65_536:  # bounded: a text of random code points cannot grow it without end
            self[codepoint] = value
        return value


_INVISIBLE = _InvisibleTable()


class _DigitTable(dict[int, int]):
    """A ``str.translate`` table that reads every script's decimal digits as ASCII ones (Arabic-
    Indic ``٣``, Devanagari ``३``, Bengali ``৩``, Thai ``๓`` … -> ``3``), one for one; filled as
    characters are first seen."""

    def __missing__(self, codepoint: int) -> int:
        ch = chr(codepoint)
        value = ord(str(unicodedata.decimal(ch))) if unicodedata.category(ch) == "Nd" else codepoint
        if len(self) < 65_536:
            self[codepoint] = value
        return value


_DIGITS = _DigitTable()
_HOMOGLYPH_CHARS = lazy_compile("[" + re.escape("".join(_HOMOGLYPHS)) + "]")


def normalize_for_scan(text: str) -> str:
    """Return ``text`` folded for scanning: NFKC, invisibles stripped, homoglyphs folded.

    Idempotent: ``normalize_for_scan(normalize_for_scan(t)) == normalize_for_scan(t)``.
    """
    text = _LINE_BREAKS.sub("\n", text)
    text = text.translate(_INVISIBLE)
    if text.isascii():
        return text  # NFKC and the homoglyph fold leave ASCII alone
    parts = _KEPT_SPLIT.split(text)
    text = "".join(
        p if len(p) == 1 and p in _KEPT_PUNCTUATION else unicodedata.normalize("NFKC", p) for p in parts
    ).translate(_DIGITS)
    if not _HOMOGLYPH_CHARS.search(text):
        return text
    return _WORD.sub(_fold_word, text)


# Characters that belong to the character before them (combining marks of every script, the
# medial and final Hangul jamo): a view is built cluster by cluster, never splitting one.
_JOINING_CATEGORIES = frozenset({"Mn", "Mc", "Me"})
_KEYCAP_MARKS = str.maketrans("", "", "\ufe0f\u20e3")


def _joins_previous(ch: str) -> bool:
    return (
        unicodedata.category(ch) in _JOINING_CATEGORIES
        or "\u1160" <= ch <= "\u11ff"
        or "\ud7b0" <= ch <= "\ud7ff"
    )


def _cluster_view(cluster: str) -> str:
    """The view of one cluster: keycap marks after a digit dropped, line breaks as ``\\n``,
    invisibles dropped, NFKC (the Chinese sentence punctuation kept), every script's digits as
    ASCII ones."""
    if cluster[0] in "0123456789#*":
        cluster = cluster[0] + cluster[1:].translate(_KEYCAP_MARKS)
    cluster = _LINE_BREAKS.sub("\n", cluster).translate(_INVISIBLE)
    if not cluster or cluster.isascii() or cluster in _KEPT_PUNCTUATION:
        return cluster
    return unicodedata.normalize("NFKC", cluster).translate(_DIGITS)


@dataclass(frozen=True, slots=True)
class ScanView:
    """The text the detectors read (``text``) and, for each of its characters, the span of the
    ``original`` it came from (``starts``/``ends``; both empty when the view is the original)."""

    original: str
    text: str
    starts: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original that view ``[start, end)`` came from, widened to whole
        clusters (a span that cuts a ligature or a keycap takes all of it)."""
        if not self.starts:
            return start, end
        if start >= end:
            at = self.starts[start] if start < len(self.starts) else len(self.original)
            return at, at
        return self.starts[start], self.ends[end - 1]


def scan_view(text: str) -> ScanView:
    """The view of ``text`` the guards judge (what :func:`normalize_for_scan` makes of it, cluster
    by cluster: keycaps, line breaks, invisibles, NFKC, then the homoglyph fold, which keeps
    lengths) with the map back to ``text``."""
    if normalize_for_scan(text) == text and "\u20e3" not in text and "\ufe0f" not in text:
        return ScanView(text, text)
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and (_joins_previous(text[j]) or (text[j] == "\n" and text[j - 1] == "\r")):
            j += 1
        out = _cluster_view(text[i:j])
        parts.append(out)
        starts += [i] * len(out)
        ends += [j] * len(out)
        i = j
    view = "".join(parts)
    if _HOMOGLYPH_CHARS.search(view):
        view = _WORD.sub(_fold_word, view)  # one character for one: the map holds
    return ScanView(text, view, tuple(starts), tuple(ends))


_HAN = lazy_compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_T2S: list[Any] = []  # the converter, built on first use (its dictionaries load in ~10 ms)


def simplified_view(text: str) -> str | None:
    """``text`` in Simplified characters when it holds Traditional ones (``給所有用戶推薦`` ->
    ``给所有用户推荐``), else None."""
    if not _HAN.search(text):
        return None
    if not _T2S:
        import opencc

        _T2S.append(opencc.OpenCC("t2s"))
    converted = str(_T2S[0].convert(text))
    return converted if converted != text else None


@dataclass(frozen=True, slots=True)
class Base64Payload:
    """A base64 run in a text and what it decodes to (already normalised)."""

    start: int
    end: int
    decoded: str


_B64_RUN = lazy_compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_MIN_PRINTABLE = 0.9


def _decode_base64(run: str) -> str | None:
    if len(run) % 4:
        return None
    core = run.rstrip("=")
    # Plain words and identifiers are runs of letters too; a real payload mixes cases or digits.
    if core.isalpha() and (core.islower() or core.isupper()):
        return None
    try:
        raw = base64.b64decode(run, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not decoded.strip():
        return None
    printable = sum(1 for ch in decoded if ch.isprintable() or ch in "\n\t\r")
    if printable / len(decoded) < _MIN_PRINTABLE:
        return None
    if not any(ch.isalpha() for ch in decoded):
        return None
    return normalize_for_scan(decoded)


def iter_base64_payloads(text: str) -> Iterator[Base64Payload]:
    """Yield the base64-looking runs of ``text`` that decode to mostly printable UTF-8.

    A run is at least 16 characters of ``[A-Za-z0-9+/]`` with up to two ``=`` of padding, its length
    a multiple of 4, not glued to other base64 or base64url characters.
    """
    for match in _B64_RUN.finditer(text):
        decoded = _decode_base64(match.group(0))
        if decoded is not None:
            yield Base64Payload(match.start(), match.end(), decoded)


# ---------------------------------------------------------------- Chinese digits (for the PII guard)

# Characters that read as one digit when a number is dictated: 〇/零 0, 幺 1 (as in 幺三八), 两 2.
_CHINESE_DIGITS = "〇零一幺二两三四五六七八九"
_CHINESE_DIGIT_VALUES = "0011223456789"
_CHINESE_DIGIT_TABLE = str.maketrans(_CHINESE_DIGITS, _CHINESE_DIGIT_VALUES)
_CHINESE_DIGIT_RUN = lazy_compile(
    f"[{_CHINESE_DIGITS}0-9](?:[{_CHINESE_DIGITS}0-9]|[ .\\-](?=[{_CHINESE_DIGITS}0-9]))*"
)
_MIN_DICTATED_DIGITS = 7


def fold_chinese_digits(text: str) -> str:
    """Return ``text`` with dictated Chinese digits (``一三八…``, ``幺``, ``〇``/``零``, ``两``) turned
    into ASCII digits, one character for one, so every offset stays valid.

    Only runs of at least seven digits (Chinese or ASCII, joined by nothing or one space, dot or
    dash) are folded: ``一三八一二三四五六七八`` becomes ``13812345678`` while ``一个``, ``三五个人``
    and ``十一`` are left alone.
    """

    def fold(match: re.Match[str]) -> str:
        run = match.group(0)
        if sum(ch.isdigit() or ch in _CHINESE_DIGITS for ch in run) < _MIN_DICTATED_DIGITS:
            return run
        return run.translate(_CHINESE_DIGIT_TABLE)

    return _CHINESE_DIGIT_RUN.sub(fold, text)


# ---------------------------------------------------------------- digit separators (for the PII guard)

# Marks people type between digit groups that NFKC leaves alone: dashes, the minus sign, middle dots.
_DASH_LIKE = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63"  # ‐ ‑ ‒ – — ― − ⁃ ﹘ ﹣
_DOT_LIKE = "\u00b7\u30fb\uff65\u2022\u2219\u22c5\u0387"  # · ・ ･ • ∙ ⋅ ·
_SEPARATOR_TABLE = str.maketrans(_DASH_LIKE + _DOT_LIKE, "-" * len(_DASH_LIKE) + "." * len(_DOT_LIKE))
_SEPARATOR_BETWEEN_DIGITS = lazy_compile(f"(?<=\\d)[ \\t]?[{_DASH_LIKE}{_DOT_LIKE}][ \\t]?(?=\\d)")
_ANY_SEPARATOR = lazy_compile(f"[{_DASH_LIKE}{_DOT_LIKE}]")


def fold_digit_separators(text: str) -> str:
    """Return ``text`` with the dashes, minus signs and middle dots that sit between two digits
    (``138–0013–8000``, ``138—0013—8000``, ``138−0013−8000``, ``138·0013·8000``, ``080・9876``)
    turned into ``-`` or ``.``, one character for one, so every offset stays valid.

    A mark anywhere else (``A—B``, ``弗拉基米尔·普京``) is left alone."""
    if _ANY_SEPARATOR.search(text) is None:
        return text
    return _SEPARATOR_BETWEEN_DIGITS.sub(lambda m: m.group(0).translate(_SEPARATOR_TABLE), text)


_KEYCAP = lazy_compile(r"(?<=[0-9#*])\ufe0f?\u20e3|(?<=[0-9#*])\ufe0f(?=[0-9#*])")


def strip_keycaps(text: str) -> str:
    """Drop the keycap marks after a digit (``1️⃣`` is ``1`` + U+FE0F + U+20E3), so keycap
    emoji digits read as digits; a variation selector elsewhere is kept."""
    if "\u20e3" not in text and "\ufe0f" not in text:
        return text
    return _KEYCAP.sub("", text)
