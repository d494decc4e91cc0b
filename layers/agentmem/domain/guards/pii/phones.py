"""Phone numbers: the ``phonenumbers`` matcher plus the project's rules for what it leaves out.

The rule, in order of evidence:

1. International: a number written with ``+`` or ``00`` and a country code, any country, any
   separators (spaces, dashes, dots, slashes, brackets), valid by the library's metadata.
2. National, for the default regions (CN, US, GB) and the regions the text implies: kana imply JP,
   Hangul KR, and a phone label in another language its country (``携帯``/``電話番号`` JP,
   ``휴대폰``/``전화번호`` KR, ``portable`` FR, ``Handy`` DE, ``móvil`` ES, ``celular`` MX/BR ...):
   mobiles and landlines valid there (``010-12345678``, ``(0755) 8888 6666``, ``080-9876-5432``),
   written in groups or with the trunk prefix ``0``. One bare run of digits with neither (and no
   label, rule 4) is a count, an ID or a limit (``2147483647``), not a number to call; a Chinese
   mobile is its own shape (``13812345678``).
3. Shaped like a North American number (``555-123-4567``, ``(555) 123-4567``), valid or fictional.
4. Labelled (``手机``/``电话``/``phone``/``tel``/``call me at``/``WhatsApp``/``携帯``/``휴대폰``/
   ``portable``/``Handy``/``móvil`` ..., then the lead-in and particles ``は``/``는``/``est le``/
   ``ist``): 7 to 15 digits in any grouping, valid in any region or none (a user's typo is still
   their number).
5. Dictated: Chinese digits (``一三八…``, ``幺``) are folded to ASCII first, and a run of seven or
   more English digit words (``one three eight …``) is a number too; so are digit groups joined by
   commas or filler words (``139 then 1234 and finally 5678``, ``138, 0013, 8000``, ``138、0013、
   8000``) when the digits together make a valid number or a phone label precedes them.

Separators count whatever their width: dashes, the minus sign and middle dots between digits
arrive folded (:func:`~agentmem.domain.guards.normalize.fold_digit_separators`), full-width
brackets are read as ASCII ones.

Never a phone: an amount (``1380元``, ``$1,234,567``), a number labelled as an order, SKU,
version, price ... or a dotted version (see :func:`~agentmem.domain.guards.pii._text.not_personal`),
or a part of a longer run of digits. The matcher only runs when a cheap pre-check finds seven
digits close together, and the library is imported on first use (it costs ~40 ms at import).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from types import ModuleType

from agentmem.domain.guards.normalize import fold_chinese_digits
from agentmem.domain.guards.pii._text import (
    LEAD_RE,
    NOT_ALNUM_AFTER,
    NOT_ALNUM_BEFORE,
    Span,
    clause_before,
    digits_of,
    is_version,
    labelled_impersonal,
    lower_same_length,
    not_personal,
)
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["find_phone"]

_DEFAULT_REGIONS = ("CN", "US", "GB")
_CONTEXT = 6
_CANDIDATE_RUN = lazy_compile(r"[+(]?\d(?:[ \t().+/\-]{0,3}\d){6,}\)?")
# Digit groups joined by a comma or by words said between them: "139 then 1234 and finally 5678".
_FILLER = (
    r"(?:[ \t]*[,，、][ \t]*(?:(?i:and|then)[ \t]+)*|[ \t]*(?:然后是?|再是?|接着是?|最后是?|后面是?)[ \t]*"
    r"|[ \t]+(?:(?i:and|then|finally|next|followed[ \t]+by|after[ \t]+that|space|dash)[ \t]+)+)"
)
_FILLER_HINT = lazy_compile(
    r"\d[ \t]*[,，、]|\d[ \t]+(?i:and|then|finally|next|followed|after|space|dash)|\d[ \t]*(?:然后|再|接着|最后|后面)"
)
_GROUPS_WITH_FILLERS = lazy_compile(r"(?<![\d.,])\d{2,5}(?:" + _FILLER + r"\d{2,5}){1,4}(?![\d]|[.,]\d)")
_SEVEN_DIGITS = lazy_compile(r"\d(?:[ \t().+/\-]{0,3}\d){6}")

_CN_MOBILE = lazy_compile(
    NOT_ALNUM_BEFORE + r"(?<!\d[-.])(?<!\d\s)"
    r"(?:(?:\+|00)?86[ -]?)?"
    r"1[3-9]\d(?:\d{8}|([ -./])\d{4}\1\d{4})" + NOT_ALNUM_AFTER + r"(?![-.]\d)"
)
# A link whose target is a phone number (the digits after it are one, with their country code).
_PHONE_LINK = lazy_compile(r"(?i:wa\.me/|tel:|sms:|callto:|[?&]phone=)\+?$")
_NANP = lazy_compile(
    r"(?<![\d.\-/])(?:\+?1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\d\-/]|\.\d)"
)
_PHONE_LABEL = lazy_compile(
    r"(?<![A-Za-z])(?i:(?:tele)?phone(?:[ \t]+number)?|tel|mobile|cell(?:phone)?|"
    r"call(?:[ \t]+me)?(?:[ \t]+(?:at|on))?|text(?:[ \t]+me)?(?:[ \t]+(?:at|on))?|ring(?:[ \t]+me)?|"
    r"whats[ \t]?app|signal|fax|contact(?:[ \t]+number)?|my[ \t]+number|reach[ \t]+me[ \t]+(?:at|on))"
    r"(?![A-Za-zÀ-ÿ])|手机(?:号码|号)?|电话(?:号码)?|座机|固话|联系方式|联系电话|传真|致电|打给我|打电话给我|拨打|"
    r"(?<![单件证卡账帐户码牌照编序批票货型])号码"
    # Japanese and Korean (the particles after them are part of the lead-in)
    r"|(?P<ja>携帯(?:電話)?(?:番号)?|ケータイ(?:番号)?|電話(?:番号)?|固定電話|連絡先|ファックス|FAX番号)"
    r"|(?P<ko>휴대(?:폰|전화)(?:[ \t]?번호)?|핸드폰(?:[ \t]?번호)?|전화(?:[ \t]?번호)?|연락처|폰[ \t]?번호)"
    # other languages' words for a phone, with their "number of" in front (a word goes on past an
    # accented letter: "tel" is not a label inside "teléfono")
    r"|(?<![A-Za-z])(?i:(?P<fr>(?:num[ée]ro[ \t]+de[ \t]+)?(?:portable|t[ée]l[ée]phone|t[ée]l\.?|fixe)"
    r"|(?:mon|ton|son|notre|votre|leur)[ \t]+num[ée]ro)"
    r"|(?P<vi>(?:s[ốo][ \t]+)?(?:đi[ệe]n[ \t]+tho[ạa]i|di[đd][ộo]ng)|s[đd]t|đt)"
    r"|(?P<de>handy(?:nummer)?|telefon(?:nummer)?|mobil(?:nummer|telefon)?|rufnummer)"
    r"|(?P<es>(?:n[úu]mero[ \t]+de[ \t]+)?(?:m[óo]vil|tel[ée]fono))"
    r"|(?P<mx>(?:n[úu]mero[ \t]+de[ \t]+)?celular|telefone|telem[óo]vel)"
    r"|(?P<it>(?:numero[ \t]+di[ \t]+)?(?:cellulare|telefono)))(?![A-Za-zÀ-ÿ])"
)
_PHONE_LABEL_LOWER = lazy_compile(_PHONE_LABEL.pattern.replace("(?i:", "(?:").replace("FAX番号", "fax番号"))
# The regions a label's language implies, tried after the defaults.
_LABEL_REGIONS: dict[str, tuple[str, ...]] = {
    "ja": ("JP",),
    "ko": ("KR",),
    "fr": ("FR", "BE", "CH"),
    "de": ("DE", "AT", "CH"),
    "es": ("ES", "MX", "AR"),
    "mx": ("MX", "BR", "PT"),
    "it": ("IT",),
    "vi": ("VN",),
}
_KANA = lazy_compile(r"[\u3040-\u30ff]")
_HANGUL = lazy_compile(r"[\uac00-\ud7a3]")
_LABELLED_VALUE = lazy_compile(r"[ \t]*[(（]?[ \t]*(?P<value>\+?\d(?:[ \t().+/\-]{0,3}\d){6,16})")
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_COUNTED_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_MIN_DIGITS = 7
_MAX_DIGITS = 15
_DIGIT_WORDS = lazy_compile(
    r"(?<![A-Za-z])(?i:(?:(?:double|triple)[ \t]+)?"
    + _DIGIT_WORD
    + r"(?:[ \t,\-]+(?:(?:double|triple)[ \t]+)?"
    + _DIGIT_WORD
    + r"){6,})(?![A-Za-z])"
)


@cache
def _phonenumbers() -> ModuleType:
    import phonenumbers

    return phonenumbers


def _phone_labels(text: str) -> list[re.Match[str]]:
    """The phone labels of ``text``, matched on its lower-cased form (offsets stay valid)."""
    return list(_PHONE_LABEL_LOWER.finditer(lower_same_length(text)))


def _regions(text: str, labels: list[re.Match[str]]) -> tuple[str, ...]:
    """The default regions, then those the text implies: its script (kana JP, Hangul KR) and the
    language of each of its phone ``labels``."""
    extra: list[str] = []
    if _KANA.search(text):
        extra.append("JP")
    if _HANGUL.search(text):
        extra.append("KR")
    for label in labels:
        for language, regions in _LABEL_REGIONS.items():
            if label[language] is not None:
                extra.extend(regions)
    return tuple(dict.fromkeys((*_DEFAULT_REGIONS, *extra)))


def _matched(text: str, regions: tuple[str, ...]) -> Iterator[Span]:
    """Rules 1 and 2: the library's matcher at VALID leniency on each run of seven or more digits
    (with a few characters of context each side, which the matcher reads: ``09:30`` is a time),
    trying the regions in turn. A run written with ``+`` or ``00`` is international, so one region
    parses it. Runs that the context rules out (an order number, an amount) never reach the matcher."""
    pn = _phonenumbers()
    for run in _CANDIDATE_RUN.finditer(text):
        start, end = run.span()
        if len(digits_of(run.group(0))) < _MIN_DIGITS or not_personal(text, start, end):
            continue
        left = max(0, start - _CONTEXT)
        window = text[left : end + _CONTEXT]
        international = run.group(0).lstrip("(").startswith(("+", "00"))
        bare = run.group(0).isdigit() and not run.group(0).startswith("0")
        if bare and not international and not _PHONE_LINK.search(text, max(0, start - 40), start):
            continue  # one bare run, no trunk prefix, no label (rule 4's), no link: a count or a limit
        for region in regions[:1] if international else regions:
            matches = pn.PhoneNumberMatcher(window, region, leniency=pn.Leniency.VALID)
            found = [
                (left + m.start, left + m.end)
                for m in matches
                if left + m.start < end and left + m.end > start
            ]
            yield from found
            if found:
                break


def _valid_somewhere(digits: str, regions: tuple[str, ...]) -> bool:
    """Whether ``digits`` (no separators) is a valid number in one of ``regions``."""
    pn = _phonenumbers()
    for region in regions:
        try:
            if pn.is_valid_number(pn.parse(digits, region)):
                return True
        except pn.NumberParseException:
            continue
    return False


def _with_fillers(text: str, regions: tuple[str, ...]) -> Iterator[Span]:
    """Rule 5, spoken groups: digit groups joined by commas or filler words, 7-15 digits in all,
    that make a valid number in one of ``regions`` or follow a phone label in their clause."""
    for match in _GROUPS_WITH_FILLERS.finditer(text):
        start, end = match.span()
        digits = digits_of(match.group(0))
        if not _MIN_DIGITS <= len(digits) <= _MAX_DIGITS or not_personal(text, start, end):
            continue
        if _PHONE_LABEL.search(clause_before(text, start)) or _valid_somewhere(digits, regions):
            yield start, end


def _labelled(text: str, labels: list[re.Match[str]]) -> Iterator[Span]:
    """Rule 4: a label, its lead-in, then 7-15 digits in any grouping (not a dotted version, not
    a number whose nearest label says it is an order or a price)."""
    for label in labels:
        lead = LEAD_RE.match(text, label.end())
        pos = lead.end() if lead else label.end()
        value = _LABELLED_VALUE.match(text, pos)
        if value is None:
            continue
        start, end = value.span("value")
        if not _MIN_DIGITS <= len(digits_of(value["value"])) <= _MAX_DIGITS or re.match(
            r"\d", text[end : end + 1]
        ):
            continue
        if not is_version(text, start, end) and not labelled_impersonal(text, start):
            yield start, end


def _standalone(text: str, span: Span) -> bool:
    """Not glued to more digits: ``12345678901234`` holds no phone."""
    start, end = span
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return not before.isdigit() and not after.isdigit()


def find_phone(text: str) -> Iterator[Span]:
    """Phone numbers of every country (see the module docstring for the rule)."""
    # one character for one, so spans stay valid for ``text``
    folded = fold_chinese_digits(text)
    if "（" in folded or "）" in folded:
        folded = folded.replace("（", "(").replace("）", ")")
    spans: set[Span] = set()
    lowered = text.lower()
    if sum(lowered.count(word) for word in _COUNTED_DIGIT_WORDS) >= _MIN_DIGITS:
        spans.update(m.span() for m in _DIGIT_WORDS.finditer(text))
    spans.update(m.span() for m in _CN_MOBILE.finditer(folded))
    seven = _SEVEN_DIGITS.search(folded) is not None
    fillers = _FILLER_HINT.search(folded) is not None
    if seven or fillers:
        labels = _phone_labels(folded)
        regions = _regions(folded, labels)
        if seven:
            spans.update(_matched(folded, regions))
            spans.update(m.span() for m in _NANP.finditer(folded))
            labelled = set(_labelled(folded, labels))
            yield from labelled
            spans -= labelled
        if fillers:
            spans.update(_with_fillers(folded, regions))
    for span in spans:
        if _standalone(folded, span) and not not_personal(folded, *span):
            yield span
