"""Judge on a view, store the original (issue 37): the normalisations the guards read through
(homoglyph fold, NFKC width and compatibility forms, invisibles, keycaps, line breaks) build
only the view; what redaction returns — what is stored — is the input as written, minus the
spans the rules found, in every script."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.guards import redact
from agentmem.domain.guards.normalize import scan_view
from agentmem.domain.guards.pii import PLACEHOLDERS

_PLACEHOLDER = re.compile(
    "|".join(re.escape(p) for p in sorted(set(PLACEHOLDERS.values()), key=len, reverse=True))
)

# Letters, marks and symbols of many scripts; no "[" so the input holds no placeholder itself.
SCRIPTS = {
    "latin": (0x0041, 0x007A),
    "latin_ext": (0x00C0, 0x024F),
    "combining": (0x0300, 0x036F),
    "greek": (0x0370, 0x03FF),
    "cyrillic": (0x0400, 0x04FF),
    "arabic": (0x0600, 0x06FF),
    "devanagari": (0x0900, 0x097F),
    "hangul_jamo": (0x1100, 0x11FF),
    "cjk": (0x4E00, 0x9FFF),
    "hangul": (0xAC00, 0xD7A3),
    "fullwidth": (0xFF01, 0xFF5E),
    "emoji": (0x1F300, 0x1FAFF),
    "ligatures": (0xFB00, 0xFB06),
}
_script_chars = st.one_of(
    *(
        st.characters(min_codepoint=lo, max_codepoint=hi, exclude_characters="[")
        for lo, hi in SCRIPTS.values()
    )
)
_glue = st.sampled_from(
    [" ", "  ", "\n", "\r\n", "\t", "\u200d", "\u200c", "\u200b", "\ufe0f", "\u20e3", ",", "。", "，"]
)
_pieces = st.one_of(
    st.text(_script_chars, min_size=1, max_size=12),
    _glue,
    st.sampled_from(["0", "7", "12", "2026", "3.5", "v1.2.3"]),
)
# PII the rules find, written in scripts' own ways (full-width digits, keycaps, Cyrillic around it)
PII = [
    "13812345678",
    "１３８１２３４５６７８",
    "+44 20 7946 0958",
    "jane.doe@example.com",
    "ｊａｎｅ@ｅｘａｍｐｌｅ.ｃｏｍ",
    "1️⃣3️⃣8️⃣1️⃣2️⃣3️⃣4️⃣5️⃣6️⃣7️⃣8️⃣",
    "password: Xk9#mP2q!",
    "110101199003074578",
]


def _assert_original_minus_redactions(original: str, stored: str) -> None:
    """``stored`` is ``original`` with some non-empty spans each replaced by a placeholder: the
    text between placeholders is the original's, in order, character for character."""
    kept = _PLACEHOLDER.split(stored)
    if len(kept) == 1:
        assert stored == original
        return
    pattern = "(.+?)".join(re.escape(k) for k in kept)
    assert re.fullmatch(pattern, original, re.DOTALL), (original, stored)


@settings(max_examples=400, deadline=None)
@given(st.lists(_pieces, max_size=25).map("".join))
def test_stored_text_is_the_input_in_every_script(text: str) -> None:
    _assert_original_minus_redactions(text, redact(text).text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_pieces, st.sampled_from(PII)), max_size=12).map(" ".join))
def test_stored_text_is_the_input_minus_redactions(text: str) -> None:
    result = redact(text)
    _assert_original_minus_redactions(text, result.text)
    assert len(_PLACEHOLDER.findall(result.text)) <= len(result.findings)


@pytest.mark.parametrize(
    "text",
    [
        "Я живу в Москве, а работаю в Москва-Сити",
        "Москва",
        "Пиши мне на русском языке",
        "Київ — столиця України",
        "Καλημέρα από την Αθήνα",
        "ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３",
        "ﬁnancial oﬃce",
        "e\u0301tude, cafe\u0301",
        "मैं दिल्ली में रहता हूँ",
        "می‌خواهم فارسی بنویسم",
        "👨‍👩‍👧 family, 1️⃣ first",
        "我住在臺北，喜歡烏龍茶",
        "저는 서울에 살아요",
        "line one\r\nline two",
    ],
)
def test_text_without_pii_is_stored_as_written(text: str) -> None:
    assert redact(text).text == text


def test_a_redaction_found_on_the_view_cuts_the_original() -> None:
    """Full-width digits are read as a phone on the view; the placeholder replaces the
    full-width characters, and the Cyrillic words around them keep their letters."""
    text = "Мой номер １３８１２３４５６７８, город Москва"
    assert redact(text).text == "Мой номер [PHONE], город Москва"
    assert redact("call 1️⃣3️⃣8️⃣1️⃣2️⃣3️⃣4️⃣5️⃣6️⃣7️⃣8️⃣ now").text == "call [PHONE] now"


def test_the_view_still_reads_through_the_disguise() -> None:
    view = scan_view("ｉｇｎоｒｅ\u200b previous")  # full-width, a Cyrillic о, a zero-width space
    assert view.text == "ignore previous"
    assert view.span(0, 6) == (0, 6)  # the original characters the view's word came from
    assert scan_view("ﬁle").span(1, 2) == (0, 1)  # a cut inside a ligature takes all of it


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("رقم هاتفي ١٣٨١٢٣٤٥٦٧٨ شكرا", "رقم هاتفي [PHONE] شكرا"),
        ("मेरा फ़ोन नंबर +९१ ९८७६५ ४३२१० है", "मेरा फ़ोन नंबर [PHONE] है"),
        ("PESEL: ৪৪০৫১৪০১৪৫৮", "PESEL: [ID_NUMBER]"),
        ("السعر ١٢٣ ريال", "السعر ١٢٣ ريال"),  # a price: kept, in its own digits
    ],
)
def test_digits_of_every_script_are_read_and_kept(text: str, redacted: str) -> None:
    assert redact(text).text == redacted
