"""Contact details: e-mail addresses (plain and obfuscated) and messenger handles."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.guards.pii._text import (
    LEAD_RE,
    WORDS_ABOUT_A_VALUE,
    Span,
    lower_same_length,
)
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["find_email", "find_handle"]

_EN = r"(?<![A-Za-z])(?i:{})(?![A-Za-z])"

# ---------------------------------------------------------------- e-mail

_EMAIL = lazy_compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*[ \t]?@[ \t]?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"
)
_URL_USERINFO = lazy_compile(r"://[^\s/@]*:$")
_MENTION = lazy_compile(r"[ \t]@(?![ \t])")  # a space before "@" and none after
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9_%+\-]*[A-Za-z0-9])?"
_BRACKETED = r"[\[({<【〔「『（][ \t]*(?i:WORD)[ \t]*[\])}>】〕」』）]"
# "@" and "." spelled out: English, es/pt "arroba"/"punto"/"ponto", fr "arobase"/"point", it
# "chiocciola", de "Klammeraffe"/"Punkt", ja "アットマーク"/"ドット", ko "골뱅이"/"닷"/"점".
_AT_WORDS = r"arroba|arobase|chiocciola|klammeraffe|アットマーク|アット|あっと|골뱅이|앳"
_DOT_WORDS = r"punto|point|ponto|punkt|ドット|どっと|닷|점"
_AT = (
    r"(?P<at>[ \t]*(?:@|" + _BRACKETED.replace("WORD", "at|@|" + _AT_WORDS) + r"|艾特|在|圈a|(?i:\(a\))|"
    r"(?<=[A-Za-z0-9])(?i:" + _AT_WORDS + r")(?=[A-Za-z0-9]))[ \t]*"
    r"|[ \t]+(?i:at|" + _AT_WORDS + r")[ \t]+|[ \t]*-(?i:at)-[ \t]*)"
)
_DOT = (
    r"(?:[ \t]*(?:\.|"
    + _BRACKETED.replace("WORD", r"dot|\.|" + _DOT_WORDS)
    + r"|点|點)[ \t]*|[ \t]+(?i:dot|"
    + _DOT_WORDS
    + r")[ \t]+|[ \t]*-(?i:dot)-[ \t]*)"
)
_OBFUSCATED_EMAIL = lazy_compile(
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
_TLD_HINT = lazy_compile(
    r"(?:[.点點]|(?i:dot|punto|point|ponto|punkt)|ドット|どっと|닷|점)[ \t\]\)}>】〕」』）-]*(?i:com|net|org|edu|gov|io|co|cn|uk|de|fr|jp|kr|ru|info|biz|me|us|ca|"
    r"au|in|hk|tw|sg|nl|it|es|br|ai|dev|app|xyz|top|mx|ch|se|no|dk|fi|pl|be|at|nz|ie|email|mail|mil)(?![A-Za-z])"
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


# "xiaoming#163.com": "#" written for "@" before a mail provider's domain.
_HASH_EMAIL = lazy_compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*[ \t]?[#＃][ \t]?(?P<provider>[A-Za-z0-9]+)"
    r"\.(?:com|cn|net|jp|kr|me)(?:\.cn)?(?![A-Za-z0-9])"
)


def find_email(text: str) -> Iterator[Span]:
    """``local@domain.tld`` (spaces around ``@`` allowed, full-width ``＠``/``．`` arrive folded),
    and the obfuscated forms: ``name dot surname at gmail dot com``, ``name [at] x [dot] com``,
    ``name(at)x.com``, ``name【at】x【dot】com``, ``name [at] x [.] com``, ``名字艾特qq点com``, the words
    of other languages (``ana arroba gmail punto com``, ``pierre arobase orange point fr``,
    ``mario chiocciola libero punto it``, ``hans at gmx punkt de``, ``tanaka アットマーク gmail ドット
    com``, ``kim 골뱅이 naver 닷 com``), and ``name#163.com`` (``#`` for ``@`` before a mail provider). Written ``word @name.tld`` (a space before ``@`` only)
    it is a mention unless the top-level domain is a known one. An obfuscated address needs a known top-level domain;
    with a spelled-out `` at `` the word before it must not be a verb or pronoun (``work at acme
    dot com``) unless the domain is a mail provider."""
    for match in _EMAIL.finditer(text):
        if _URL_USERINFO.search(text, 0, match.start()):  # https://user:pass@host is a secret
            continue
        if _MENTION.search(match.group(0)) and match.group(0).rsplit(".", 1)[-1].lower() not in _TLDS:
            continue  # "my Instagram is @foodie.jane" is a handle, not "is" at "foodie.jane"
        yield match.span()
    if "#" in text or "＃" in text:
        for match in _HASH_EMAIL.finditer(text):
            if match["provider"].lower() in _MAIL_PROVIDERS:
                yield match.span()
    if _TLD_HINT.search(text) is None:  # every obfuscated address ends in a known TLD
        return
    # A rejected candidate ("me at j.doe": no TLD "doe") must not swallow the address that starts
    # inside it ("j.doe (at) fastmail [dot] com"): the search resumes one character further on.
    pos = 0
    while (candidate := _OBFUSCATED_EMAIL.search(text, pos)) is not None:
        if _obfuscated_address(text, candidate):
            yield candidate.span()
            pos = candidate.end()
        else:
            pos = candidate.start() + 1


def _obfuscated_address(text: str, match: re.Match[str]) -> bool:
    if match["tld"].lower() not in _TLDS or _URL_USERINFO.search(text, 0, match.start()):
        return False
    local = match["local"]
    if local is None:
        return "艾特" in match["at"]
    if match["at"].strip().lower() in ("at", "point"):
        first_domain = re.split(r"\W", match["domain"])[0].lower()
        last_word = re.split(r"[ \t]+", local)[-1].lower()
        if first_domain not in _MAIL_PROVIDERS and last_word in _NOT_A_LOCAL_PART:
            return False
    return True


# ---------------------------------------------------------------- messenger handles

_HANDLE_LABEL = lazy_compile(
    r"微信号?|微信id|威信|薇信|扣扣(?:号)?|(?<![A-Za-z])(?:vx|VX|wx|Wx|WX|v信|V信)(?![A-Za-z])|QQ号(?:码)?|"
    r"抖音号|小红书号|微博(?:号|id)?|钉钉号?|飞书号?|"
    # LINE in capitals (or "line id"): "line" alone is an English word
    r"(?<![A-Za-z])LINE(?![A-Za-z])|ライン(?:ID)?|라인[ \t]?아이디|"
    r"カカオ(?:トーク)?(?:ID)?|카카오(?:톡)?(?:[ \t]?아이디)?|카톡(?:[ \t]?아이디)?|テレグラム|텔레그램|"
    r"インスタ(?:グラム)?|인스타(?:그램)?|ディスコード|디스코드|ツイッター|트위터"
)
# Matched against the lower-cased text: a case-sensitive pattern runs several times faster than (?i:).
_HANDLE_LABEL_EN = lazy_compile(
    r"(?<![a-z])(?:qq|we[ \t]?chat(?:[ \t]*id)?|weixin|wxid|telegram|tg|line[ \t]*id|skype(?:[ \t]*id)?|discord|"
    r"signal(?:[ \t]*id)?|kakao(?:talk)?(?:[ \t]*id)?|snap(?:chat)?|instagram|insta|ig|twitter|tiktok|"
    r"threads|x[ \t]*handle|handle|username|user[ \t]*name)(?![a-z])"
)
_HANDLE_VALUE = lazy_compile(
    r"[ \t]*(?P<value>@?[A-Za-z0-9][A-Za-z0-9_.\-]{2,30}[A-Za-z0-9_])(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
)
# A lead that states the value: "：", "=", "是", "号", "ID", "は", "는" ... (a CJK copula before an ASCII
# value is as plain as a colon); English "is"/"was" only with "my ..." and a value that is no word.
_EXPLICIT_LEAD = lazy_compile(
    r"[ \t]*(?:[:：=]|是|为|為|号|は|が|는|은|이|가|(?:の|의)?[ \t]*(?:(?i:id)(?![A-Za-z])|아이디))"
)
_ENGLISH_COPULA = lazy_compile(r"(?:[ \t]+(?i:handle|username|id|account))?[ \t]+(?i:is|was)(?![A-Za-z])")
_POSSESSIVE = lazy_compile(r"(?:(?<![A-Za-z])(?i:my|our)|我的|私の|僕の|내|제|나의)[ \t]*$")
_WXID = lazy_compile(r"(?<![A-Za-z0-9_])wxid_[A-Za-z0-9]{6,}(?![A-Za-z0-9_])")


def _stated_by_copula(text: str, label_start: int, label_end: int, value: str) -> bool:
    """``my Instagram is foodie``: an English copula states a handle after "my ..." when the value
    is not a word about the account (``my Instagram is private``)."""
    return (
        _ENGLISH_COPULA.match(text, label_end) is not None
        and _POSSESSIVE.search(text, max(0, label_start - 8), label_start) is not None
        and value.lower() not in WORDS_ABOUT_A_VALUE
    )


def find_handle(text: str) -> Iterator[Span]:
    """A messenger id after ``微信``/``微信号``/``WeChat``/``QQ``/``Telegram``/``LINE``/``Line ID``/
    ``KakaoTalk``/``카톡 아이디``/``Signal``/``Discord``/``Instagram``/``vx`` ...: 4-32 letters,
    digits, ``_ . -`` (a QQ number is digits), ``@`` in front or not. The value is taken when it
    looks made (a leading ``@``, a digit, ``_``, ``-`` or ``.``), or when a lead states it (``：``,
    ``是``, ``号``, ``ID``, the particles ``は``/``는`` ...), or after ``my … is`` when it is not a
    word about the account (``my Instagram is private``, ``Instagram is great``, ``WeChat Pay``
    hold no id); ``wxid_…`` anywhere."""
    english = _HANDLE_LABEL_EN.finditer(lower_same_length(text))
    spans = (m.span() for m in (*_HANDLE_LABEL.finditer(text), *english))
    for label_start, label_end in sorted(set(spans)):
        label = text[label_start:label_end]
        explicit = _EXPLICIT_LEAD.match(text, label_end) is not None or label.endswith(
            ("号", "id", "ID", "Id", "아이디")
        )
        lead = LEAD_RE.match(text, label_end)
        value = _HANDLE_VALUE.match(text, lead.end() if lead else label_end)
        if value is None:
            continue
        handle = value["value"]
        if (
            explicit
            or re.search(r"[\d_.\-@]", handle)
            or _stated_by_copula(text, label_start, label_end, handle)
        ):
            yield value.span("value")
    for match in _WXID.finditer(text):
        yield match.span()
