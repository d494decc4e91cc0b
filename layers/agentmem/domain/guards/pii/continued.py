"""PII split over two messages of the same user: ``my phone starts with 138`` then ``and the rest
is 0013 8000``, or ``my password`` then ``it is Zebra!Quartz55``. Neither message holds the whole
value, so :func:`~agentmem.domain.guards.pii.redact` cannot see it; :func:`continued_findings`
reads the previous message with the current one and returns the spans of the current one that
complete PII the previous one began."""

from __future__ import annotations

import re
from collections.abc import Callable

from agentmem.domain.guards.normalize import normalize_for_scan, strip_keycaps
from agentmem.domain.guards.pii._text import clause_before, not_personal
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["continued_findings"]

_Found = tuple[str, int, int]  # kind, start, end

_FRAGMENT = lazy_compile(r"\+?\d(?:[ \-.]?\d)*[Xx]?(?![A-Za-z])")
# The previous message announces a first part; the current one its rest.
_FIRST_PART = lazy_compile(
    r"(?i:starts?|starting|begins?|beginning|first|prefix|part|fängt|beginnt|empieza|comienza|commence|começa)"
    r"|前[一二三四五六七八九十\d]*位|开头|開頭|前面|前半|头几位|前几位|始まり|最初|앞자리|앞[ \t]?번호|시작"
)
_REST = lazy_compile(
    r"(?i:rest|remaining|then|followed|after|next|ends?|last|others?|resto|reste|restliche|depois|puis|dann)"
    r"|剩下|剩余|其余|余下|后面|後面|后[一二三四五六七八九十\d]*位|後[一二三四五六七八九十\d]*位|接着|然后|再是|残り|続き|나머지|뒷자리|다음"
)
# A short lead of the current message that ends in a copula or colon: "it is", "它是", "ist", ":".
_LEAD = lazy_compile(
    r"[ \t]*(?:(?:(?i:it|that|this|and|so|the[ \t]+rest|rest|es|das|er|sie|ce|ça|eso|esto|isso|dat|het)(?![a-z])|(?i:c)['’]"
    r"|它|那|这|就|那个|这个|密码|号码|それ|これ|그건|그거)[ \t]*)?"
    r"(?:(?i:(?<![a-z])(?:is|was|ist|es|est|é|are)(?![a-z]))|是|为|為|[:：=]|は|는|은)[ \t]*"
)
_NEAR_END = 4  # characters after a fragment that still leave it at the end of its message


def _join_digits(
    find: Callable[[str], tuple[_Found, ...]], previous: str, current: str
) -> tuple[_Found, ...]:
    """A number begun at the end of ``previous`` (or after "starts with"/"前三位") and continued
    at the start of ``current`` (or after "the rest is"/"剩下的"): the current fragment, when the
    joined digits read as PII after the previous clause's words."""
    fragments = list(_FRAGMENT.finditer(previous))
    if not fragments:
        return ()
    first = fragments[-1]
    lead_in = clause_before(previous, first.start(), 40)
    if len(previous.rstrip(" \t.,;!?。，；！？…")) - first.end() > _NEAR_END and not _FIRST_PART.search(
        lead_in
    ):
        return ()
    if not_personal(previous, *first.span()):
        return ()  # "the price was 138": an amount, a version, an order number
    rest, cursor = None, 0
    for fragment in _FRAGMENT.finditer(current):  # at the start, or after "the rest is"/"后面是"
        if fragment.start() <= _NEAR_END or _REST.search(current, cursor, fragment.start()):
            rest = fragment
            break
        cursor = fragment.end()
    if rest is None:
        return ()
    head = re.sub(r"[^\dXx]", "", first.group(0))
    tail = re.sub(r"[^\dXx]", "", rest.group(0))
    if not 7 <= len(head) + len(tail) <= 19:
        return ()
    prefix = ("+" if first.group(0).startswith("+") else "") + head
    for probe_lead in (lead_in.strip() + " ", ""):
        probe = probe_lead + prefix + tail
        junction = len(probe_lead) + len(prefix)
        for kind, start, end in find(probe):
            if start < junction < end:
                return ((kind, rest.start(), rest.end()),)
    return ()


def _join_text(find: Callable[[str], tuple[_Found, ...]], previous: str, current: str) -> tuple[_Found, ...]:
    """A label at the end of ``previous`` and its value stated in ``current`` (``my password`` /
    ``it is Zebra!Quartz55``): a finding of the joined text that lies in the current message after
    a short lead holding a copula or a colon."""
    lead = _LEAD.match(current)
    if lead is None:
        return ()
    joined = previous.rstrip() + ": "  # the current message's lead ("it is", "它是") read as a colon
    boundary = len(joined) - lead.end()
    found = []
    for kind, start, end in find(joined + current[lead.end() :]):
        if start >= len(joined):
            found.append((kind, start - boundary, end - boundary))
    return tuple(found)


def continued_findings(
    previous: str, current: str, find: Callable[[str], tuple[_Found, ...]]
) -> tuple[_Found, ...]:
    """``(kind, start, end)`` spans of ``current`` (normalised as ``redact`` normalises it) that
    complete PII begun in ``previous``, the same user's message before it: the rest of a number
    (``my phone starts with 138`` / ``and the rest is 0013 8000``; ``身份证前六位 110105`` /
    ``后面是 19491231002X``) or a value whose label closed the previous message (``my password`` /
    ``it is Zebra!Quartz55``). ``find`` returns the ``(kind, start, end)`` findings of a normalised
    text."""
    prev = normalize_for_scan(strip_keycaps(previous))
    cur = normalize_for_scan(strip_keycaps(current))
    if not prev.strip() or not cur.strip():
        return ()
    return _join_digits(find, prev, cur) + _join_text(find, prev, cur)
