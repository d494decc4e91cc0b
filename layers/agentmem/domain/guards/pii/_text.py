"""What every PII finder shares: the span type, ASCII look-arounds and the context rules.

Patterns use ASCII look-arounds such as ``(?<![0-9A-Za-z])`` instead of ``\\b``, because CJK
characters are ``\\w`` and ``\\b`` would fail between ``手机`` and ``138``.

Context decides for or against a number that no checksum settles: the nearest label before it in
the same clause (``订单号``/``order``/``SKU``/``版本`` say *not personal*; ``手机``/``card``/``身份证``
say personal) and the unit or currency around it (``1380元``, ``$1,234,567``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from agentmem.domain.lazy_re import LazyPattern, Regex, lazy_compile

Span = tuple[int, int]

NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"

# How a label hands over its value: "：", ":", "=", "是", "为", "is", "was", "#", "No.", the
# Japanese and Korean particles ("は", "が", "는", "은", "이", "가", "のIDは", "번호는") and the copulas
# of other languages ("est le", "ist", "lautet", "es", "é") ...
LEAD = (
    r"(?:[ \t]*(?:(?i:number|num|no\.?|id)|号码|号|码|\#|番号|번호|아이디|"
    r"(?:の|의)[ \t]*(?:(?i:id)|番号|번호|アカウント)))?"
    r"(?:[ \t]*(?:[:：=]|是|为|為|は|が|는|은|이|가|"
    r"(?i:is|was|are|est|ist|lautet|es|é|è)(?![A-Za-z])(?:[ \t]+(?i:le|la|el|o|die|der)(?![A-Za-z]))?)"
    r"(?![A-Za-z]))?[ \t]*[:：、]?[ \t]*"
)

LEAD_RE = lazy_compile(LEAD)

# A sentence ends at "。；;！？!?", a line break, or ". " that does not close an abbreviation ("No. ",
# "ver. ").
_CLAUSE_BREAK = lazy_compile(
    r"[。；;！？!?\n]|(?<![Nn]o)(?<![Nn]r)(?<![Rr]ef)(?<![Tt]el)(?<![Aa]cct)(?<![Vv]er)(?<![Rr]ev)(?<!#)\.\s"
)
_WINDOW = 24
_MAX_VALUE = 96  # the longest value a labelled finder looks for

# Labels that say a number is *not* personal: orders, parcels, products, versions, prices.
_IMPERSONAL = (
    r"(?<![A-Za-z])(?i:order|tracking|invoice|receipt|reference|ref\.?|transaction|txn|serial|sku|model|part|"
    r"isbn|issn|batch|lot|ticket|item|product|version|ver\.?|build|firmware|release|flight|booking|"
    r"confirmation|shipment|parcel|waybill|barcode|upc|ean|imei|price|amount|total|cost|"
    r"balance|page|chapter|step|size|weight|quantity|qty)(?![A-Za-z])"
    r"|订单|单号|运单|快递|物流|发票|流水|交易号|序列号|型号|编号|批次|工单|票号|货号|商品|产品|"
    r"版本|固件|航班|预订|确认号|条码|价格|金额|总价|售价|合计|余额|数量|页码|尺寸|重量"
    r"|注文|追跡番号|伝票番号|問い合わせ番号|品番|型番|製品番号|シリアル|バージョン|ファームウェア|価格|金額|合計|"
    r"주문|송장|운송장|일련번호|모델|버전|펌웨어|가격|금액|합계"
)
# Labels that say a number is personal (any finder's own labels are stronger still).
_PERSONAL = (
    r"(?<![A-Za-z])(?i:phone|tel|mobile|cell|call|text|whatsapp|fax|contact|card|account|acct|iban|ssn|"
    r"social security|passport|id|licen[cs]e|plate|wechat|qq|portable|handy|telefon|t[ée]l[ée]phone|"
    r"m[óo]vil|celular|cellulare|telefono|telefone)(?![A-Za-z])"
    r"|手机|电话|座机|联系|传真|卡号|银行卡|信用卡|账号|帐号|账户|帐户|身份证|证件|护照|微信|车牌|牌照"
    r"|携帯|電話|連絡先|カード|口座|パスポート|旅券|マイナンバー|個人番号"
    r"|휴대폰|핸드폰|전화|연락처|카드|계좌|여권|주민등록|외국인등록"
)
# After "password is" or "my Instagram is", words that describe the value rather than state it.
WORDS_ABOUT_A_VALUE = frozenset({
    "a", "an", "the", "not", "too", "very", "required", "incorrect", "correct", "wrong", "invalid",
    "valid", "expired", "missing", "empty", "set", "unset", "changed", "reset", "stored", "saved",
    "encrypted", "hashed", "same", "different", "weak", "strong", "case", "protected", "needed",
    "mandatory", "optional", "forgotten", "lost", "shown", "hidden", "in", "on", "at", "of", "for",
    "to", "being", "long", "short", "secure", "insecure", "blank", "null", "none", "unknown",
    "must", "should", "can", "cannot", "can't", "will", "would", "may", "might", "has", "have",
    "had", "needs", "need", "and", "or", "but", "so", "that", "this", "it", "my", "your", "his",
    "her", "our", "their", "me", "you", "is", "was", "are", "be", "been", "still", "now", "also",
    "only", "just", "again", "here", "there", "manager", "managers", "policy", "policies", "rules",
    "rule", "field", "box", "prompt", "change", "strength", "length", "hint", "hints",
    "expiry", "expiration", "complexity", "requirements", "requirement", "recovery", "login",
    "please", "then", "when", "if", "because", "tomorrow", "today", "later", "soon", "yesterday",
    "every", "each", "all", "any", "some", "no", "yes", "ok", "okay", "fine", "good", "bad",
    "great", "easy", "hard", "simple", "complicated", "generator", "sensitive", "characters",
    "digits", "letters", "minimum", "maximum", "updated", "rotated", "sent", "emailed", "attached",
    "below", "above", "again.", "which", "what", "how", "why", "where", "who", "private", "public",
    "popular", "down", "blocked", "banned", "deleted", "new", "old", "dead", "inactive", "active",
    "busy", "free", "full", "back", "open", "closed", "broken", "slow", "fast", "cool", "awesome",
    "boring", "amazing", "verified", "suspended", "hacked", "gone", "better", "worse", "fun", "nice",
    "off", "useless", "addictive", "huge",
})  # fmt: skip
# Words after "mein Passwort ist" / "mi contraseña es" / "mon mot de passe est" that describe it.
WORDS_ABOUT_A_VALUE_EU = frozenset({
    "sicher", "unsicher", "falsch", "richtig", "korrekt", "geheim", "abgelaufen", "gesperrt", "geändert",
    "vergessen", "neu", "alt", "leer", "kurz", "lang", "schwach", "stark", "gültig", "ungültig", "pflicht",
    "erforderlich", "notwendig", "zu", "sehr", "nicht", "noch", "immer", "dasselbe", "gleich", "weg",
    "segura", "seguro", "insegura", "incorrecta", "correcta", "débil", "fuerte", "nueva", "vieja", "válida",
    "inválida", "larga", "corta", "caducada", "obligatoria", "secreta", "muy", "demasiado", "igual", "otra",
    "sûr", "incorrect", "correct", "faible", "fort", "nouveau", "expiré", "valide", "invalide", "obligatoire",
    "long", "court", "trop", "secret", "oublié", "différent", "pareil", "bloqué", "incorreta", "correta",
    "fraca", "forte", "nova", "expirada", "obrigatória", "errada", "certa", "muito", "veilig", "onjuist",
    "fout", "juist", "zwak", "sterk", "nieuw", "verlopen", "geldig", "ongeldig", "verplicht", "te",
    "vergeten", "olvidada", "olvidado", "oubliée", "esquecida", "esquecido", "zapomniane", "dimenticata",
    "kwijt", "perdida", "perdue", "verloren", "cambiada", "changée", "alterada", "veranderd", "zmienione",
    "esta", "este", "eso", "esto", "diese", "dieser", "dieses", "cela", "celle", "celui", "ceci", "isso", "isto",
    "essa", "esse", "deze", "dat", "dit", "simple", "facile", "fácil", "einfach", "difficile", "difícil",
    "schwierig", "eenvoudig", "proste", "trudne", "bezpieczne", "silne", "słabe", "nowe", "nieprawidłowe", "poprawne", "wymagane", "za",
})  # fmt: skip
# Matched against the lower-cased clause: case-sensitive patterns run several times faster than (?i:).
_LABEL = lazy_compile(f"(?P<impersonal>{_IMPERSONAL})|(?P<personal>{_PERSONAL})".replace("(?i:", "(?:"))
_AMOUNT_AFTER = lazy_compile(
    r"[ \t]*(?:元|块|万|亿|千|百|角|分钱|美元|欧元|英镑|日元|港币|人民币|円|원|만원|달러|유로|"
    r"(?i:usd|rmb|cny|eur|gbp|jpy|hkd|dollars?|bucks|euros?|pounds?|yuan|k\b|m\b|%)|%)"
)
_AMOUNT_BEFORE = lazy_compile(r"(?:[$¥￥€£]|(?i:usd|rmb|cny|eur|gbp|hkd|jpy))[ \t]*$")


def clause_before(text: str, start: int, width: int = _WINDOW) -> str:
    """Up to ``width`` characters before ``start``, cut at the last clause break."""
    window = text[max(0, start - width) : start]
    breaks = list(_CLAUSE_BREAK.finditer(window))
    return window[breaks[-1].end() :] if breaks else window


def labelled_impersonal(text: str, start: int) -> bool:
    """Whether the nearest label before ``start`` in its clause says the number is not personal
    (an order, tracking, invoice, SKU, version, price ... number)."""
    labels = list(_LABEL.finditer(clause_before(text, start).lower()))
    return bool(labels) and labels[-1]["impersonal"] is not None


def is_amount(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is an amount: a currency sign or code before it, or a
    unit such as ``元``/``万``/``USD``/``%`` right after it."""
    return bool(_AMOUNT_BEFORE.search(text, max(0, start - 5), start) or _AMOUNT_AFTER.match(text, end))


# Words that make a dotted number a version, wherever they stand in its clause ("the app version on
# my phone is 10.2.3.4"); "version number"/"版本号" are one word, so their "number" is no label.
_VERSION_WORD = lazy_compile(
    r"(?<![A-Za-z])(?:version(?:[ \t]*(?:number|no\.?|#))?|ver\.?|release|build(?:[ \t]*(?:number|no\.?|#))?|"
    r"firmware|fw|rev(?:ision)?|patch|update[ds]?|upgrade[ds]?|updating|upgrading|sdk|kernel|driver|"
    r"v(?=[ \t]*\d))(?![A-Za-z])"
    r"|版本(?:号码|号)?|固件|补丁|升级|更新|バージョン(?:番号)?|ファームウェア|ビルド(?:番号)?|リリース|アップデート|"
    r"버전(?:[ \t]?번호)?|펌웨어|빌드(?:[ \t]?번호)?|릴리스|업데이트"
)
# After the version word, these say the number is an address or a phone number after all.
_ADDRESS_OR_NUMBER_WORD = lazy_compile(
    r"(?<![A-Za-z])(?:ip|address|addr|host(?:name)?|dns|gateway|subnet|ping|ssh|"
    r"(?:phone|mobile|cell|contact)[ \t]+number|tel|call(?:[ \t]+me)?|at)(?![A-Za-z])"
    r"|地址|主机|网关|号码|电话|アドレス|ホスト|電話番号|주소|호스트|전화번호"
)
_DOTTED = lazy_compile(r"[vV]?\d+(?:\.\d+){2,}")
_VERSION_CLAUSE = 80


# A product name right before a dotted number ("Chrome 124.0.6367.207", "iOS 17.4.1"): a word with a
# capital letter that is no phone or address word ("Tel 555.123.4567", "IP 10.0.0.1").
_PRODUCT_BEFORE = lazy_compile(r"(?<![A-Za-z0-9])(?P<word>[A-Za-z][A-Za-z0-9+\-]*[A-Za-z+])[ \t]+[vV]?$")


def _after_a_product_name(text: str, start: int) -> bool:
    word = _PRODUCT_BEFORE.search(text, max(0, start - 24), start)
    if word is None or word["word"].islower():
        return False
    lowered = word["word"].lower()
    return (
        _LABEL.fullmatch(lowered) is None
        and _ADDRESS_OR_NUMBER_WORD.fullmatch(lowered) is None
        and lowered
        not in (
            "server",
            "router",
            "gateway",
            "proxy",
            "node",
            "vpn",
            "lan",
            "wan",
            "dns",
            "ping",
            "ssh",
            "me",
            "us",
        )
    )


def is_version(text: str, start: int, end: int) -> bool:
    """Whether the dotted number at ``start:end`` (three or more groups: ``10.2.3.4``) is a version:
    a version word (``version``/``build``/``firmware``/``release``/``v``/``版本``/``固件``/
    ``バージョン``/``ファームウェア``/``버전``/``펌웨어`` ...) stands anywhere before it in its clause,
    and no address or phone-number word (``IP``/``address``/``host``/``phone number``/``at``/
    ``地址``/``アドレス``/``주소`` ...) comes between that word and the number; or a product name
    with a capital letter stands right before it (``Chrome 124.0.6367.207``, ``iOS 17.4.1``), unless
    that word is a phone or address word (``Tel``, ``IP``, ``Server``)."""
    if _DOTTED.fullmatch(text, start, end) is None:
        return False
    if _after_a_product_name(text, start):
        return True
    before = clause_before(text, start, _VERSION_CLAUSE).lower()  # the patterns are lower case
    words = list(_VERSION_WORD.finditer(before))
    return bool(words) and _ADDRESS_OR_NUMBER_WORD.search(before, words[-1].end()) is None


def not_personal(text: str, start: int, end: int) -> bool:
    """The context rule every unlabelled number passes: not an amount, not labelled impersonal,
    not a version (:func:`is_version`)."""
    return is_amount(text, start, end) or labelled_impersonal(text, start) or is_version(text, start, end)


@lru_cache(maxsize=8)
def lower_same_length(text: str) -> str:
    """``text`` lower-cased one character for one (a character whose lower case is longer, such as
    ``İ``, stays as it is), so offsets found in it are offsets in ``text``. Label patterns match
    it case-sensitively, which runs several times faster than ``(?i:)``."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def lower_case_labels(pattern: str) -> LazyPattern:
    """Compile a label pattern whose letters are all case-insensitive (``(?i:...)``) for matching
    against :func:`lower_same_length` text: the same matches, several times faster."""
    return lazy_compile(pattern.replace("(?i:", "(?:"))


def digits_of(value: str) -> str:
    """The ASCII digits of ``value``, in order."""
    return "".join(ch for ch in value if ch.isdigit())


def labelled_values(
    text: str, labels: Regex, value: Regex, gap: int = 0, *, lowered: bool = False
) -> Iterator[Span]:
    """Spans of ``value`` (its ``value`` group when it has one) right after a match of ``labels``
    and its lead-in (:data:`LEAD`), or starting within ``gap`` characters of it in the same
    clause (``身份证号码我记得是 …``, ``passport no. is …``). ``lowered``: ``labels`` comes from
    :func:`lower_case_labels` and is matched against the lower-cased text."""
    group = "value" if "value" in value.groupindex else 0
    for label in labels.finditer(lower_same_length(text) if lowered else text):
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


@lru_cache(maxsize=256)
def is_barcode(value: str) -> bool:
    """Whether an unlabelled number is rather an EAN-13 barcode: 13 digits in one run (no payment
    card has been issued with 13 digits for decades, and a barcode is printed as one run), valid
    by the GS1 check digit (``python-stdnum``'s ``ean``)."""
    if len(value) != 13 or not value.isdigit():
        return False
    from stdnum import ean

    return bool(ean.is_valid(value))
