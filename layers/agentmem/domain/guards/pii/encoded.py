"""Encoded PII: runs of base64 (standard or URL-safe, padded or not) and of hex whose decoded text
is readable. ``redact`` runs its finders on the decoded text and replaces the whole run when they
find something, so ``KzEgKDQxNSkgNTU1LTAxMzI=`` (``+1 (415) 555-0132``) or
``616c69636540…`` (an e-mail) goes as a whole."""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Iterator
from urllib.parse import unquote

from agentmem.domain.guards.normalize import Base64Payload
from agentmem.domain.guards.pii._text import digit_count
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["iter_encoded_payloads"]

_BASE64_RUN = lazy_compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{12,}={0,2}(?![A-Za-z0-9+/=_\-])")
_HEX_RUN = lazy_compile(
    r"(?<![0-9A-Za-z])(?:0[xX])?(?P<hex>[0-9A-Fa-f]{14,}|[0-9A-Fa-f]{2}(?:[ :][0-9A-Fa-f]{2}){6,})(?![0-9A-Za-z])"
)
# base64 broken into groups by spaces or line breaks ("KzEg KDQx NSkg NTU1 LTAx MzI=")
_SPLIT_BASE64 = lazy_compile(
    r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{4,76}[ \t\n]){1,40}[A-Za-z0-9+/]{2,76}={0,2}(?![A-Za-z0-9+/=])"
)
_MIXED = lazy_compile(r"\d|[a-z][A-Z]|[+/=]")
# A group that only a payload has: base64 characters in fours, with a digit, "+", "/" or a capital
# after a small letter. A split payload holds two at least; prose seldom holds one.
_PAYLOAD_GROUP = lazy_compile(
    r"(?<![A-Za-z0-9+/=])(?=[A-Za-z0-9+/]*(?:\d|[a-z][A-Z]|[+/]))(?:[A-Za-z0-9+/]{4})+={0,2}(?![A-Za-z0-9+/=])"
)
# HTML entities inside a word: "mark&#64;example-corp.io", "&#x31;&#x33;&#x38;…", "alice&commat;mail.com"
_ENTITY_RUN = lazy_compile(r"[\w.+\-]*(?:&(?:#\d{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8});[\w.+\-]*)+")
# URL-encoding: "%2B86%20138%200013%208000", "alice%40example.com"
_PERCENT_RUN = lazy_compile(r"[A-Za-z0-9._~+\-]*(?:%[0-9A-Fa-f]{2}[A-Za-z0-9._~+\-]*)+")
_MIN_PRINTABLE = 0.9
# What PII is made of: a digit or an "@" (a phone, an ID, a card, an e-mail, a password with digits).
_PII_MATERIAL = lazy_compile(r"[0-9@]")


def _readable(raw: bytes) -> str | None:
    """``raw`` as UTF-8 text that is mostly printable and holds a digit or ``@``, else None."""
    try:
        decoded = raw.decode("utf-8")
    except ValueError:
        return None
    if not decoded.strip() or _PII_MATERIAL.search(decoded) is None:
        return None
    printable = sum(1 for ch in decoded if ch.isprintable() or ch in "\n\t\r")
    return decoded if printable >= _MIN_PRINTABLE * len(decoded) else None


def _two(matches: Iterator[re.Match[str]]) -> bool:
    return next(matches, None) is not None and next(matches, None) is not None


def _plain_word(chunk: str) -> bool:
    return chunk.isalpha() and (chunk.islower() or chunk.isupper() or chunk.istitle())


def _decode_base64(run: str) -> str | None:
    core = run.rstrip("=")
    if len(core) % 4 == 1 or (core.isalpha() and (core.islower() or core.isupper())):
        return None  # no base64 has that length; a word or an identifier is no payload
    if core.isdigit():
        return None  # a number is a number (the finders read it as it is)
    alphabet = "-_" if ("-" in core or "_" in core) else "+/"
    if alphabet == "-_" and ("+" in core or "/" in core):
        return None
    try:
        raw = base64.b64decode(core + "=" * (-len(core) % 4), altchars=alphabet.encode(), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def iter_encoded_payloads(text: str) -> Iterator[Base64Payload]:
    """The runs of ``text`` that decode to readable text holding a digit or ``@``: base64 of 12
    characters or more (standard ``+/`` or URL-safe ``-_``, with or without its ``=`` padding; a
    plain word or a number is no payload), base64 split into groups by spaces or line breaks (the
    groups of four's multiples, one of them no plain word), HTML entities (``mark&#64;example.io``), URL-encoding (``%2B86%20138…``,
    ``alice%40example.com``), and hex of seven bytes or more (compact, after ``0x``, or bytes
    joined by spaces or colons). A hash or a random key decodes to no readable text."""
    for match in _BASE64_RUN.finditer(text):
        decoded = _decode_base64(match.group(0))
        if decoded is not None:
            yield Base64Payload(match.start(), match.end(), decoded)
    # groups of base64 hold digits (prose seldom does); digit_count is shared with the finders
    split = (" " in text or "\n" in text) and digit_count(text) >= 1 and _two(_PAYLOAD_GROUP.finditer(text))
    for match in _SPLIT_BASE64.finditer(text) if split else ():
        chunks = [(m.start(), m.end()) for m in re.finditer(r"\S+", match.group(0))]
        while chunks and _plain_word(match.group(0)[slice(*chunks[0])]):
            chunks.pop(0)  # "blob KzEg…": a word before the payload is no part of it
        while chunks and _plain_word(match.group(0)[slice(*chunks[-1])]):
            chunks.pop()
        groups = [match.group(0)[start:end] for start, end in chunks]
        if (
            len(groups) < 2
            or any(len(c) % 4 for c in groups[:-1])
            or not any(_MIXED.search(c) for c in groups)
        ):
            continue  # words of a sentence, not groups of one payload
        decoded = _decode_base64("".join(groups))
        if decoded is not None:
            yield Base64Payload(match.start() + chunks[0][0], match.start() + chunks[-1][1], decoded)
    for match in _ENTITY_RUN.finditer(text) if "&" in text else ():
        decoded = html.unescape(match.group(0))
        if decoded != match.group(0) and _PII_MATERIAL.search(decoded):
            yield Base64Payload(match.start(), match.end(), decoded)
    for match in _PERCENT_RUN.finditer(text) if "%" in text else ():
        try:
            decoded = unquote(match.group(0), errors="strict")
        except UnicodeDecodeError:
            continue
        if _PII_MATERIAL.search(decoded):
            yield Base64Payload(match.start(), match.end(), decoded)
    for match in _HEX_RUN.finditer(text) if digit_count(text) >= 4 else ():  # hex of text holds "3x"
        digits = re.sub(r"[ :]", "", match["hex"])
        if len(digits) % 2:
            continue  # an odd count is no bytes
        decoded = _readable(bytes.fromhex(digits))
        if decoded is not None:
            yield Base64Payload(match.start(), match.end(), decoded)
