"""PII and secret redaction, applied to every text before it is written to memory.

``redact`` normalises the text (:func:`normalize_for_scan`), finds the spans of every rule in
:data:`PII_RULES`, and replaces each with the rule's placeholder such as ``[PHONE]``. Offsets in
the findings refer to ``source_text``, the normalised input. Patterns use ASCII look-arounds such
as ``(?<![0-9A-Za-z])`` instead of ``\\b``, because CJK characters are ``\\w`` and ``\\b``
would fail between ``手机`` and ``138``.

Each kind is one :class:`PiiRule` in :data:`PII_RULES`: its placeholder, its tie-break rank and
the function that finds its spans (whose docstring states the rule). To add a kind, write its
finder and add one entry to the table; ``tests/unit/test_guards_pii.py`` checks that the table is
consistent and wants a smoke example for the new kind.

Besides the rules, a base64 run (see :func:`iter_base64_payloads`) whose decoded text holds PII
is replaced as a whole by the placeholder of the first kind found inside.

Candidates never overlap in the result: the longer span wins, then the more specific kind (the
lower ``rank``). The text is rebuilt from the disjoint, sorted spans in one pass.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agentmem.domain.guards.normalize import iter_base64_payloads, normalize_for_scan

__all__ = ["PII_RULES", "PLACEHOLDERS", "PiiFinding", "PiiRule", "RedactionResult", "redact"]

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class PiiRule:
    """One kind of PII or secret.

    ``rank`` breaks ties between candidates of equal length: the lower rank (the more specific
    kind) wins. ``find`` yields the ``(start, end)`` spans of the kind in normalised text.
    """

    kind: str
    placeholder: str
    rank: int
    find: Callable[[str], Iterator[Span]]


@dataclass(frozen=True, slots=True)
class PiiFinding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RedactionResult:
    text: str
    findings: tuple[PiiFinding, ...]
    source_text: str

    @property
    def redacted(self) -> bool:
        return bool(self.findings)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({f.kind for f in self.findings}))


# ---------------------------------------------------------------- patterns

_NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
_NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"

_PHONE = re.compile(
    _NOT_ALNUM_BEFORE + r"(?<!\d[-.])(?<!\d\s)"
    r"(?:(?:\+|00)?86[ -]?)?"
    r"1[3-9]\d(?:\d{8}|([ -])\d{4}\1\d{4})" + _NOT_ALNUM_AFTER + r"(?![-.]\d)"
)
_ID_NUMBER = re.compile(
    _NOT_ALNUM_BEFORE
    + r"[1-9]\d{5}(?P<year>(?:19|20)\d{2})(?P<month>\d{2})(?P<day>\d{2})\d{3}[0-9Xx]"
    + _NOT_ALNUM_AFTER
)
_BANK_CARD = re.compile(
    _NOT_ALNUM_BEFORE + r"(?<!\d[ -])"
    r"(?:\d{16,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?)" + _NOT_ALNUM_AFTER + r"(?![ -]\d)"
)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"
)
_IPV4 = re.compile(r"(?<![0-9A-Za-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})"
    r"(?![0-9A-Za-z:])"
)
_AWS_ACCESS_KEY = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET = re.compile(
    r"(?i:aws_?secret_?access_?key|aws_?secret_?key)[\"']?\s*[:=]\s*[\"']?"
    r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
)
_JWT = re.compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
    r"(?:(?:(?!-----BEGIN ).)*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:\s+[A-Za-z0-9+/=]{16,})*)",
    re.DOTALL,
)
_API_KEY = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|gh[oprsu]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abeoprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe secret / restricted keys
    r"|whsec_[A-Za-z0-9]{16,}"  # webhook signing secrets
    r")(?![A-Za-z0-9_-])"
)
# A secret assigned in config/env style: STRIPE_SECRET=..., DB_PASSWORD: ..., GITHUB_TOKEN=...
_ENV_SECRET = re.compile(
    r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*"
    r"\s*[=:]\s*[\"']?(?P<value>[A-Za-z0-9_\-./+=]{8,})"
)
_PLACEHOLDER_VALUE = re.compile(r"^(?:x{3,}|\*{3,}|\.{3}|your|example|changeme|placeholder|<)", re.IGNORECASE)
# The secret: printable ASCII up to whitespace or , ; (CJK characters and punctuation end it too).
_SECRET = (
    r"(?:(?P<open>[\"'“‘「『])(?P<quoted>[^\"'”’」』\n]{1,64})(?P<close>[\"'”’」』])"
    r"|[\"'“‘「『]?(?P<secret>[!-+\--:<-~]+))"
)
_PASSWORD_ZH = re.compile(
    r"(?:密码|密碼|口令)(?P<lead>[ \t]*(?:是|为|為)[ \t]*[:：]?|[ \t]*[:：=])[ \t]*(?![否不])" + _SECRET
)
_PASSWORD_EN = re.compile(
    r"(?i:(?<![A-Za-z])(?:password|passwd|passphrase|pwd|pass[ \t]?code)"
    r"(?P<lead>[ \t]+(?:is|was)(?:[ \t]*[:=][ \t]*|[ \t]+)|[ \t]*[:=][ \t]*))" + _SECRET
)
_VERSION_BEFORE = re.compile(r"(?i:\b(?:version|ver\.?|release|build|v))\s*$|版本号?\s*$")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# After "password is", words that describe the password rather than state it.
_NOT_A_SECRET = frozenset({
    "a", "an", "the", "not", "too", "very", "required", "incorrect", "correct", "wrong", "invalid",
    "valid", "expired", "missing", "empty", "set", "unset", "changed", "reset", "stored", "saved",
    "encrypted", "hashed", "same", "different", "weak", "strong", "case", "protected", "needed",
    "mandatory", "optional", "forgotten", "lost", "shown", "hidden", "in", "on", "at", "of", "for",
    "to", "being", "long", "short", "secure", "insecure", "blank", "null", "none", "unknown",
})  # fmt: skip


# ---------------------------------------------------------------- validators


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def id_check_char(first17: str) -> str:
    """The ISO 7064 MOD 11-2 check character for the first 17 digits of a resident ID."""
    total = sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11]


def _valid_id(match: re.Match[str]) -> bool:
    year, month, day = int(match["year"]), int(match["month"]), int(match["day"])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return False
    value = match.group(0)
    return id_check_char(value[:17]) == value[17].upper()


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn check."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _valid_card(match: re.Match[str]) -> bool:
    digits = re.sub(r"[ -]", "", match.group(0))
    return 16 <= len(digits) <= 19 and luhn_valid(digits)


def _valid_ipv4(match: re.Match[str]) -> bool:
    try:
        ipaddress.IPv4Address(match.group(0))
    except ValueError:
        return False
    return True


def _valid_ipv6(match: re.Match[str]) -> bool:
    candidate = match.group(0)
    if candidate.count(":") < 2 or sum(ch not in ":." for ch in candidate) < 4:
        return False
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


def _is_example_key(value: str) -> bool:
    return "EXAMPLE" in value


# ---------------------------------------------------------------- finders, one per kind


def _trim_secret(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop what closes the sentence rather than the secret: quotes, a final ``.``, a stray ``)``."""
    while end - start > 1 and text[end - 1] in "\"'`":
        end -= 1
    if end - start > 1 and text[end - 1] == ".":
        end -= 1
    if end - start > 1 and text[end - 1] == ")" and "(" not in text[start:end]:
        end -= 1
    return start, end


def _find_phone(text: str) -> Iterator[Span]:
    """Mainland mobile ``1[3-9]`` + 9 digits, optional ``+86``/``0086``/``86`` prefix, contiguous or
    grouped 3-4-4 by spaces or dashes; never part of a longer digit run."""
    for match in _PHONE.finditer(text):
        yield match.span()


def _find_id_number(text: str) -> Iterator[Span]:
    """18-character resident ID (GB 11643): area code, a real ``YYYYMMDD`` birth date (1900-2099),
    sequence, and a correct ISO 7064 MOD 11-2 check character (``0-9``/``X``)."""
    for match in _ID_NUMBER.finditer(text):
        if _valid_id(match):
            yield match.span()


def _find_bank_card(text: str) -> Iterator[Span]:
    """16-19 digits, contiguous or in groups of four (the last may be shorter) joined by one kind of
    separator, passing the Luhn check."""
    for match in _BANK_CARD.finditer(text):
        if _valid_card(match):
            yield match.span()


def _find_email(text: str) -> Iterator[Span]:
    """``local@domain.tld``."""
    for match in _EMAIL.finditer(text):
        yield match.span()


def _find_ip(text: str) -> Iterator[Span]:
    """IPv4 with four octets 0-255 (``1.2.3`` and ``999.1.1.1`` are not addresses), and IPv6
    validated by :mod:`ipaddress` (at least two colons and four hex digits, so ``12:30:45`` is not).
    A dotted quad right after ``version``/``v``/``build``/``版本`` is a version number, not an address."""
    for match in _IPV4.finditer(text):
        if _valid_ipv4(match) and not _VERSION_BEFORE.search(text, 0, match.start()):
            yield match.span()
    for match in _IPV6.finditer(text):
        if _valid_ipv6(match):
            yield match.span()


def _find_aws_key(text: str) -> Iterator[Span]:
    """Access key ids ``AKIA``/``ASIA`` + 16, and a stated ``aws_secret_access_key`` (only the
    40-character value is replaced). AWS's documented example keys (``...EXAMPLE...``) are not
    secrets and are kept."""
    for match in _AWS_ACCESS_KEY.finditer(text):
        if not _is_example_key(match.group(0)):
            yield match.span()
    for match in _AWS_SECRET.finditer(text):
        if not _is_example_key(match["secret"]):
            yield match.span("secret")


def _find_jwt(text: str) -> Iterator[Span]:
    """Three base64url segments, the first starting with ``eyJ``."""
    for match in _JWT.finditer(text):
        yield match.span()


def _find_private_key(text: str) -> Iterator[Span]:
    """A PEM ``-----BEGIN ... PRIVATE KEY-----`` block through its END line (a block cut off before
    END is replaced up to the end of its base64 body)."""
    for match in _PRIVATE_KEY.finditer(text):
        yield match.span()


def _find_api_key(text: str) -> Iterator[Span]:
    """``sk-``/``sk-proj-``/``sk-ant-`` + 20 or more ``[A-Za-z0-9_-]``, GitHub tokens (``ghp_``,
    ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), Slack tokens (``xoxb-`` ...), Google API
    keys (``AIza`` + 35), Stripe and webhook secrets; and the value of a secret assigned in
    config/env style (``STRIPE_SECRET=...``) unless it is a placeholder value."""
    for match in _API_KEY.finditer(text):
        yield match.span()
    for match in _ENV_SECRET.finditer(text):
        if not _PLACEHOLDER_VALUE.match(match["value"]):
            yield match.span("value")


def _find_password(text: str) -> Iterator[Span]:
    """A stated password (``密码是``/``密码：``/``密码为``/``口令是``/``password:``/``password is``/
    ``password=``/``pwd=``/``passwd=``/``pass code is`` ...). The lead-in stays; the secret, the
    following run of printable ASCII up to whitespace, ``,``/``;`` or any CJK character or
    punctuation, is replaced (a sentence-final ``.`` is left); a quoted secret (``password: "two
    words"``) is replaced inside its quotes. After the English ``is``/``was`` lead-in (no colon),
    ordinary words (``password is required``) are not taken for a secret."""
    for pattern in (_PASSWORD_ZH, _PASSWORD_EN):
        for match in pattern.finditer(text):
            if match["quoted"] is not None:  # password: "correct horse battery"
                yield match.span("quoted")
                continue
            start, end = _trim_secret(text, *match.span("secret"))
            secret = text[start:end]
            # "密码是8位数字": a count or length, not the password.
            if len(secret) <= 2 and _CJK.match(text, end):
                continue
            lead = match["lead"].strip().lower()
            if lead in ("is", "was") and secret.lower() in _NOT_A_SECRET:
                continue
            yield start, end


# ---------------------------------------------------------------- the table

PII_RULES: tuple[PiiRule, ...] = (
    PiiRule("phone", "[PHONE]", rank=90, find=_find_phone),
    PiiRule("id_number", "[ID_NUMBER]", rank=60, find=_find_id_number),
    PiiRule("bank_card", "[BANK_CARD]", rank=70, find=_find_bank_card),
    PiiRule("email", "[EMAIL]", rank=80, find=_find_email),
    PiiRule("ip", "[IP]", rank=100, find=_find_ip),
    PiiRule("aws_key", "[AWS_KEY]", rank=30, find=_find_aws_key),
    PiiRule("jwt", "[JWT]", rank=20, find=_find_jwt),
    PiiRule("private_key", "[PRIVATE_KEY]", rank=10, find=_find_private_key),
    PiiRule("api_key", "[API_KEY]", rank=40, find=_find_api_key),
    PiiRule("password", "[PASSWORD]", rank=50, find=_find_password),
)
"""Every kind of PII or secret ``redact`` replaces; one entry per kind."""

PLACEHOLDERS: dict[str, str] = {rule.kind: rule.placeholder for rule in PII_RULES}
_RANK: dict[str, int] = {rule.kind: rule.rank for rule in PII_RULES}


# ---------------------------------------------------------------- scanning

_Candidate = tuple[str, int, int]
_MAX_DEPTH = 2


def _candidates(text: str, depth: int) -> Iterator[_Candidate]:
    for rule in PII_RULES:
        for start, end in rule.find(text):
            yield rule.kind, start, end
    if depth < _MAX_DEPTH:
        for payload in iter_base64_payloads(text):
            inner = _find(payload.decoded, depth + 1)
            if inner:
                yield inner[0].kind, payload.start, payload.end


def _find(text: str, depth: int = 0) -> tuple[PiiFinding, ...]:
    """Non-overlapping findings in ``text`` (already normalised), sorted by position."""
    ranked = sorted(set(_candidates(text, depth)), key=lambda c: (-(c[2] - c[1]), _RANK[c[0]], c[1]))
    starts: list[int] = []  # taken spans, kept sorted; they never overlap, so ends are sorted too
    taken: list[PiiFinding] = []
    for kind, start, end in ranked:
        i = bisect.bisect_left(starts, start)
        if start >= end or (i > 0 and taken[i - 1].end > start) or (i < len(taken) and taken[i].start < end):
            continue
        starts.insert(i, start)
        taken.insert(i, PiiFinding(kind, start, end))
    return tuple(taken)


def redact(text: str) -> RedactionResult:
    """Normalise ``text`` and replace every PII or secret span with its placeholder."""
    source = normalize_for_scan(text)
    findings = _find(source)
    pieces: list[str] = []
    cursor = 0
    for finding in findings:  # sorted and disjoint, so one left-to-right pass rebuilds the text
        pieces += (source[cursor : finding.start], PLACEHOLDERS[finding.kind])
        cursor = finding.end
    pieces.append(source[cursor:])
    return RedactionResult(text="".join(pieces), findings=findings, source_text=source)
