"""National, tax, health and licence identifiers of many countries, from one registry
(:data:`NATIONAL_IDS`): each entry names the ``python-stdnum`` validator of the identifier (its
format and check digits, kept by that library), the words people label it with in the country's
own languages and in English, and whether its format and checksum are strong enough to find it
with no label at all.

- **Labelled**: after a label of any entry (and its lead-in: ``:``, ``is``, ``ist``, ``est`` …),
  the value the entry's validator accepts — letters and separators included (``ABCDE1234F``,
  ``780 123 4567``) — or, as with every labelled value, any run of at least six digits whatever
  its checksum (a user's typo is still their number).
- **Unlabelled**: only identifiers whose shape and check digits a random number rarely passes
  (a birth date inside and a check digit, or two check digits, or a fixed letter pattern), valid
  by their validator and outside an amount, a version or an order/SKU label
  (:func:`~agentmem.domain.guards.pii._text.not_personal`); a 13-digit run that is a valid EAN-13
  barcode is a product, not a person.

To add an identifier: one :class:`NationalId` entry (and a case in
``tests/unit/test_guards_pii_national.py``). Pure: the validators are imported on first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import import_module

from agentmem.domain.guards.pii._text import (
    LEAD_RE,
    Span,
    digit_count,
    is_barcode,
    lower_same_length,
    not_personal,
)
from agentmem.domain.lazy_re import LazyPattern, lazy_compile

__all__ = ["NATIONAL_IDS", "NationalId", "find_national_id"]


@dataclass(frozen=True, slots=True)
class NationalId:
    """One identifier: its ``python-stdnum`` module (None: labels only, any six or more digits),
    its label words (lower case, any language), and its shape when it may be found unlabelled."""

    module: str | None
    labels: tuple[str, ...]
    unlabelled: str | None = None


NATIONAL_IDS: tuple[NationalId, ...] = (
    # Europe
    NationalId("pl.pesel", ("pesel", "numer pesel"), r"\d{11}"),
    NationalId(
        "tr.tckimlik", ("tc kimlik", "t.c. kimlik", "kimlik no", "kimlik numarası", "tckn"), r"[1-9]\d{10}"
    ),
    NationalId("ee.ik", ("isikukood",), r"[1-6]\d{10}"),
    NationalId("lt.asmens", ("asmens kodas",), r"[1-6]\d{10}"),
    NationalId("de.idnr", ("steuer-id", "steuerid", "steueridentifikationsnummer", "identifikationsnummer")),
    NationalId("at.vnr", ("sozialversicherungsnummer", "versicherungsnummer", "svnr")),
    NationalId("nl.bsn", ("bsn", "burgerservicenummer", "sofinummer")),
    NationalId("be.nn", ("rijksregisternummer", "numéro de registre national", "insz")),
    NationalId("dk.cpr", ("cpr-nummer", "cpr nummer", "cpr")),
    NationalId("se.personnummer", ("personnummer", "personnr")),
    NationalId("no.fodselsnummer", ("fødselsnummer", "fodselsnummer")),
    NationalId("fi.hetu", ("henkilötunnus", "hetu", "personbeteckning")),
    NationalId("is_.kennitala", ("kennitala",)),
    NationalId("cz.rc", ("rodné číslo", "rodne cislo", "rodné čislo"), r"\d{6}/\d{3,4}"),
    NationalId("bg.egn", ("егн", "единен граждански номер")),
    NationalId("hr.oib", ("oib", "osobni identifikacijski broj")),
    NationalId("si.emso", ("emšo", "emso")),
    NationalId("ro.cnp", ("cnp", "cod numeric personal")),
    NationalId("gr.amka", ("αμκα", "amka")),
    NationalId("ie.pps", ("ppsn", "pps number", "personal public service number")),
    NationalId("gb.nhs", ("nhs number", "nhs no")),
    NationalId("gb.utr", ("unique taxpayer reference", "utr")),
    NationalId("ch.ssn", ("ahv-nummer", "ahv nummer", "numéro avs", "avs", "ahv")),
    NationalId("pt.nif", ("número de contribuinte", "contribuinte", "nif")),
    NationalId("es.nif", ("número de identificación fiscal",)),
    NationalId("fr.nif", ("numéro fiscal", "numéro d'identification fiscale", "numéro spi")),
    NationalId("it.codicefiscale", ("codice fiscale",)),
    NationalId("ua.rntrc", ("рнокпп", "ідентифікаційний код", "ідентифікаційний номер")),
    NationalId("ru.inn", ("инн",)),
    # the Americas
    NationalId("ca.sin", ("social insurance number", "numéro d'assurance sociale", "nas")),
    NationalId("us.itin", ("itin",)),
    NationalId("mx.rfc", ("registro federal de contribuyentes", "rfc")),
    NationalId("ar.cuit", ("cuit", "cuil")),
    NationalId("ec.ci", ("cédula de identidad", "cédula", "cedula")),
    NationalId("co.nit", ("nit",)),
    NationalId("br.cpf", ("cpf", "cadastro de pessoas físicas")),
    # Africa, Asia, Oceania
    NationalId("za.idnr", ("south african id", "sa id number", "id-nommer"), r"\d{6} ?\d{4} ?\d{2} ?\d"),
    NationalId("il.idnr", ("teudat zehut", "מספר זהות", "ת.ז")),
    NationalId(
        "in_.pan",
        ("pan card", "pan number", "pan no", "permanent account number"),
        r"[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]",
    ),
    NationalId("in_.aadhaar", ("aadhaar", "aadhar", "आधार")),
    NationalId("th.pin", ("เลขประจำตัวประชาชน", "thai id")),
    NationalId("my.nric", ("mykad", "no. kp", "kad pengenalan"), r"\d{6}-\d{2}-\d{4}"),
    NationalId("id.nik", ("nomor induk kependudukan", "nik ktp", "no ktp", "ktp")),
    NationalId("au.tfn", ("tax file number", "tfn")),
    # health, social-security and licence numbers that no validator describes: the label decides
    NationalId(
        None,
        (
            "krankenversicherungsnummer",
            "versichertennummer",
            "numéro de sécurité sociale",
            "número de seguridad social",
            "número de la seguridad social",
            "numero di previdenza",
            "número de utente",
            "número de saúde",
            "zorgverzekeringsnummer",
            "führerscheinnummer",
            "führerschein-nr",
            "numéro de permis",
            "permis de conduire",
            "número de licencia",
            "licencia de conducir",
            "patente di guida",
            "rijbewijsnummer",
            "carteira de motorista",
            "cnh",
            "prawo jazdy",
            "ehliyet no",
            "健康保険証番号",
            "保険者番号",
            "건강보험증 번호",
            "医保卡号",
            "社会保障号码",
        ),
    ),
)

_GAP = 16  # characters between a label's lead-in and its value
_MIN_LABELLED_DIGITS = 6
_TOKEN = lazy_compile(r"(?<![0-9A-Za-z])[0-9A-Za-z]+(?:[ .\-/][0-9A-Za-z]+)*")
_GROUP = lazy_compile(r"[0-9A-Za-z]+")


def _label_pattern(labels: tuple[str, ...]) -> str:
    """One alternation of ``labels`` as the view spells them (NFKC: the guards read the view),
    whole words only."""
    words = sorted({unicodedata.normalize("NFKC", w) for w in labels}, key=len, reverse=True)
    return r"(?<![^\W\d_])(?:" + "|".join(re.escape(w) for w in words) + r")(?![^\W\d_])"


_LABELS = lazy_compile("|".join(f"(?P<k{i}>{_label_pattern(e.labels)})" for i, e in enumerate(NATIONAL_IDS)))
_UNLABELLED: tuple[tuple[NationalId, LazyPattern], ...] = tuple(
    (e, lazy_compile(r"(?<![0-9A-Za-z\-/.])" + e.unlabelled + r"(?![0-9A-Za-z]|[\-/.]\d)"))
    for e in NATIONAL_IDS
    if e.unlabelled
)


@cache
def _validator(module: str) -> Callable[[str], bool]:
    return import_module(f"stdnum.{module}").is_valid  # type: ignore[no-any-return]


def _valid(entry: NationalId, value: str) -> bool:
    return entry.module is not None and bool(_validator(entry.module)(value))


def _labelled_value(text: str, entry: NationalId, pos: int) -> Span | None:
    """The value after a label at ``pos``: the longest leading groups of the first token within
    :data:`_GAP` that the entry's validator accepts, else its leading groups holding six or more
    digits (a labelled value is redacted whatever its checksum)."""
    token = _TOKEN.search(text, pos, min(len(text), pos + _GAP + 40))
    if token is None or token.start() > pos + _GAP:
        return None
    groups = list(_GROUP.finditer(text, token.start(), token.end()))
    for count in range(len(groups), 0, -1):
        end = groups[count - 1].end()
        if _valid(entry, text[token.start() : end]):
            return token.start(), end
    digits, last = 0, token.start()
    for group in groups:
        if not any(ch.isdigit() for ch in group.group(0)):
            break
        digits += sum(ch.isdigit() for ch in group.group(0))
        last = group.end()
    if digits >= _MIN_LABELLED_DIGITS:
        return token.start(), last
    return None


def find_national_id(text: str) -> Iterator[Span]:
    """National, tax, health and licence identifiers by the registry :data:`NATIONAL_IDS`:
    labelled in the country's languages (``PESEL``, ``Steuer-ID``, ``BSN``, ``TC Kimlik No``,
    ``Aadhaar``, ``PAN card``, ``numéro AVS``, ``codice fiscale``, ``ИНН``, ``Führerscheinnummer``
    …), the value its ``python-stdnum`` validator accepts or six or more digits; unlabelled only
    where format and checksum are strong (PESEL, T.C. Kimlik, Estonian/Lithuanian personal codes,
    South African ID not an EAN-13, Indian PAN, Czech/Slovak birth number, Malaysian NRIC)."""
    if digit_count(text) < 4:  # the fewest any entry's value holds (a PAN: four)
        return
    lowered = lower_same_length(text)
    for label in _LABELS.finditer(lowered):
        entry = NATIONAL_IDS[int(str(label.lastgroup)[1:])]
        lead = LEAD_RE.match(text, label.end())
        span = _labelled_value(text, entry, lead.end() if lead else label.end())
        if span is not None:
            yield span
    for entry, shape in _UNLABELLED:
        for match in shape.finditer(text):
            value = match.group(0)
            if is_barcode(value.replace(" ", "")):
                continue
            if _valid(entry, value) and not not_personal(text, *match.span()):
                yield match.span()
