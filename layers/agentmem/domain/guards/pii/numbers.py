"""National IDs, account numbers and cards: checksums where they exist, labels where they don't.

An unlabelled number is redacted when its format *and* checksum say what it is (a CN resident ID,
a Hong Kong or Taiwan ID, a US SSN in its dashed form, an IBAN, a Luhn-valid card with a card
network's prefix), unless its context says it is not personal (an order, tracking or invoice
number, a price: :func:`~agentmem.domain.guards.pii._text.not_personal`). A **labelled** value
(``身份证号``/``卡号``/``账号``/``SSN``/``passport``/``IBAN``/``CVV`` ... then ``：``/``:``/``是``/
``is``) is redacted whatever its checksum: a user's typo is still their ID.

Checksums come from ``python-stdnum`` (IBAN, imported on first use: ~100 ms at import) or are
computed here where stdnum has no module (CN resident ID by GB 11643 without its place table,
Hong Kong and Taiwan IDs, Luhn).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from types import ModuleType

from agentmem.domain.guards.pii._text import (
    NOT_ALNUM_AFTER,
    NOT_ALNUM_BEFORE,
    Span,
    digit_count,
    is_barcode,
    labelled_values,
    lower_case_labels,
    not_personal,
)
from agentmem.domain.lazy_re import lazy_compile

__all__ = [
    "find_account",
    "find_bank_card",
    "find_cvv",
    "find_iban",
    "find_id_number",
    "find_passport",
    "find_ssn",
    "hkid_valid",
    "id_check_char",
    "luhn_valid",
    "twid_valid",
]

_EN = r"(?<![A-Za-z])(?i:{})(?![A-Za-z])"

# ---------------------------------------------------------------- checksums


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


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn check."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def hkid_valid(value: str) -> bool:
    """A Hong Kong identity card number ``A123456(3)`` / ``AB9876543``: one or two letters, six
    digits and a MOD 11 check character (``0-9`` or ``A``)."""
    compact = re.sub(r"[()（） ]", "", value).upper()
    if not re.fullmatch(r"[A-Z]{1,2}\d{6}[0-9A]", compact):
        return False
    letters, body, check = compact[:-7], compact[-7:-1], compact[-1]
    letters = letters.rjust(2)  # a single letter is preceded by a space (value 36)
    total = sum((36 if ch == " " else ord(ch) - 55) * w for ch, w in zip(letters, (9, 8), strict=True))
    total += sum(int(d) * w for d, w in zip(body, range(7, 1, -1), strict=True))
    expected = (11 - total % 11) % 11
    return check == ("A" if expected == 10 else str(expected))


_TW_LETTERS = "ABCDEFGHJKLMNPQRSTUVXYWZIO"  # in the order of their codes 10, 11, ... 35


def twid_valid(value: str) -> bool:
    """A Taiwan national ID ``A123456789``: a letter (coded 10-35), ``1``/``2`` (or ``8``/``9`` for
    residents), seven digits and a check digit making the weighted sum a multiple of 10."""
    compact = value.upper()
    if not re.fullmatch(r"[A-Z][1289]\d{8}", compact):
        return False
    code = _TW_LETTERS.index(compact[0]) + 10
    total = code // 10 + (code % 10) * 9
    total += sum(int(d) * w for d, w in zip(compact[1:9], range(8, 0, -1), strict=True))
    return (total + int(compact[9])) % 10 == 0


@cache
def _stdnum_iban() -> ModuleType:
    from stdnum import iban

    return iban


# ---------------------------------------------------------------- national IDs

# Digits only around it, so an ID glued to a word ("ID110105…", "身份证110105…X号") is still found;
# the printed 6-8-4 grouping (one separator throughout) too.
_CN_ID = lazy_compile(
    r"(?<![\d\-])[1-9]\d{5}(?P<sep>[ \-]?)(?P<year>(?:19|20)\d{2})(?P<month>\d{2})(?P<day>\d{2})(?P=sep)\d{3}[0-9Xx]"
    r"(?![\d\-])"
)
_HKID = lazy_compile(NOT_ALNUM_BEFORE + r"[A-Z]{1,2}\d{6}(?:[(（][0-9A][)）]|[0-9A])" + NOT_ALNUM_AFTER)
_TWID = lazy_compile(NOT_ALNUM_BEFORE + r"[A-Z][1289]\d{8}" + NOT_ALNUM_AFTER)
_ID_LABEL = lazy_compile(
    r"身份证(?:件)?(?:号码|号)?|身份證(?:號碼|號)?|身分證(?:字號|號碼)?|证件号(?:码)?|身份号码|居民身份证|"
    r"香港身份证|台胞证|台胞證|回乡证|回鄉證|台湾居民来往大陆通行证|港澳居民来往内地通行证|"
    + _EN.format(
        r"id[ \t]*card(?:[ \t]*(?:number|no\.?))?|identity[ \t]*(?:card|number)(?:[ \t]*(?:number|no\.?))?|"
        r"national[ \t]*id(?:[ \t]*(?:number|no\.?))?|id[ \t]*(?:number|no\.?|#)|hkid|resident[ \t]*id|"
        r"citizen[ \t]*id"
    )
    + r"|(?<![A-Za-z])(?i:id)(?=[ \t]*[:：])"
    # other countries' identity numbers, by their usual names (the uppercase ones are words otherwise)
    + r"|(?<![A-Za-z])(?:SIN|NRIC|NIN|DNI|NIE|CPF|CURP|BSN|PESEL|TFN|RRN|PPS)(?![A-Za-z])|"
    + _EN.format(
        r"national[ \t]*insurance(?:[ \t]*(?:number|no\.?))?|ni[ \t]*number|aadhaa?r(?:[ \t]*(?:number|no\.?))?|"
        r"resident[ \t]*registration(?:[ \t]*number)?|codice[ \t]*fiscale|personnummer|steuer-?id|tax[ \t]*id|"
        r"social[ \t]*insurance(?:[ \t]*number)?|my[ \t]*number[ \t]*card|"
        r"driver'?s?[ \t]*licen[cs]e(?:[ \t]*(?:number|no\.?|#))?|licen[cs]e[ \t]*(?:number|no\.?|#)"
    )
    + r"|驾驶证(?:号码|号)?|驾照(?:号码|号)?|社保卡号|医保卡号|军官证(?:号)?|居住证(?:号)?"
    # Japan: My Number (12 digits), residence card, driving licence; Korea: resident and alien
    # registration numbers (YYMMDD-NNNNNNN), driving licence
    + r"|マイナンバー(?!カード)|個人番号|在留カード(?:番号)?|運転免許(?:証)?(?:番号)?|免許証番号|住民票コード"
    + r"|주민(?:등록)?[ \t]?번호|외국인[ \t]?등록[ \t]?번호|운전[ \t]?면허(?:증)?[ \t]?번호|신분증[ \t]?번호"
)
# European social-security, health and identity-card names, matched on the lower-cased text (a
# second pattern: one long case-insensitive alternation costs more than two).
_ID_LABEL_EU = lower_case_labels(
    _EN.format(
        r"(?:num[ée]ro[ \t]+de[ \t]+)?s[ée]curit[ée][ \t]+sociale|(?:num[ée]ro[ \t]+de[ \t]+)?s[ée]cu|nir|carte[ \t]+vitale|"
        r"health[ \t]*(?:card|insurance|id)(?:[ \t]*(?:number|no\.?|#))?|medicare(?:[ \t]*(?:number|no\.?))?|nhs[ \t]*number|"
        r"personalausweis(?:nummer)?|ausweis(?:nummer)?|sozialversicherungsnummer|carta[ \t]+d['’]identit[àa]|"
        r"documento[ \t]+de[ \t]+identidad|c[ée]dula|carte[ \t]+d['’]identit[ée]|tessera[ \t]+sanitaria|s[ốo][ \t]+cccd|cccd|cmnd"
    )
)
_ID_VALUE = lazy_compile(
    NOT_ALNUM_BEFORE
    + r"(?P<value>\d{17}[\dXx]|\d{15}|\d{6}[ \-]\d{8}[ \-]\d{3}[\dXx]|[A-Za-z]{1,2}\d{6}[(（]?[0-9A][)）]?"
    r"|[A-Za-z][1289]\d{8}|[A-Za-z]{0,2}\d{7,12}[A-Za-z]?|[A-Za-z]{2}[ ]?\d{2}[ ]?\d{2}[ ]?\d{2}[ ]?[A-Da-d]"
    r"|[A-Za-z]{0,2}\d{2,6}(?:[ \-]\d{2,8}){1,4}[A-Za-z]?"
    # a French NIR in its printed groups (1 85 05 78 006 084 36), an Italian codice fiscale
    r"|[12][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[ABab])[ ]?\d{3}[ ]?\d{3}(?:[ ]?\d{2})?"
    r"|[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z])" + r"(?![0-9A-Za-z])"
)


def _valid_cn_id(match: re.Match[str]) -> bool:
    year, month, day = int(match["year"]), int(match["month"]), int(match["day"])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return False
    value = match.group(0).replace(" ", "").replace("-", "")
    return id_check_char(value[:17]) == value[17].upper()


_KR_RRN = lazy_compile(
    r"(?<![\d\-])\d{2}(?P<month>0[1-9]|1[0-2])(?P<day>0[1-9]|[12]\d|3[01])-[1-8]\d{6}(?![\d\-])"
)


@cache
def _stdnum_rrn() -> ModuleType:
    from stdnum.kr import rrn

    return rrn


def find_id_number(text: str) -> Iterator[Span]:
    """National identity numbers. Unlabelled: an 18-character CN resident ID (GB 11643: a real
    ``YYYYMMDD`` birth date, 1900-2099, and its MOD 11-2 check character; glued to letters or
    printed in 6-8-4 groups), a Hong Kong ID written
    ``A123456(7)`` (with its brackets, or valid by checksum without), a Taiwan ID valid by checksum.
    A Korean resident or alien registration number ``YYMMDD-NNNNNNN`` with a real month and day, a
    7th digit 1-8 and its check digit (``stdnum.kr.rrn``).
    Labelled (``身份证号``/``证件号``/``ID card``/``national ID``/``ID:``, other countries' names
    such as ``SIN``/``NRIC``/``national insurance``/``Aadhaar``/``マイナンバー``/``個人番号``/
    ``주민등록번호``/``외국인등록번호``, a driving licence ``驾驶证``/``運転免許証``, European ones such as
    ``numéro de sécurité sociale``/``sécu``/``NIR``/``health card``/``Personalausweis``/``DNI``/
    ``codice fiscale``, ``台胞證``/``回鄉證``): an 18- or 15-digit
    number, a Hong Kong / Taiwan / UK NI shape, a French NIR in its groups, a codice fiscale, 7-12
    digits or digit groups, whatever the checksum."""
    if digit_count(text) < 6:
        return
    for match in _CN_ID.finditer(text):
        if _valid_cn_id(match):
            yield match.span()
    for match in _HKID.finditer(text):
        if "(" in match.group(0) or "（" in match.group(0) or hkid_valid(match.group(0)):
            yield match.span()
    for match in _TWID.finditer(text):
        if twid_valid(match.group(0)):
            yield match.span()
    for match in _KR_RRN.finditer(text):
        if _stdnum_rrn().is_valid(match.group(0)) and not not_personal(text, *match.span()):
            yield match.span()
    yield from labelled_values(text, _ID_LABEL, _ID_VALUE, gap=12)
    yield from labelled_values(text, _ID_LABEL_EU, _ID_VALUE, gap=12, lowered=True)


_SSN_DASHED = lazy_compile(r"(?<![\d\-])(?P<area>\d{3})([ \-])(?P<group>\d{2})\2(?P<serial>\d{4})(?![\d\-])")
_SSN_LABEL = lower_case_labels(
    _EN.format(r"ssn|ss#|social[ \t]*security(?:[ \t]*(?:number|no\.?|#))?|social|tin|itin")
    + r"|社会安全号(?:码)?|社安号|社保号(?:码)?"
)
_SSN_VALUE = lazy_compile(r"(?<!\d)(?P<value>\d{3}[ \-./]?\d{2}[ \-./]?\d{4})(?!\d)")


def find_ssn(text: str) -> Iterator[Span]:
    """A US social security number written ``123-45-6789`` (or with spaces) whose area is not
    000, 666 or 9xx, group not 00 and serial not 0000; and a labelled (``SSN``/``social
    security``/``社会安全号``) nine-digit value in any grouping, whatever those rules say."""
    if digit_count(text) < 9:
        return
    for match in _SSN_DASHED.finditer(text):
        area, group, serial = match["area"], match["group"], match["serial"]
        plausible = area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
        if plausible and not not_personal(text, *match.span()):
            yield match.span()
    yield from labelled_values(text, _SSN_LABEL, _SSN_VALUE, gap=16, lowered=True)


_CN_PASSPORT = lazy_compile(NOT_ALNUM_BEFORE + r"[EG](?:\d{8}|[A-HJ-NP-Z]\d{7})" + NOT_ALNUM_AFTER)
_PASSPORT_LABEL = lower_case_labels(
    _EN.format(
        r"passport(?:[ \t]*(?:number|no\.?|#|id))?|travel[ \t]*document(?:[ \t]*(?:number|no\.?))?|"
        r"(?:reise)?pass(?:nummer|[ \t]*-?[ \t]*nr\.?)|reisepass|pasaporte|passaporte|passaporto|passeport|paspoort|paszport|"
        r"h[ộo][ \t]+chi[ếe]u"
    )
    + r"(?:[ \t]*-?[ \t]*(?i:nr|n[º°o]|num[ée]ro|n[úu]mero|numero|nummer)\.?)?"
    + r"|护照(?:号码|号)?|護照(?:號碼|號)?|通行证(?:号码|号)?|签证号(?:码)?"
    + r"|パスポート(?:番号)?|旅券(?:番号)?|여권(?:[ \t]?번호)?"
)
_PASSPORT_VALUE = lazy_compile(
    NOT_ALNUM_BEFORE
    + r"(?P<value>[A-Za-z]{0,3}\d{6,10}[A-Za-z]?|[A-Za-z]\d[A-Za-z0-9]{5,8}|\d{2}[A-Za-z]{2}\d{5})"
    + NOT_ALNUM_AFTER
)


def find_passport(text: str) -> Iterator[Span]:
    """A CN passport number (``E``/``G`` + 8 digits, or ``E`` + a letter + 7 digits) anywhere; any
    passport-shaped value (up to three letters and 6-10 digits) after ``passport``/``护照``/
    ``通行证`` ...."""
    if digit_count(text) < 6:
        return
    for match in _CN_PASSPORT.finditer(text):
        if not not_personal(text, *match.span()):
            yield match.span()
    yield from labelled_values(text, _PASSPORT_LABEL, _PASSPORT_VALUE, gap=20, lowered=True)


# ---------------------------------------------------------------- accounts and cards

_IBAN = lazy_compile(
    NOT_ALNUM_BEFORE + r"[A-Z]{2}\d{2}(?:[ \-]?[A-Z0-9]{4}){2,7}(?:[ \-]?[A-Z0-9]{1,3})?" + NOT_ALNUM_AFTER
)
_IBAN_LABEL = lower_case_labels(_EN.format(r"iban") + r"|国际银行账号")
_IBAN_VALUE = lazy_compile(
    NOT_ALNUM_BEFORE + r"(?P<value>[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){10,30})" + NOT_ALNUM_AFTER
)


def find_iban(text: str) -> Iterator[Span]:
    """An IBAN of any country, compact or in groups of four, valid by ``stdnum.iban`` (country
    length and MOD 97-10); any IBAN-shaped value after the label ``IBAN``."""
    if digit_count(text) < 10:
        return
    for match in _IBAN.finditer(text):
        value = match.group(0)
        # a trailing group can be the next word ("... 3000 TODAY"): try the run, then shorter runs
        while value:
            if _stdnum_iban().is_valid(value):
                yield match.start(), match.start() + len(value)
                break
            value = re.sub(r"[ \-]?[A-Z0-9]{1,4}$", "", value) if len(value) > 15 else ""
    yield from labelled_values(text, _IBAN_LABEL, _IBAN_VALUE, gap=12, lowered=True)


_DIGIT_GROUPS = lazy_compile(r"(?<![\d\-])\d+(?:(?:[ \-]| / )\d+)*")
_CARD_NETWORK = lazy_compile(r"(?:[3-6]|2[2-7]|8[18])")
_CARD_LABEL = lower_case_labels(
    r"(?:银行|信用|借记|储蓄|工资|银联|社保|医保|(?:招商|工商|建设|农业|中国|邮政|交通|浦发|民生|兴业|光大|中信|平安|"
    r"华夏|广发)(?:银行)?|招行|工行|建行|农行|中行|交行|邮储)?卡(?:号码|号)?|卡号|"
    r"(?:クレジット|デビット|キャッシュ|銀行)?カード(?:番号)?|(?:신용|체크|직불|현금)?카드(?:[ \t]?번호)?|"
    + _EN.format(
        r"(?:credit|debit|bank|visa|master[ \t]?card|amex|union[ \t]?pay)?[ \t]*card(?:[ \t]*(?:number|no\.?|#))?"
        r"|cc(?:[ \t]*(?:number|no\.?|#))?|pan"
    )
)
_CARD_VALUE = lazy_compile(r"(?<![\d])(?P<value>\d(?:[ \-]?\d){11,18})(?![\d])")


def _card_spans(text: str) -> Iterator[Span]:
    """Runs of digit groups whose leading 13-19 digits pass Luhn with a card network's prefix."""
    for run in _DIGIT_GROUPS.finditer(text):
        groups = list(re.finditer(r"\d+", run.group(0)))
        best = None
        digits = ""
        for group in groups:
            digits += group.group(0)
            if len(digits) > 19:
                break
            if len(digits) >= 13 and _CARD_NETWORK.match(digits) and luhn_valid(digits):
                best = run.start() + group.end()
        if best is not None and (len(groups) > 1 or len(digits) <= 19):
            yield run.start(), best


def find_bank_card(text: str) -> Iterator[Span]:
    """A payment card: 13-19 digits, contiguous or in groups joined by spaces or dashes, starting
    with a card network's prefix (2-6, 81/88) and passing Luhn, unless labelled as an order, a
    tracking number or an amount, or a run of 13 digits that is a valid EAN-13 barcode; and any 12-19 digits after ``卡号``/``银行卡``/``card number`` ...
    whatever their checksum."""
    if digit_count(text) < 12:
        return
    for span in _card_spans(text):
        if not not_personal(text, *span) and not is_barcode(text[span[0] : span[1]]):
            yield span
    yield from labelled_values(text, _CARD_LABEL, _CARD_VALUE, gap=12, lowered=True)


_CVV_LABEL = lower_case_labels(
    _EN.format(r"cvv2?|cvc2?|cid|csc|security[ \t]*code|card[ \t]*verification(?:[ \t]*(?:code|value))?")
    + r"|安全码|卡背(?:面)?(?:后)?三位(?:数字)?"
)
_CVV_VALUE = lazy_compile(r"(?<![\d])(?P<value>\d{3,4})(?![\d])")
_AFTER_CARD = lazy_compile(
    r"[ \t,，;/|]*(?:(?i:exp(?:iry|ires|iration)?|valid[ \t]*thru|有效期(?:至)?)[ \t:：]*)?"
    r"(?:\d{1,2}[ \t]*/[ \t]*\d{2,4}[ \t,，;/|]+)?(?P<value>\d{3,4})(?![\d/])"
)


def find_cvv(text: str) -> Iterator[Span]:
    """A card's 3-4 digit security code: after ``CVV``/``CVC``/``security code``/``安全码``, or
    right after a card number (optionally after its ``MM/YY`` expiry)."""
    if digit_count(text) < 3:
        return
    yield from labelled_values(text, _CVV_LABEL, _CVV_VALUE, gap=20, lowered=True)
    for _, end in _card_spans(text):
        match = _AFTER_CARD.match(text, end)
        if match is not None:
            yield match.span("value")


_ACCOUNT_LABEL = lower_case_labels(
    r"(?:银行|收款|付款|对公|个人)?(?:账号|帐号|账户|帐户)(?:号码|号)?|户号|开户账号|"
    r"口座(?:番号)?|계좌(?:[ \t]?번호)?|"
    + _EN.format(
        r"(?:bank[ \t]*|checking[ \t]*|savings[ \t]*)?account(?:[ \t]*(?:number|no\.?|#|num))|"
        r"bank[ \t]*account|acct(?:[ \t]*(?:number|no\.?|#))?|a/c|routing(?:[ \t]*(?:number|no\.?))?|"
        r"sort[ \t]*code|aba|swift|bic"
    )
)
_ACCOUNT_VALUE = lazy_compile(
    r"(?<![0-9A-Za-z])(?P<value>\d(?:[ \-]?\d){5,29}|(?=[A-Za-z0-9_.@\-]*\d)[A-Za-z][A-Za-z0-9_.@\-]{3,40}"
    r"|[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?)(?![0-9A-Za-z])"
)


def find_account(text: str) -> Iterator[Span]:
    """A labelled account: ``账号``/``账户``/``account number``/``acct``/``routing``/``sort code``/
    ``SWIFT`` then 6-30 digits in any grouping, a login name holding a digit (``账号是
    zhang_san88``) or a BIC."""
    if digit_count(text) < 1:
        return
    yield from labelled_values(text, _ACCOUNT_LABEL, _ACCOUNT_VALUE, gap=12, lowered=True)
