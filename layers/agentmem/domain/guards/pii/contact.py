"""Contact details and locators: e-mail addresses (plain and obfuscated), messenger handles,
home addresses, licence plates and IP addresses."""

from __future__ import annotations

import ipaddress
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

__all__ = ["find_address", "find_email", "find_handle", "find_ip", "find_plate"]

_EN = r"(?<![A-Za-z])(?i:{})(?![A-Za-z])"

# ---------------------------------------------------------------- e-mail

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*[ \t]?@[ \t]?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"
)
_URL_USERINFO = re.compile(r"://[^\s/@]*:$")
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9_%+\-]*[A-Za-z0-9])?"
_BRACKETED = r"[\[({<][ \t]*(?i:WORD)[ \t]*[\])}>]"
_AT = (
    r"(?P<at>[ \t]*(?:@|" + _BRACKETED.replace("WORD", "at") + r"|艾特|圈a|(?i:\(a\)))[ \t]*"
    r"|[ \t]+(?i:at)[ \t]+|[ \t]*-(?i:at)-[ \t]*)"
)
_DOT = (
    r"(?:[ \t]*(?:\.|"
    + _BRACKETED.replace("WORD", "dot")
    + r"|点|點)[ \t]*|[ \t]+(?i:dot)[ \t]+|[ \t]*-(?i:dot)-[ \t]*)"
)
_OBFUSCATED_EMAIL = re.compile(
    rf"(?<![A-Za-z0-9._%+-])(?P<local>{_PART}(?:{_DOT}{_PART})*)?{_AT}"
    rf"(?P<domain>{_PART}(?:{_DOT}{_PART})*){_DOT}(?P<tld>[A-Za-z]{{2,6}})(?![A-Za-z0-9])"
)
_TLDS = frozenset(
    [
        "com",
        "net",
        "org",
        "edu",
        "gov",
        "mil",
        "io",
        "co",
        "cn",
        "uk",
        "de",
        "fr",
        "jp",
        "kr",
        "ru",
        "info",
        "biz",
        "me",
        "us",
        "ca",
        "au",
        "in",
        "hk",
        "tw",
        "sg",
        "nl",
        "it",
        "es",
        "br",
        "ai",
        "dev",
        "app",
        "xyz",
        "top",
        "mx",
        "ch",
        "se",
        "no",
        "dk",
        "fi",
        "pl",
        "be",
        "at",
        "nz",
        "ie",
        "email",
        "mail",
    ]
)
_MAIL_PROVIDERS = frozenset(
    [
        "gmail",
        "googlemail",
        "yahoo",
        "hotmail",
        "outlook",
        "live",
        "msn",
        "qq",
        "163",
        "126",
        "yeah",
        "sina",
        "sohu",
        "foxmail",
        "icloud",
        "me",
        "proton",
        "protonmail",
        "aol",
        "yandex",
        "gmx",
        "zoho",
        "mail",
        "aliyun",
        "139",
        "189",
    ]
)
# Words before a spelled-out " at " that make it a preposition: "I work at acme dot com".
_NOT_A_LOCAL_PART = frozenset(
    [
        "look",
        "looking",
        "looked",
        "me",
        "us",
        "him",
        "her",
        "them",
        "it",
        "you",
        "i",
        "we",
        "they",
        "he",
        "she",
        "be",
        "is",
        "are",
        "was",
        "were",
        "am",
        "been",
        "arrive",
        "arrived",
        "stay",
        "stayed",
        "staying",
        "work",
        "works",
        "worked",
        "working",
        "meet",
        "met",
        "see",
        "seen",
        "live",
        "lives",
        "lived",
        "living",
        "here",
        "there",
        "home",
        "and",
        "or",
        "the",
        "a",
        "an",
        "this",
        "that",
        "good",
        "great",
        "best",
        "available",
        "reach",
        "laugh",
        "stare",
        "aim",
        "point",
        "shop",
        "shopping",
        "buy",
        "bought",
        "sell",
        "sold",
        "job",
        "jobs",
        "intern",
        "engineer",
        "study",
        "studied",
        "studying",
        "school",
        "office",
        "dinner",
        "lunch",
        "apply",
        "applied",
        "sign",
        "signed",
        "log",
        "logged",
        "up",
        "in",
        "on",
        "out",
        "email",
        "mail",
        "contact",
        "contacts",
        "support",
        "help",
        "sales",
        "info",
        "team",
        "find",
        "found",
        "available",
        "hired",
        "employed",
    ]
)


def find_email(text: str) -> Iterator[Span]:
    """``local@domain.tld`` (spaces around ``@`` allowed, full-width ``＠``/``．`` arrive folded),
    and the obfuscated forms: ``name dot surname at gmail dot com``, ``name [at] x [dot] com``,
    ``name(at)x.com``, ``名字艾特qq点com``. An obfuscated address needs a known top-level domain;
    with a spelled-out `` at `` the word before it must not be a verb or pronoun (``work at acme
    dot com``) unless the domain is a mail provider."""
    for match in _EMAIL.finditer(text):
        if not _URL_USERINFO.search(text, 0, match.start()):  # https://user:pass@host is a secret
            yield match.span()
    for match in _OBFUSCATED_EMAIL.finditer(text):
        if match["tld"].lower() not in _TLDS or _URL_USERINFO.search(text, 0, match.start()):
            continue
        local = match["local"]
        if local is None:
            if "艾特" not in match["at"]:
                continue
        elif match["at"].strip().lower() == "at":
            first_domain = re.split(r"\W", match["domain"])[0].lower()
            last_word = re.split(r"[ \t]+", local)[-1].lower()
            if first_domain not in _MAIL_PROVIDERS and last_word in _NOT_A_LOCAL_PART:
                continue
        yield match.span()


# ---------------------------------------------------------------- messenger handles

_HANDLE_LABEL = re.compile(
    r"微信号?|微信id|威信|薇信|(?<![A-Za-z])(?:vx|VX|wx|Wx|WX|v信|V信)(?![A-Za-z])|QQ号(?:码)?|(?<![A-Za-z])(?i:qq)(?![A-Za-z])|"
    r"抖音号|小红书号|微博(?:号|id)?|钉钉号?|飞书号?|"
    + _EN.format(
        r"we[ \t]?chat(?:[ \t]*id)?|weixin|wxid|telegram|tg|line[ \t]*id|skype(?:[ \t]*id)?|discord|"
        r"signal[ \t]*id|kakao(?:talk)?(?:[ \t]*id)?|snap(?:chat)?|instagram|insta|ig|twitter|tiktok|x[ \t]*handle|handle"
    )
)
_HANDLE_VALUE = re.compile(r"[ \t]*(?P<value>@?[A-Za-z0-9][A-Za-z0-9_.\-]{3,31})(?![A-Za-z0-9_\-])")
_EXPLICIT_LEAD = re.compile(r"[ \t]*(?:[:：=]|是|为|為|号|(?i:is|id)(?![A-Za-z]))")
_WXID = re.compile(r"(?<![A-Za-z0-9_])wxid_[A-Za-z0-9]{6,}(?![A-Za-z0-9_])")


def find_handle(text: str) -> Iterator[Span]:
    """A messenger id after ``微信``/``微信号``/``WeChat``/``QQ``/``Telegram``/``Line ID``/``vx`` ...:
    4-32 letters, digits, ``_ . -`` (a QQ number is digits). Without an explicit lead-in (``：``,
    ``是``, ``is``, ``号``) the value must hold a digit, ``_`` or ``-`` (``WeChat Pay`` is no id);
    ``wxid_…`` anywhere."""
    for label in _HANDLE_LABEL.finditer(text):
        explicit = _EXPLICIT_LEAD.match(text, label.end()) is not None or label.group(0).endswith(
            ("号", "id", "ID")
        )
        lead = LEAD_RE.match(text, label.end())
        value = _HANDLE_VALUE.match(text, lead.end() if lead else label.end())
        if value is None:
            continue
        if explicit or re.search(r"[\d_\-]", value["value"]):
            yield value.span("value")
    for match in _WXID.finditer(text):
        yield match.span()


# ---------------------------------------------------------------- home addresses

_STREET = (
    r"(?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Ln|Lane|Dr|Drive|Way|Ct|Court|Pl|Place|Ter|"
    r"Terrace|Hwy|Highway|Pkwy|Parkway|Sq|Square|Cres|Crescent|Close|Row|Walk|Gardens|Circle|Cir)"
)
_EN_ADDRESS = re.compile(
    r"(?<![0-9A-Za-z])\d{1,6}[A-Za-z]?(?:[ \t]+[A-Z][A-Za-z'\-]+){1,4}[ \t]+" + _STREET + r"\.?(?![A-Za-z])"
    r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Fl|#)\.?[ \t]*#?[A-Za-z0-9\-]+)?"
    r"(?:,[ \t]*[A-Z][A-Za-z]+(?:[ \t]+[A-Z][A-Za-z]+){0,2})?"
    r"(?:,?[ \t]*[A-Z]{2}(?![A-Za-z]))?(?:,?[ \t]*\d{5}(?:-\d{4})?(?!\d))?"
)
_ZH_PLACE = r"[\u4e00-\u9fff]"
_ZH_NOT_PLACE = "我你他她它们的在是住到搬去了与及或从把被给请帮就也都还要想说叫"
_ZH_NAME = rf"(?:(?![{_ZH_NOT_PLACE}]){_ZH_PLACE})"
_NUM = r"(?:\d+|[一二三四五六七八九十百]+)"
_ZH_ADDRESS = re.compile(
    rf"(?:{_ZH_NAME}{{1,8}}?(?:省|自治区|市|区|县|旗|镇|乡|街道))*"
    rf"(?:{_ZH_NAME}{{1,12}}?(?:路|街|大道|大街|巷|弄|胡同|道){_NUM}(?:-{_NUM})?号(?:院)?"
    rf"|{_ZH_NAME}{{1,12}}?(?:小区|花园|公寓|大厦|家园|新村|苑|园|村|庄|里|公馆|广场)"
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
_ZH_ADDRESS_PART = re.compile(r"[省市区县镇乡村路街道巷弄号栋幢楼单元室院]|小区|花园|公寓|大厦")
_EN_ADDRESS_VALUE = re.compile(
    r"(?P<value>(?:\d{1,6}[A-Za-z]?[ \t,]+[A-Za-z]|(?i:flat|apt|unit|suite|p\.?o\.?[ \t]*box)[ \t]*\d)"
    r"[^\n;。；!?！？]{2,80}?)(?=[ \t]*(?:[.;\n。；!?！？]|,?[ \t]+(?:and|but|so|my|call|phone|email)[ \t]|$))"
)
_ZH_ADDRESS_VALUE = re.compile(r"(?P<value>[^\s，,。；;！？!?\n]{2,40})")


def find_address(text: str) -> Iterator[Span]:
    """A home address. Unlabelled: an English street address (house number, capitalised street
    name, a street type such as ``St``/``Road``, then optional unit, city, state and ZIP), and a
    Chinese one (administrative parts such as ``北京市朝阳区``, then a road and house number
    ``建国路88号`` or an estate ``…小区``, then building ``3栋``, unit ``2单元`` and room ``501``).
    Labelled (``地址``/``住址``/``家住``/``住在``/``address``/``I live at`` ...): the rest of the
    clause when it reads as an address (it holds a house number, or a Chinese address part such as
    ``市``/``路``/``号``); ``IP address``/``email address``/``服务器地址`` are not home addresses."""
    for pattern in (_EN_ADDRESS, _ZH_ADDRESS):
        for match in pattern.finditer(text):
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


# ---------------------------------------------------------------- IP addresses

_IPV4 = re.compile(r"(?<![0-9A-Za-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})"
    r"(?![0-9A-Za-z:])"
)
_VERSION_BEFORE = re.compile(
    r"(?i:(?<![A-Za-z])(?:version|ver\.?|release|build|rev(?:ision)?|firmware|fw|patch|update|upgrade|"
    r"sdk|api|kernel|driver|v))[ \t]*[:=]?[ \t]*$"
    r"|(?:版本号?|固件|补丁|升级到|更新到|驱动|内核|系统)[ \t]*(?:是|为|[:：])?[ \t]*$"
)
# A word right before the quad that is not an IP context: "openssl 1.1.1.1", "Chrome 1.2.3.4".
_WORD_BEFORE = re.compile(r"(?<![A-Za-z])(?P<word>[A-Za-z][A-Za-z0-9_\-]*)[ \t]+$")
_IP_CONTEXT_WORDS = frozenset(
    [
        "ip",
        "ips",
        "addr",
        "address",
        "host",
        "hostname",
        "server",
        "servers",
        "gateway",
        "dns",
        "nameserver",
        "proxy",
        "router",
        "modem",
        "node",
        "machine",
        "box",
        "vps",
        "endpoint",
        "ping",
        "ssh",
        "curl",
        "telnet",
        "connect",
        "to",
        "at",
        "on",
        "from",
        "via",
        "is",
        "was",
        "use",
        "try",
        "and",
        "or",
        "of",
        "the",
        "a",
        "an",
        "my",
        "your",
        "our",
        "its",
        "their",
        "subnet",
        "route",
        "mask",
        "static",
        "public",
        "private",
        "local",
        "lan",
        "wan",
        "vpn",
        "peer",
        "bind",
        "listen",
        "listening",
        "allow",
        "deny",
        "block",
        "blocked",
        "whitelist",
        "blacklist",
        "src",
        "dst",
        "source",
        "destination",
        "origin",
        "client",
        "remote",
        "address:",
        "with",
        "for",
        "in",
        "by",
    ]
)
_VERSION_CLAUSE = re.compile(
    r"(?<![A-Za-z])(?i:upgrade[ds]?|upgrading|update[ds]?|updating|downgrade[ds]?|bump(?:ed)?|install(?:ed)?|"
    r"release[ds]?|version|firmware)(?![A-Za-z])|升级|更新|降级|安装|版本|固件"
)
_VERSION_AFTER = re.compile(r"[ \t]*(?:版本|(?i:release|version|build)(?![A-Za-z]))")


def _valid_ipv4(candidate: str) -> bool:
    try:
        ipaddress.IPv4Address(candidate)
    except ValueError:
        return False
    return True


def _valid_ipv6(candidate: str) -> bool:
    if candidate.count(":") < 2 or sum(ch not in ":." for ch in candidate) < 4:
        return False
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


def _is_version(text: str, start: int, end: int) -> bool:
    before = clause_before(text, start, 20)
    if _VERSION_BEFORE.search(before) or _VERSION_CLAUSE.search(before) or _VERSION_AFTER.match(text, end):
        return True
    word = _WORD_BEFORE.search(before)
    return word is not None and word["word"].lower() not in _IP_CONTEXT_WORDS


def find_ip(text: str) -> Iterator[Span]:
    """IPv4 with four octets 0-255 (``1.2.3`` and ``999.1.1.1`` are not addresses), and IPv6
    validated by :mod:`ipaddress` (at least two colons and four hex digits, so ``12:30:45`` is not).
    A dotted quad is a version, not an address, after ``version``/``v``/``build``/``firmware``/
    ``版本``/``固件`` ..., before ``版本``/``release``, or right after a product name (``openssl
    1.1.1.1``, any word that is not an IP context such as ``ip``/``server``/``ping``/``to``)."""
    for match in _IPV4.finditer(text):
        if _valid_ipv4(match.group(0)) and not _is_version(text, *match.span()):
            yield match.span()
    for match in _IPV6.finditer(text):
        if _valid_ipv6(match.group(0)):
            yield match.span()
