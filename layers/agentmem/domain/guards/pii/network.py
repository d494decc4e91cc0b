"""IP addresses, told apart from version numbers by their context."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from agentmem.domain.guards.pii._text import Span, clause_before, is_version
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["find_ip"]

# ---------------------------------------------------------------- IP addresses

_IPV4 = lazy_compile(r"(?<![0-9A-Za-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = lazy_compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})"
    r"(?![0-9A-Za-z:])"
)
_VERSION_BEFORE = lazy_compile(
    r"(?i:(?<![A-Za-z])(?:version|ver\.?|release|build|rev(?:ision)?|firmware|fw|patch|update|upgrade|"
    r"sdk|api|kernel|driver|v))[ \t]*[:=]?[ \t]*$"
    r"|(?:版本号?|固件|补丁|升级到|更新到|驱动|内核|系统)[ \t]*(?:是|为|[:：])?[ \t]*$"
)
# A word right before the quad that is not an IP context: "openssl 1.1.1.1", "Chrome 1.2.3.4".
_WORD_BEFORE = lazy_compile(r"(?<![A-Za-z])(?P<word>[A-Za-z][A-Za-z0-9_\-]*)[ \t]+$")
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
        "into",
        "onto",
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
_VERSION_AFTER = lazy_compile(r"[ \t]*(?:版本|バージョン|버전|(?i:release|version|build)(?![A-Za-z]))")


# Ranges reserved for documentation and examples (RFC 5737, RFC 3849, RFC 9637): no one's address.
_DOCUMENTATION = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20")
)


def _personal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not any(address in network for network in _DOCUMENTATION)


def _valid_ipv4(candidate: str) -> bool:
    try:
        return _personal(ipaddress.IPv4Address(candidate))
    except ValueError:
        return False


def _valid_ipv6(candidate: str) -> bool:
    if candidate.count(":") < 2 or sum(ch not in ":." for ch in candidate) < 4:
        return False
    try:
        return _personal(ipaddress.IPv6Address(candidate))
    except ValueError:
        return False


def _is_version(text: str, start: int, end: int) -> bool:
    if is_version(text, start, end):  # a version word anywhere before it in the clause
        return True
    before = clause_before(text, start, 20)
    if _VERSION_BEFORE.search(before) or _VERSION_AFTER.match(text, end):
        return True
    word = _WORD_BEFORE.search(before)
    return word is not None and word["word"].lower() not in _IP_CONTEXT_WORDS


def find_ip(text: str) -> Iterator[Span]:
    """IPv4 with four octets 0-255 (``1.2.3`` and ``999.1.1.1`` are not addresses), and IPv6
    validated by :mod:`ipaddress` (at least two colons and four hex digits, so ``12:30:45`` is not),
    outside the ranges reserved for documentation (``192.0.2.0/24``, ``198.51.100.0/24``,
    ``203.0.113.0/24``, ``2001:db8::/32``, ``3fff::/20``).
    A dotted quad is a version, not an address, when a version word (``version``/``v``/``build``/
    ``firmware``/``release``/``版本``/``固件``/``バージョン``/``ファームウェア``/``버전``/``펌웨어`` ...)
    stands anywhere before it in its clause and no address word (``IP``/``address``/``host``/``at``/
    ``地址``/``アドレス``/``주소`` ...) follows that word (:func:`~agentmem.domain.guards.pii._text.is_version`:
    ``the app version on my phone is 10.2.3.4``, but ``after the update the router IP is
    192.168.0.1``); before ``版本``/``release``; or right after a product name (``openssl 1.1.1.1``,
    any word that is not an IP context such as ``ip``/``server``/``ping``/``to``)."""
    for match in _IPV4.finditer(text):
        if _valid_ipv4(match.group(0)) and not _is_version(text, *match.span()):
            yield match.span()
    for match in _IPV6.finditer(text):
        if _valid_ipv6(match.group(0)):
            yield match.span()
