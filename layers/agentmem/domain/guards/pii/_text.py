"""What every PII finder shares: the span type, ASCII look-arounds and the context rules.

Patterns use ASCII look-arounds such as ``(?<![0-9A-Za-z])`` instead of ``\\b``, because CJK
characters are ``\\w`` and ``\\b`` would fail between ``手机`` and ``138``.

Context decides for or against a number that no checksum settles: the nearest label before it in
the same clause (``订单号``/``order``/``SKU``/``版本`` say *not personal*; ``手机``/``card``/``身份证``
say personal) and the unit or currency around it (``1380元``, ``$1,234,567``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

Span = tuple[int, int]

NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"

# How a label hands over its value: "：", ":", "=", "是", "为", "is", "was", "#", "No." ...
LEAD = (
    r"(?:[ \t]*(?:(?i:number|num|no\.?|id)|号码|号|码|\#))?"
    r"(?:[ \t]*(?:[:：=]|是|为|為|(?i:is|was|are))(?![A-Za-z]))?[ \t]*[:：]?[ \t]*"
)

LEAD_RE = re.compile(LEAD)

# A sentence ends at "。；;！？!?", a line break, or ". " that does not close an abbreviation ("No. ").
_CLAUSE_BREAK = re.compile(
    r"[。；;！？!?\n]|(?<![Nn]o)(?<![Nn]r)(?<![Rr]ef)(?<![Tt]el)(?<![Aa]cct)(?<!#)\.\s"
)
_WINDOW = 24
_MAX_VALUE = 96  # the longest value a labelled finder looks for

# Labels that say a number is *not* personal: orders, parcels, products, versions, prices.
_IMPERSONAL = (
    r"(?<![A-Za-z])(?i:order|tracking|invoice|receipt|reference|ref\.?|transaction|txn|serial|sku|model|part|"
    r"isbn|issn|batch|lot|ticket|item|product|version|ver\.?|build|firmware|flight|booking|"
    r"confirmation|shipment|parcel|waybill|barcode|upc|ean|imei|price|amount|total|cost|"
    r"balance|page|chapter|step|size|weight|quantity|qty)(?![A-Za-z])"
    r"|订单|单号|运单|快递|物流|发票|流水|交易号|序列号|型号|编号|批次|工单|票号|货号|商品|产品|"
    r"版本|固件|航班|预订|确认号|条码|价格|金额|总价|售价|合计|余额|数量|页码|尺寸|重量"
)
# Labels that say a number is personal (any finder's own labels are stronger still).
_PERSONAL = (
    r"(?<![A-Za-z])(?i:phone|tel|mobile|cell|call|text|whatsapp|fax|contact|card|account|acct|iban|ssn|"
    r"social security|passport|id|licen[cs]e|plate|wechat|qq)(?![A-Za-z])"
    r"|手机|电话|座机|联系|传真|卡号|银行卡|信用卡|账号|帐号|账户|帐户|身份证|证件|护照|微信|车牌|牌照"
)
_LABEL = re.compile(f"(?P<impersonal>{_IMPERSONAL})|(?P<personal>{_PERSONAL})")
_AMOUNT_AFTER = re.compile(
    r"[ \t]*(?:元|块|万|亿|千|百|角|分钱|美元|欧元|英镑|日元|港币|人民币|円|"
    r"(?i:usd|rmb|cny|eur|gbp|jpy|hkd|dollars?|bucks|euros?|pounds?|yuan|k\b|m\b|%)|%)"
)
_AMOUNT_BEFORE = re.compile(r"(?:[$¥￥€£]|(?i:usd|rmb|cny|eur|gbp|hkd|jpy))[ \t]*$")


def clause_before(text: str, start: int, width: int = _WINDOW) -> str:
    """Up to ``width`` characters before ``start``, cut at the last clause break."""
    window = text[max(0, start - width) : start]
    breaks = list(_CLAUSE_BREAK.finditer(window))
    return window[breaks[-1].end() :] if breaks else window


def labelled_impersonal(text: str, start: int) -> bool:
    """Whether the nearest label before ``start`` in its clause says the number is not personal
    (an order, tracking, invoice, SKU, version, price ... number)."""
    labels = list(_LABEL.finditer(clause_before(text, start)))
    return bool(labels) and labels[-1]["impersonal"] is not None


def is_amount(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is an amount: a currency sign or code before it, or a
    unit such as ``元``/``万``/``USD``/``%`` right after it."""
    return bool(_AMOUNT_BEFORE.search(text, max(0, start - 5), start) or _AMOUNT_AFTER.match(text, end))


def not_personal(text: str, start: int, end: int) -> bool:
    """The context rule every unlabelled number passes: not an amount, not labelled impersonal."""
    return is_amount(text, start, end) or labelled_impersonal(text, start)


def digits_of(value: str) -> str:
    """The ASCII digits of ``value``, in order."""
    return "".join(ch for ch in value if ch.isdigit())


def labelled_values(
    text: str, labels: re.Pattern[str], value: re.Pattern[str], gap: int = 0
) -> Iterator[Span]:
    """Spans of ``value`` (its ``value`` group when it has one) right after a match of ``labels``
    and its lead-in (:data:`LEAD`), or starting within ``gap`` characters of it in the same
    clause (``身份证号码我记得是 …``, ``passport no. is …``)."""
    group = "value" if "value" in value.groupindex else 0
    for label in labels.finditer(text):
        lead = LEAD_RE.match(text, label.end())
        pos = lead.end() if lead else label.end()
        found = value.match(text, pos)
        if found is None and gap:
            window = text[pos : pos + gap]
            cut = _CLAUSE_BREAK.search(window)
            limit = pos + (cut.start() if cut else len(window))
            endpos = min(len(text), limit + _MAX_VALUE)
            found = value.search(text, pos, endpos)
            if found is not None and (found.start(group) > limit or (found.end() == endpos < len(text))):
                found = None
        if found is not None:
            yield found.span(group)


@lru_cache(maxsize=8)
def digit_count(text: str) -> int:
    """How many ASCII digits ``text`` holds; finders of numbers skip a text with too few (the
    finders of one text share the count)."""
    return sum(map(str.isdigit, text))
