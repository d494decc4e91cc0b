"""Where a person lives and what they drive: home addresses (en, zh) and licence plates."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.guards.pii._text import (
    LEAD_RE,
    NOT_ALNUM_AFTER,
    NOT_ALNUM_BEFORE,
    Span,
    clause_before,
    labelled_values,
)

__all__ = ["find_address", "find_plate"]

_EN = r"(?<![A-Za-z])(?i:{})(?![A-Za-z])"

# ---------------------------------------------------------------- home addresses

_STREET = (
    r"(?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Ln|Lane|Dr|Drive|Way|Ct|Court|Pl|Place|Ter|"
    r"Terrace|Hwy|Highway|Pkwy|Parkway|Sq|Square|Cres|Crescent|Close|Row|Walk|Gardens|Circle|Cir)"
)
_EN_STREET_HINT = re.compile(r"\d[^\n]{1,60}?(?<![A-Za-z])" + _STREET + r"(?![A-Za-z])")
_ZH_HINT = re.compile(r"[路街巷弄道号区园苑村庄里场厦寓栋幢]")
_EN_ADDRESS = re.compile(
    r"(?<![0-9A-Za-z])\d{1,6}[A-Za-z]?(?:[ \t]+[A-Z][A-Za-z'\-]+){1,4}[ \t]+" + _STREET + r"\.?(?![A-Za-z])"
    r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Fl|#)\.?[ \t]*#?[A-Za-z0-9\-]+)?"
    r"(?:,[ \t]*[A-Z][A-Za-z]+(?:[ \t]+[A-Z][A-Za-z]+){0,2})?"
    r"(?:,?[ \t]*(?:[A-Z]{1,2}\d[A-Z\d]?[ \t]*\d[A-Z]{2}(?![A-Za-z])"  # a UK postcode
    r"|[A-Z]{2}(?![A-Za-z])(?:,?[ \t]*\d{5}(?:-\d{4})?(?!\d))?|\d{5}(?:-\d{4})?(?!\d)))?"
)
_ZH_PLACE = r"[^\W\d_A-Za-z]"  # a letter outside ASCII (a CJK range would cost ~2 ms to compile)
_ZH_NOT_PLACE = "我你他她它们的在是住到搬去了与及或从把被给请帮就也都还要想说叫"
_ZH_NAME = rf"(?:(?![{_ZH_NOT_PLACE}]){_ZH_PLACE})"
_NUM = r"(?:\d+|[一二三四五六七八九十百]+)"
_ZH_ADDRESS = re.compile(
    rf"(?:{_ZH_NAME}{{1,8}}?(?:省|自治区|市|区|县|旗|镇|乡|街道))*"
    rf"(?:{_ZH_NAME}{{1,12}}?(?:路|街|大道|大街|巷|弄|胡同|道){_NUM}(?:-{_NUM})?号(?:院)?"
    rf"|{_ZH_NAME}{{1,12}}?(?:小区|花园|公寓|大厦|家园|新村|苑|园|村|庄|里|公馆|广场)(?={_NUM}(?:号楼|栋|幢|座|号|期|单元))"
    rf"|(?<=[市区县镇])(?:{_ZH_NAME}{{0,10}}?)(?={_NUM}(?:号楼|栋|幢|座|号院)))"
    rf"(?:{_NUM}(?:号楼|栋|幢|座|号|期|区))?(?:{_NUM}单元)?(?:{_NUM}(?:室|号|楼|层)?)?"
    rf"(?:{_NUM}(?:室|号))?"
)
_ADDRESS_LABEL = re.compile(
    r"(?:家庭|家|居住|现|收货|寄件|收件|快递|通讯|户籍|我的)?(?:住址|地址)|家住(?:在)?|住在|现住|居住在|我家在|"
    r"(?:我|我们|他|她|现在|目前)住|寄到|送到|"
    + _EN.format(
        r"(?:home|mailing|postal|shipping|billing|street|delivery|my)[ \t]+address|address|"
        r"(?:i|we)[ \t]+live[ \t]+(?:at|on)|lives?[ \t]+at|living[ \t]+at|reside[s]?[ \t]+at|ship[ \t]+to"
    )
)
_NOT_HOME = re.compile(
    r"(?i:ip|e-?mail|mac|memory|web|url|server|website|link|wallet|contract|bitcoin|btc|eth|hex)[ \t]*$"
    r"|(?:IP|ip|邮箱|邮件|网络|内存|服务器|网站|链接|钱包|合约|接口|网页|MAC|mac|下载)$"
)
_ZH_ADDRESS_PART = re.compile(
    r"\d|[一二三四五六七八九十]+号|[路街巷弄栋幢室]|单元|小区|花园|公寓|大厦|号楼|新村"
)
_EN_ADDRESS_VALUE = re.compile(
    r"(?P<value>(?:\d{1,6}[A-Za-z]?[ \t,]+[A-Za-z]|(?i:flat|apt|unit|suite|p\.?o\.?[ \t]*box)[ \t]*\d)"
    r"(?:(?![;。；!?！？]).){2,80}?)(?=[ \t]*(?:[.;\n。；!?！？]|,?[ \t]+(?:and|but|so|my|call|phone|email)[ \t]|$))"
)
_ZH_ADDRESS_VALUE = re.compile(r"(?P<value>(?:(?![\s，,。；;！？!?]).){2,40})")


def find_address(text: str) -> Iterator[Span]:
    """A home address. Unlabelled: an English street address (house number, capitalised street
    name, a street type such as ``St``/``Road``, then optional unit, city, state and ZIP), and a
    Chinese one (administrative parts such as ``北京市朝阳区``, then a road and house number
    ``建国路88号`` or an estate ``…小区``, then building ``3栋``, unit ``2单元`` and room ``501``).
    Labelled (``地址``/``住址``/``家住``/``住在``/``address``/``I live at`` ...): the rest of the
    clause when it reads as a home address (it holds a house number, or a Chinese part finer than a
    district such as ``路``/``号``/``栋``/``小区``: ``我住在杭州西湖区`` is a city, kept as a fact); ``IP address``/``email address``/``服务器地址`` are not home addresses."""
    patterns = (
        _EN_ADDRESS if _EN_STREET_HINT.search(text) else None,
        _ZH_ADDRESS if _ZH_HINT.search(text) else None,
    )
    for pattern in patterns:
        for match in pattern.finditer(text) if pattern is not None else ():
            if match.end() - match.start() >= 5:
                yield match.span()
    for label in _ADDRESS_LABEL.finditer(text):
        if _NOT_HOME.search(clause_before(text, label.start(), 12)):
            continue
        lead = LEAD_RE.match(text, label.end())
        pos = lead.end() if lead else label.end()
        english = _EN_ADDRESS_VALUE.match(text, pos)
        if english is not None:
            yield english.span("value")
            continue
        chinese = _ZH_ADDRESS_VALUE.match(text, pos)
        if chinese is not None and _ZH_ADDRESS_PART.search(chinese["value"]):
            yield chinese.span("value")


# ---------------------------------------------------------------- licence plates

_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_ZH_PLATE = re.compile(
    rf"[{_PROVINCES}][A-HJ-NP-Z][ \t·•・.\-]?(?=(?:[A-HJ-NP-Z]*\d){{3}})[A-HJ-NP-Z0-9]{{5,6}}(?:挂|学|警|港|澳)?"
    + NOT_ALNUM_AFTER
)
_PLATE_LABEL = re.compile(
    r"车牌(?:号码|号)?|牌照(?:号)?|车号|"
    + _EN.format(
        r"licen[cs]e[ \t]*plate(?:[ \t]*(?:number|no\.?|#))?|number[ \t]*plate|plate(?:[ \t]*(?:number|no\.?|#))?|"
        r"reg(?:istration)?(?:[ \t]*(?:number|no\.?|plate))|car[ \t]*reg|tag[ \t]*number|plates"
    )
)
_PLATE_VALUE = re.compile(
    NOT_ALNUM_BEFORE
    + rf"(?P<value>[{_PROVINCES}]?(?=[A-Za-z0-9 ·\-]*\d)[A-Za-z0-9](?:[ ·\-]?[A-Za-z0-9]){{3,8}})"
    + NOT_ALNUM_AFTER
)


def find_plate(text: str) -> Iterator[Span]:
    """A Chinese licence plate (province, letter, optional ``·``, five characters or six for a new
    energy car, at least three digits: ``京A12345``, ``粤B·D12345``); any plate-shaped value (4-9
    letters and digits, one digit at least) after ``车牌``/``licence plate``/``plate number``/
    ``registration number``."""
    for match in _ZH_PLATE.finditer(text):
        yield match.span()
    yield from labelled_values(text, _PLATE_LABEL, _PLATE_VALUE, gap=12)
