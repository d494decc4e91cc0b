"""National, tax, health and licence identifiers by one registry of ``python-stdnum`` validators
(issue 37): every entry's identifier is found after each of its labels, the strong ones without a
label too, and benign numbers that merely look like identifiers pass."""

from __future__ import annotations

from importlib import import_module

import pytest

from agentmem.domain.guards import redact
from agentmem.domain.guards.pii.national import NATIONAL_IDS, NationalId

# A valid value per validator (the libraries' own documented examples).
VALID = {
    "pl.pesel": "44051401458",
    "tr.tckimlik": "17291716060",
    "ee.ik": "36805280109",
    "lt.asmens": "33309240064",
    "de.idnr": "36574261809",
    "at.vnr": "1237010180",
    "nl.bsn": "111222333",
    "be.nn": "85.07.30-033.28",
    "dk.cpr": "211062-5629",
    "se.personnummer": "880320-0016",
    "no.fodselsnummer": "15108695088",
    "fi.hetu": "131052-308T",
    "is_.kennitala": "450401-3150",
    "cz.rc": "710319/2745",
    "bg.egn": "7523169263",
    "hr.oib": "94577403194",
    "si.emso": "0101006500006",
    "ro.cnp": "1630615123457",
    "gr.amka": "01013099997",
    "ie.pps": "6433435F",
    "gb.nhs": "943 476 5919",
    "gb.utr": "1955839661",
    "ch.ssn": "756.9217.0769.85",
    "pt.nif": "221597018",
    "es.nif": "B58378431",
    "fr.nif": "3023217600053",
    "it.codicefiscale": "RCCMNL83S18D969H",
    "ua.rntrc": "1759013776",
    "ru.inn": "123456789047",
    "ca.sin": "123 456 782",
    "us.itin": "912-90-3456",
    "mx.rfc": "GODE561231GR8",
    "ar.cuit": "20-26756539-3",
    "ec.ci": "1714307103",
    "co.nit": "213.123.432-1",
    "br.cpf": "390.533.447-05",
    "za.idnr": "7503305044089",
    "il.idnr": "039337423",
    "in_.pan": "ACUPA7085R",
    "in_.aadhaar": "234123412346",
    "th.pin": "1101700230708",
    "my.nric": "770305-02-1234",
    "id.nik": "3171011708450001",
    "au.tfn": "123 456 782",
}
TEMPLATES = ["{label}: {value}", "My {label} is {value}, please keep it.", "{label} {value} — for the form"]


def _labelled_cases() -> list[tuple[str, str]]:
    cases = []
    for entry in NATIONAL_IDS:
        value = VALID.get(entry.module or "", "48213379")
        for i, label in enumerate(entry.labels):
            cases.append((TEMPLATES[i % len(TEMPLATES)].format(label=label, value=value), value))
    return cases


def test_the_registry_is_consistent() -> None:
    for entry in NATIONAL_IDS:
        assert entry.labels and all(label == label.lower() for label in entry.labels), entry
        if entry.module is not None:
            assert callable(import_module(f"stdnum.{entry.module}").is_valid), entry.module
            assert import_module(f"stdnum.{entry.module}").is_valid(VALID[entry.module]), entry.module


@pytest.mark.parametrize(("text", "value"), _labelled_cases())
def test_every_label_of_every_entry_finds_its_value(text: str, value: str) -> None:
    result = redact(text)
    assert value not in result.text, result.text
    assert "id_number" in result.kinds or result.redacted


@pytest.mark.parametrize(
    "entry",
    [e for e in NATIONAL_IDS if e.unlabelled],
    ids=lambda e: str(e.module) if isinstance(e, NationalId) else "",
)
def test_strong_identifiers_are_found_without_a_label(entry: NationalId) -> None:
    value = VALID[str(entry.module)]
    assert redact(f"here you go {value} thanks").text == "here you go [ID_NUMBER] thanks"


@pytest.mark.parametrize(
    "text",
    [
        "the barcode on the jar reads 4006381333931",
        "EAN 5901234123457 is printed on the box",
        "INT_MAX is 2147483647 on this platform",
        "the counter wrapped at 4294967295",
        "upgrade to version 10.0.19041.1 tonight",
        "order 44051401458 has shipped",  # a PESEL-shaped order number, labelled as an order
        "the bill came to ¥17291716060",  # an amount
        "the docs use 2001:db8::1 and 192.0.2.1 as examples",
        "RFC 3849 reserves a prefix",
        "I sin 12 times a day",
        "the nit-picking took 123 minutes",
    ],
)
def test_benign_numbers_pass(text: str) -> None:
    assert redact(text).text == text
