"""National identity numbers with no label nearby, found by their shape and kept only when
``python-stdnum`` validates them: a check digit or letter that a random number passes rarely, and
for most a birth date inside. An order number that merely passes Luhn never counts, and the
context rule of every unlabelled number applies (an order, SKU, model or version label, an
amount: :func:`~agentmem.domain.guards.pii._text.not_personal`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from importlib import import_module

from agentmem.domain.guards.pii._text import Span, digit_count, not_personal
from agentmem.domain.lazy_re import LazyPattern, lazy_compile

__all__ = ["find_checksum_id"]

_END = r"(?![0-9A-Za-z])"
_START = r"(?<![0-9A-Za-z.\-])"

# (the stdnum module, the fewest digits it holds, its shape), the shapes as people print them.
_SHAPES: tuple[tuple[str, int, LazyPattern], ...] = (
    # China resident ID in any grouping of its 18 characters (6-8-4, 6-4-4-4, 4-4-4-4-2 ...)
    ("cn.ric", 17, lazy_compile(_START + r"[1-9]\d{2,16}(?:[ \-]\d{1,16}){1,5}[0-9Xx]?" + _END)),
    ("es.dni", 8, lazy_compile(_START + r"\d{8}-?[A-HJ-NP-TV-Z]" + _END)),
    ("es.nie", 7, lazy_compile(_START + r"[XYZ]-?\d{7}-?[A-HJ-NP-TV-Z]" + _END)),
    (
        "it.codicefiscale",
        7,
        lazy_compile(
            _START + r"[A-Z]{6}[0-9LMNP-V]{2}[A-EHLMPR-T][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]" + _END
        ),
    ),
    (
        "fr.nir",
        13,
        lazy_compile(
            _START + r"[12478][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[AB])[ ]?\d{3}[ ]?\d{3}[ ]?\d{2}" + _END
        ),
    ),
    ("fi.hetu", 9, lazy_compile(_START + r"\d{6}[\-+A-FU-Y]\d{3}[0-9A-Y]" + _END)),
    ("br.cpf", 11, lazy_compile(_START + r"\d{3}\.\d{3}\.\d{3}-\d{2}" + _END)),
    ("mx.curp", 8, lazy_compile(_START + r"[A-Z][AEIOUX][A-Z]{2}\d{6}[HMX][A-Z]{5}[A-Z0-9]\d" + _END)),
    ("cl.rut", 8, lazy_compile(_START + r"\d{1,2}\.\d{3}\.\d{3}-[\dkK]" + _END)),
    # Swiss AHV number as printed, Romanian CNP, Norwegian fødselsnummer (date and two mod-11
    # checks), Belgian national number as printed, Swedish personnummer with its century
    ("ch.ssn", 13, lazy_compile(_START + r"756\.\d{4}\.\d{4}\.\d{2}" + _END)),
    ("ro.cnp", 13, lazy_compile(_START + r"[1-8]\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{6}" + _END)),
    ("no.fodselsnummer", 11, lazy_compile(_START + r"(?:[0-6]\d|7[01])(?:0[1-9]|1[0-2])\d{7}" + _END)),
    ("be.nn", 11, lazy_compile(_START + r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}" + _END)),
    ("se.personnummer", 12, lazy_compile(_START + r"(?:19|20)\d{6}[\-+]\d{4}" + _END)),
)


# One scan for any of the shapes: most texts hold none, and then no shape is tried.
_ANY_SHAPE = lazy_compile("|".join(f"(?:{shape.pattern})" for _, _, shape in _SHAPES))


@cache
def _validator(name: str) -> Callable[[str], bool]:
    module = import_module(f"stdnum.{name}")
    return module.is_valid  # type: ignore[no-any-return]


def _cn_ric_valid(value: str) -> bool:
    compact = re.sub(r"[ \-]", "", value)
    return len(compact) == 18 and _validator("cn.ric")(compact)


def find_checksum_id(text: str) -> Iterator[Span]:
    """A national ID with no label, valid by ``python-stdnum``: a China resident ID in any
    grouping of its 18 characters (``110105 1949 1231 002X``: date and MOD 11-2 check), a Spanish
    DNI ``12345678Z`` or NIE ``X1234567L`` (check letter), an Italian codice fiscale, a French NIR
    (``1 85 05 78 006 084 91``: key MOD 97), a Finnish HETU ``131052-308T``, a Brazilian CPF
    ``123.456.789-09`` and a Chilean RUT ``12.345.678-5`` as they are printed, a Mexican CURP, a
    Swiss AHV number ``756.9217.0769.85`` and a Belgian national number ``85.07.30-033.28`` as
    printed, a Romanian CNP, a Norwegian fødselsnummer, a Swedish personnummer ``19811218-9876``;
    unless its context says it is no one's (:func:`not_personal`)."""
    digits = digit_count(text)
    if digits < 7 or _ANY_SHAPE.search(text) is None:
        return
    for name, least, shape in _SHAPES:
        if digits < least:
            continue
        valid = _cn_ric_valid if name == "cn.ric" else _validator(name)
        for match in shape.finditer(text):
            if valid(match.group(0)) and not not_personal(text, *match.span()):
                yield match.span()
