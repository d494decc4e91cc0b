"""PII and secret redaction, applied to every text before it is written to memory.

``redact`` builds the view the rules judge (:func:`~agentmem.domain.guards.normalize.scan_view`:
the normalised text, with a map back to the input), finds the spans of every rule in
:data:`PII_RULES` on the view, and replaces the input's characters each span came from with the
rule's placeholder such as ``[PHONE]``: the result is the input as written minus its redactions,
never the view. Offsets in the findings refer to ``source_text``, the view.

Each kind is one :class:`PiiRule` in :data:`PII_RULES`: its placeholder, its tie-break rank and
the function that finds its spans (whose docstring states the rule). The finders live by family:
:mod:`.phones` (``phonenumbers``), :mod:`.numbers` (IDs, cards, IBAN, CVV, accounts: checksums
via ``python-stdnum`` and labels), :mod:`.contact` (e-mail, handles),
:mod:`.national` (national, tax, health and licence identifiers of many countries: one registry
of ``python-stdnum`` validators and their label words), :mod:`.places` (addresses, plates),
:mod:`.network` (IP), :mod:`.secrets` (passwords, keys, tokens); :mod:`._text` holds the context rules they share (a
labelled value is redacted whatever its checksum; an order number, a version or an amount is not
personal). To add a kind, write its finder and add one entry to the table;
``tests/unit/test_guards_pii.py`` checks that the table is consistent and wants a smoke example
for the new kind.

Besides the rules, an encoded run whose decoded text holds PII is replaced as a whole by the
placeholder of the first kind found inside (:func:`.encoded.iter_encoded_payloads`): base64,
standard or URL-safe, padded or not, and hex, whatever the decoded text is (a phone number with
``+`` and spaces, an e-mail, an ID). :func:`iter_base64_digit_payloads` lists the base64 runs
that decode to a number only.

Candidates never overlap in the result: the longer span wins, then the more specific kind (the
lower ``rank``). The text is rebuilt from the disjoint, sorted spans in one pass.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agentmem.domain.guards.normalize import (
    Base64Payload,
    ScanView,
    fold_digit_separators,
    scan_view,
)
from agentmem.domain.guards.pii._text import Span
from agentmem.domain.guards.pii.codes import find_named_code, find_named_secret, find_qualified_password
from agentmem.domain.guards.pii.contact import find_email, find_handle
from agentmem.domain.guards.pii.continued import continued_findings
from agentmem.domain.guards.pii.encoded import iter_encoded_payloads
from agentmem.domain.guards.pii.ids import find_checksum_id
from agentmem.domain.guards.pii.national import find_national_id
from agentmem.domain.guards.pii.network import find_ip
from agentmem.domain.guards.pii.numbers import (
    find_account,
    find_bank_card,
    find_cvv,
    find_iban,
    find_id_number,
    find_passport,
    find_ssn,
    id_check_char,
    luhn_valid,
)
from agentmem.domain.guards.pii.phones import find_phone
from agentmem.domain.guards.pii.places import find_address, find_plate
from agentmem.domain.guards.pii.secrets import (
    find_api_key,
    find_aws_key,
    find_jwt,
    find_password,
    find_private_key,
    find_secret,
)
from agentmem.domain.guards.pii.vendor_keys import find_vendor_key
from agentmem.domain.lazy_re import lazy_compile

__all__ = [
    "PII_RULES",
    "PLACEHOLDERS",
    "PiiFinding",
    "PiiRule",
    "RedactionResult",
    "id_check_char",
    "iter_base64_digit_payloads",
    "luhn_valid",
    "redact",
    "redact_continued",
]


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
    """``text``: the input as written with each finding's characters replaced by its placeholder;
    ``findings``: spans on the view (``source_text``) the rules judged."""

    text: str
    findings: tuple[PiiFinding, ...]
    view: ScanView

    @property
    def source_text(self) -> str:
        return self.view.text

    @property
    def redacted(self) -> bool:
        return bool(self.findings)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({f.kind for f in self.findings}))


# ---------------------------------------------------------------- the table


def _either(*finders: Callable[[str], Iterator[Span]]) -> Callable[[str], Iterator[Span]]:
    """One finder from several finders of the same kind (their spans, one after the other)."""

    def find(text: str) -> Iterator[Span]:
        for finder in finders:
            yield from finder(text)

    find.__doc__ = "\n\n".join(f.__doc__ or "" for f in finders)
    return find


PII_RULES: tuple[PiiRule, ...] = (
    PiiRule("phone", "[PHONE]", rank=90, find=find_phone),
    PiiRule(
        "id_number", "[ID_NUMBER]", rank=60, find=_either(find_id_number, find_checksum_id, find_national_id)
    ),
    PiiRule("bank_card", "[BANK_CARD]", rank=70, find=find_bank_card),
    PiiRule("email", "[EMAIL]", rank=80, find=find_email),
    PiiRule("ip", "[IP]", rank=100, find=find_ip),
    PiiRule("aws_key", "[AWS_KEY]", rank=30, find=find_aws_key),
    PiiRule("jwt", "[JWT]", rank=20, find=find_jwt),
    PiiRule("private_key", "[PRIVATE_KEY]", rank=10, find=find_private_key),
    PiiRule("api_key", "[API_KEY]", rank=40, find=_either(find_api_key, find_vendor_key)),
    PiiRule(
        "password",
        "[PASSWORD]",
        rank=50,
        find=_either(find_password, find_named_code, find_qualified_password),
    ),
    PiiRule("ssn", "[SSN]", rank=55, find=find_ssn),
    PiiRule("passport", "[PASSPORT]", rank=62, find=find_passport),
    PiiRule("iban", "[IBAN]", rank=65, find=find_iban),
    PiiRule("cvv", "[CVV]", rank=75, find=find_cvv),
    PiiRule("account", "[ACCOUNT]", rank=85, find=find_account),
    PiiRule("handle", "[HANDLE]", rank=88, find=find_handle),
    PiiRule("plate", "[PLATE]", rank=96, find=find_plate),
    PiiRule("address", "[ADDRESS]", rank=110, find=find_address),
    PiiRule("secret", "[SECRET]", rank=52, find=_either(find_secret, find_named_secret)),
)
"""Every kind of PII or secret ``redact`` replaces; one entry per kind."""

PLACEHOLDERS: dict[str, str] = {rule.kind: rule.placeholder for rule in PII_RULES}
_RANK: dict[str, int] = {rule.kind: rule.rank for rule in PII_RULES}


# ---------------------------------------------------------------- base64 of digits

_B64_DIGITS_RUN = lazy_compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
_DIGITS_ONLY = lazy_compile(r"[+(]?\d(?:[ ().\-/]?\d){6,}[)]?")


def iter_base64_digit_payloads(text: str) -> Iterator[Base64Payload]:
    """Yield the base64 runs of ``text`` that decode to a number only: seven or more digits,
    optionally grouped by spaces, dashes, dots, slashes or brackets (``NDExMTExMTExMTExMTExMQ==``
    is ``4111111111111111``). :func:`iter_base64_payloads` skips these, as they hold no letters."""
    for match in _B64_DIGITS_RUN.finditer(text):
        run = match.group(0)
        if len(run) % 4:
            continue
        try:
            decoded = base64.b64decode(run, validate=True).decode("ascii")
        except (binascii.Error, ValueError):
            continue
        if _DIGITS_ONLY.fullmatch(decoded.strip()):
            yield Base64Payload(match.start(), match.end(), decoded.strip())


# ---------------------------------------------------------------- scanning

_Candidate = tuple[str, int, int]
_MAX_DEPTH = 2


def _candidates(text: str, depth: int) -> Iterator[_Candidate]:
    for rule in PII_RULES:
        for start, end in rule.find(text):
            yield rule.kind, start, end
    if depth < _MAX_DEPTH:
        for payload in iter_encoded_payloads(text):
            inner = _find(payload.decoded, depth + 1)
            if inner:
                yield inner[0].kind, payload.start, payload.end


def _find(text: str, depth: int = 0) -> tuple[PiiFinding, ...]:
    """Non-overlapping findings in ``text`` (already normalised), sorted by position. The finders
    read ``text`` with the dashes and middle dots between digits folded to ``-``/``.``
    (:func:`fold_digit_separators`, one character for one), so ``138–0013–8000`` is a number."""
    ranked = sorted(
        set(_candidates(fold_digit_separators(text), depth)),
        key=lambda c: (-(c[2] - c[1]), _RANK[c[0]], c[1]),
    )
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
    """``text`` with every PII or secret span the rules find on its view (normalised; keycap emoji
    digits read as digits) replaced by its placeholder; every other character kept."""
    view = scan_view(text)
    return _render(view, _find(view.text))


def _found(text: str) -> tuple[tuple[str, int, int], ...]:
    return tuple((f.kind, f.start, f.end) for f in _find(text))


def redact_continued(previous: str, current: RedactionResult) -> RedactionResult:
    """``current`` (what :func:`redact` made of a message) with the parts that complete PII begun
    in ``previous``, the same user's message before it, replaced too (``my phone starts with 138``
    / ``and the rest is [PHONE]``; :func:`.continued.continued_findings`)."""
    source = current.source_text
    taken = list(current.findings)
    added = False
    for kind, start, end in continued_findings(previous, source, _found):
        if all(end <= f.start or start >= f.end for f in taken):
            taken.append(PiiFinding(kind, start, end))
            added = True
    if not added:
        return current
    return _render(current.view, tuple(sorted(taken, key=lambda f: f.start)))


def _render(view: ScanView, findings: tuple[PiiFinding, ...]) -> RedactionResult:
    """The original of ``view`` with the characters each finding came from replaced."""
    original = view.original
    pieces: list[str] = []
    cursor = 0
    for finding in findings:  # sorted and disjoint, so one left-to-right pass rebuilds the text
        start, end = view.span(finding.start, finding.end)
        start = max(start, cursor)  # two findings in one cluster (a ligature): one cut
        pieces += (original[cursor:start], PLACEHOLDERS[finding.kind])
        cursor = max(end, cursor)
    pieces.append(original[cursor:])
    return RedactionResult(text="".join(pieces), findings=findings, view=view)
