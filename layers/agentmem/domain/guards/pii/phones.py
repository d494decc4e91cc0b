"""Phone numbers: the ``phonenumbers`` matcher plus the project's rules for what it leaves out.

The rule, in order of evidence:

1. International: a number written with ``+`` or ``00`` and a country code, any country, any
   separators (spaces, dashes, dots, slashes, brackets), valid by the library's metadata.
2. National, for the default regions (CN, US, GB): mobiles and landlines valid there
   (``010-12345678``, ``(0755) 8888 6666``, ``(415) 555-2671``, ``07700 900123``).
3. Shaped like a North American number (``555-123-4567``, ``(555) 123-4567``), valid or fictional.
4. Labelled (``手机``/``电话``/``phone``/``tel``/``call me at``/``WhatsApp`` ...): 7 to 15 digits
   in any grouping, valid in any region or none (a user's typo is still their number).
5. Dictated: Chinese digits (``一三八…``, ``幺``) are folded to ASCII first, and a run of seven or
   more English digit words (``one three eight …``) is a number too.

Never a phone: an amount (``1380元``, ``$1,234,567``), a number labelled as an order, SKU,
version, price ... (see :func:`~agentmem.domain.guards.pii._text.not_personal`), or a part of a
longer run of digits. The matcher only runs when a cheap pre-check finds seven digits close
together, and the library is imported on first use (it costs ~40 ms at import).
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
    digits_of,
    not_personal,
)

__all__ = ["find_phone"]

_DEFAULT_REGIONS = ("CN", "US", "GB")
_CONTEXT = 6
_CANDIDATE_RUN = re.compile(r"[+(]?\d(?:[ \t().+/\-]{0,3}\d){6,}\)?")
_SEVEN_DIGITS = re.compile(r"\d(?:[ \t().+/\-]{0,3}\d){6}")

_CN_MOBILE = re.compile(
    NOT_ALNUM_BEFORE + r"(?<!\d[-.])(?<!\d\s)"
    r"(?:(?:\+|00)?86[ -]?)?"
    r"1[3-9]\d(?:\d{8}|([ -./])\d{4}\1\d{4})" + NOT_ALNUM_AFTER + r"(?![-.]\d)"
)
_NANP = re.compile(
    r"(?<![\d.\-/])(?:\+?1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\d\-/]|\.\d)"
)
_PHONE_LABEL = re.compile(
    r"(?<![A-Za-z])(?i:(?:tele)?phone(?:[ \t]+number)?|tel|mobile|cell(?:phone)?|"
    r"call(?:[ \t]+me)?(?:[ \t]+(?:at|on))?|text(?:[ \t]+me)?(?:[ \t]+(?:at|on))?|ring(?:[ \t]+me)?|"
    r"whats[ \t]?app|signal|fax|contact(?:[ \t]+number)?|my[ \t]+number|reach[ \t]+me[ \t]+(?:at|on))"
    r"(?![A-Za-z])|手机(?:号码|号)?|电话(?:号码)?|座机|固话|联系方式|联系电话|传真|致电|打给我|打电话给我|拨打"
)
_LABELLED_VALUE = re.compile(r"[ \t]*[(（]?[ \t]*(?P<value>\+?\d(?:[ \t().+/\-]{0,3}\d){6,16})")
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_COUNTED_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_MIN_DIGITS = 7
_DIGIT_WORDS = re.compile(
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


def _matched(text: str) -> Iterator[Span]:
    """Rules 1 and 2: the library's matcher at VALID leniency on each run of seven or more digits
    (with a few characters of context each side, which the matcher reads: ``09:30`` is a time), trying the default regions in turn. A run written
    with ``+`` or ``00`` is international, so one region parses it. Runs that the context rules
    out (an order number, an amount) never reach the matcher."""
    pn = _phonenumbers()
    for run in _CANDIDATE_RUN.finditer(text):
        start, end = run.span()
        if len(digits_of(run.group(0))) < _MIN_DIGITS or not_personal(text, start, end):
            continue
        left = max(0, start - _CONTEXT)
        window = text[left : end + _CONTEXT]
        international = run.group(0).lstrip("(").startswith(("+", "00"))
        for region in _DEFAULT_REGIONS[:1] if international else _DEFAULT_REGIONS:
            matches = pn.PhoneNumberMatcher(window, region, leniency=pn.Leniency.VALID)
            found = [
                (left + m.start, left + m.end)
                for m in matches
                if left + m.start < end and left + m.end > start
            ]
            yield from found
            if found:
                break


def _labelled(text: str) -> Iterator[Span]:
    """Rule 4: a label, its lead-in, then 7-15 digits in any grouping."""
    for label in _PHONE_LABEL.finditer(text):
        lead = LEAD_RE.match(text, label.end())
        pos = lead.end() if lead else label.end()
        value = _LABELLED_VALUE.match(text, pos)
        if value is None:
            continue
        start, end = value.span("value")
        if 7 <= len(digits_of(value["value"])) <= 15 and not re.match(r"\d", text[end : end + 1]):
            yield start, end


def _standalone(text: str, span: Span) -> bool:
    """Not glued to more digits: ``12345678901234`` holds no phone."""
    start, end = span
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return not before.isdigit() and not after.isdigit()


def find_phone(text: str) -> Iterator[Span]:
    """Phone numbers of every country (see the module docstring for the rule)."""
    folded = fold_chinese_digits(text)  # one character for one: spans stay valid for ``text``
    spans: set[Span] = set()
    lowered = text.lower()
    if sum(lowered.count(word) for word in _COUNTED_DIGIT_WORDS) >= _MIN_DIGITS:
        spans.update(m.span() for m in _DIGIT_WORDS.finditer(text))
    spans.update(m.span() for m in _CN_MOBILE.finditer(folded))
    if _SEVEN_DIGITS.search(folded):
        spans.update(_matched(folded))
        spans.update(m.span() for m in _NANP.finditer(folded))
        labelled = set(_labelled(folded))
        yield from labelled
        spans -= labelled
    for span in spans:
        if _standalone(folded, span) and not not_personal(folded, *span):
            yield span
