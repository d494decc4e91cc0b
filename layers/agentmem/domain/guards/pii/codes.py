"""Credentials that are named rather than assigned: a PIN or code somewhere after its name,
passwords named in other languages with the value a few words on, recovery material (backup-code
lists, TOTP seeds) and keys or tokens whatever the phrasing.

:mod:`.secrets` finds a value that follows its label directly (``password: …``, ``密码是 …``). The
finders here allow words between the name and the value in the same clause (``支付密码一般用
739104``, ``my API key for the weather service is …``), and decide by the value's shape: a PIN or
code is 4-8 digits that no unit, year or amount claims; a key or token is made up (letters and
digits, 8 or more); a seed is base32 with a digit 2-7.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.guards.pii._text import (
    Span,
    clause_before,
    is_amount,
    lower_case_labels,
    lower_same_length,
)
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["ABOUT_PASSWORDS", "find_named_code", "find_named_secret", "find_qualified_password"]

_CLAUSE_END = lazy_compile(r"[。；;！？!?\n]|\.(?:\s|$)")
_GAP = 40  # characters between a name and its value, within the clause

# ---------------------------------------------------------------- PINs and one-time codes

# Names of a secret number: PINs, passcodes, door and alarm codes, one-time and verification codes,
# and every password name (a password of digits is a PIN), in the languages the guard reads.
_PIN_NAME = lazy_compile(
    r"(?<![a-z])(?:pin(?:[ \t-]?(?:code|number|nummer|no\.?))?|pass[ \t-]?code|passcode|password|passwd|pwd|"
    r"(?:door|gate|alarm|lock|safe|garage|entry|access|keypad|unlock)[ \t]?code|"
    r"code(?=[ \t]+(?:for|to|of|on)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?(?:front[ \t]+|back[ \t]+|main[ \t]+|side[ \t]+)?"
    r"(?:door|gate|garage|alarm|safe|lock|locker|building|house|apartment|flat|entrance|keypad|phone|card|bank|account))|"
    r"verification[ \t]?code|confirmation[ \t]?code|one[ \t-]?time[ \t]?(?:code|password|passcode)|otp|"
    r"(?:\d|four|six|eight)[ \t-]?digit[ \t]+(?:code|number|pin)|"
    r"(?:2fa|mfa|sms|login|auth(?:entication)?)[ \t]?code|"
    r"passwort|kennwort|geheimzahl|zugangscode|t[üu]rcode|best[äa]tigungscode|"
    r"contrase[ñn]a|clave|c[óo]digo(?:[ \t]+(?:pin|de[ \t]+(?:acceso|verificaci[óo]n|seguridad|la[ \t]+puerta|alarma)))|"
    r"mot[ \t]+de[ \t]+passe|code(?:[ \t]+(?:pin|secret|d['’]acc[èe]s|de[ \t]+(?:v[ée]rification|confirmation|la[ \t]+porte)))|"
    r"senha|wachtwoord|pincode|has[łl]o|kod(?:[ \t]+pin)?|m[ậa]t[ \t]+kh[ẩa]u|m[ãa][ \t]+pin)(?![a-z])"
    r"|(?:密码|密碼)(?![学學锁鎖箱本器机機框表盘盤])|口令|[六四八\d]位(?:数字?)?(?:码|密码|数)|验证码|驗證碼|校验码|动态码|动态密码|短信码|门禁码|开门密码|解锁码|取件码|"
    r"暗証番号|パスワード|パスコード|認証コード|確認コード|ワンタイムパスワード|"
    r"비밀[ \t]?번호|비번|암호|인증[ \t]?번호|인증[ \t]?코드|핀[ \t]?번호"
)
_PIN_HINT = lazy_compile(
    r"pin|pass|pwd|code|otp|wort|zahl|contrase|clave|c[óo]digo|senha|wachtwoord|has[łl]o|kod|kh[ẩa]u|"
    r"密|口令|码|碼|暗証|パス|コード|비밀|비번|암호|인증|핀"
)
_NUMBER = lazy_compile(r"(?<![\d+A-Za-z])(?<!\d[.,:/\-])\d{4,8}(?![\dA-Za-z]|[.,:/\-]\d)")
# "4 digits", "4자리", "6位": how long the code is, not the code
_LENGTH = lazy_compile(r"\d[ \t-]*(?:位|桁|자리|(?i:digits?|stellig|d[íi]gitos|chiffres))")
# What turns a number into something else: a unit or count after it, a year or time word before it.
_NOT_A_CODE_AFTER = lazy_compile(
    r"[ \t]*(?:位|个|個|次|天|日|年|月|号|號|小时|分钟|秒|元|块|字|桁|回|자리|글자|번|일|년|房|室|楼|樓|层|層|栋|路|站|页|米|公里|斤|克|円|원|호|층|"
    r"(?i:room|floor|km|kg|mph|miles?|meters?|char|digit|letter|symbol|time|day|week|month|year|hour|minute|second|try|tries|attempt|"
    r"zeichen|stellen|caract|d[íi]gito|chiffre|znak|tekens|cijfers|mal|veces|fois|vezes|days|jours|tage|d[íi]as))"
)
_NOT_A_CODE_BEFORE = lazy_compile(
    r"(?<![A-Za-z])(?i:since|in|until|till|before|after|by|from|year|of|seit|bis|im|desde|hasta|en|depuis|"
    r"jusqu|avant|apr[èe]s|em|até|sinds|tot|od|do|"
    # a number that belongs to something else: "room 1204", "flight 1234", "page 2048"
    r"room|rm|apt|suite|unit|floor|gate|flight|bus|train|line|route|page|step|chapter|version|model|order|"
    r"ticket|case|building|block|house|street|ext|extension|zimmer|habitaci[óo]n|chambre|quarto)[ \t]*#?$"
    r"|自|从|於|于|年$|房间?[ \t]*$|[室楼层站页][ \t]*$|第[ \t]*$"
)
_YEAR = lazy_compile(r"19[5-9]\d|20[0-3]\d")
# What states a value: a copula or a colon ("my PIN is 1987", "PIN: 2024", "密码是 2019").
_STATED = lazy_compile(
    r"(?<![A-Za-z])(?i:is|was|ist|lautet|es|est|é|è|to|là|jest|=)(?![A-Za-z])|[:：=]|是|为|為|は|는|은|用|设"
)
_WORDS_ABOUT = lazy_compile(
    r"(?i:must|should|needs?|requires?|requirements?|policy|rules?|at[ \t]+least|minimum|maximum|length|long|"
    r"contain|muss|debe|doit|deve|moet|musi|mindestens|au[ \t]+moins|al[ \t]+menos|pelo[ \t]+menos)"
    r"|必须|至少|要求|长度|规则|最少|最多|必要|以上|이상|최소"
)


def find_named_code(text: str) -> Iterator[Span]:
    """A PIN, passcode, door or alarm code, one-time or verification code, or a password of
    digits, named in any of the guard's languages and followed within its clause by 4-8 digits
    (``支付密码一般用 739104``, ``my bank PIN is usually 7391``, ``the passcode I use is 908172``,
    ``验证码 482913``, ``Meine PIN ist 4821``, ``인증번호는 482913``). The digits are no code when a
    unit or count follows them (``8 位``, ``4 digits``, ``3 times``, ``2024年``), a year word
    precedes them (``since 2019``), they are an amount, or the clause states a rule (``must``,
    ``至少``)."""
    lowered = lower_same_length(text)
    if _PIN_HINT.search(lowered) is None:
        return
    for name in _PIN_NAME.finditer(lowered):
        window_end = min(len(text), name.end() + _GAP)
        cut = _CLAUSE_END.search(text, name.end(), window_end)
        end = cut.start() if cut else window_end
        number = _NUMBER.search(text, name.end(), end)
        if number is None:
            continue
        between = text[name.end() : number.start()]
        if re.search(r"\d", _LENGTH.sub("", between)):
            continue
        if _WORDS_ABOUT.search(between) or _WORDS_ABOUT.search(clause_before(text, name.start(), 16)):
            continue
        if _NOT_A_CODE_AFTER.match(text, number.end()) or is_amount(text, *number.span()):
            continue
        if _NOT_A_CODE_BEFORE.search(text, max(0, number.start() - 12), number.start()):
            continue
        if _YEAR.fullmatch(number.group(0)) and not _STATED.search(between):
            continue  # "Das Passwort wurde 2023 geändert", "my PIN expired in March 2024"
        yield number.span()


# ---------------------------------------------------------------- keys, tokens and seeds

_COPULA = r"(?:[ \t]+(?i:is|was|are|ist|lautet|es|est|é|è|là|jest|to|=)[ \t]*[:：]?|[ \t]*(?:[:：=]|是|为|為|は|が|는|은|이|가|：))"
_KEY_NAME = (
    r"(?<![A-Za-z])(?i:(?:api|access|secret|private|licen[cs]e|product|activation|app|client|master|encryption|"
    r"signing|ssh|gpg|pgp|deploy|service|webhook|bot)?[ \t-]?keys?|tokens?|secrets?|seed|"
    r"api[ \t-]?schl[üu]ssel|schl[üu]ssel|clave[ \t]+(?:de[ \t]+)?api|cl[ée][ \t]+(?:d['’])?api|"
    r"chave[ \t]+(?:de[ \t]+)?api|chiave[ \t]+api)(?![A-Za-z])"
    r"|密钥|秘钥|私钥|令牌|(?i:api)[ \t]?(?:key|キー|키)|キー|トークン|シークレット|토큰|시크릿|(?i:api)[ \t]?키"
)
# A key named, words in its clause, then a copula or colon, then a made-up value; or the value
# right after the name.
# The names are found in the lower-cased text (a case-sensitive pattern runs several times faster),
# the rest is matched in the text after each name.
_KEY_NAME_LOWER = lower_case_labels(_KEY_NAME)
_NAMED_KEY = lazy_compile(
    r"(?P<gap>(?:[ \t,]+(?!(?i:is|was|ist|es|est)[ \t])[^\s:：=，。；;]{1,20}){0,5}?)"
    rf"(?P<lead>{_COPULA}[ \t]*|[ \t]+)[\"'“]?(?P<secret>[A-Za-z0-9][A-Za-z0-9_\-./+=]{{7,}})"
)
_CODE_NAME = lower_case_labels(
    r"激活码|授权码|注册码|提取码|取件码|解锁码|访问码|配对码|卡密|密钥码|序列号密钥|"
    r"(?<![A-Za-z])(?i:(?:activation|licen[cs]e|access|unlock|pairing)[ \t]?(?:code|key)|product[ \t]?key)(?![A-Za-z])"
    r"|アクティベーションコード|プロダクトキー|ライセンスキー|인증[ \t]?키|제품[ \t]?키|라이선스[ \t]?키"
)
_CODE_VALUE = lazy_compile(
    r"[ \t]*(?:[:：=]|是|为|は|는|은|(?i:is))?[ \t]*"
    r"(?P<secret>(?=[A-Za-z\-]*\d)[A-Za-z0-9]{4,8}(?![A-Za-z0-9\-])|[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){1,5}(?![A-Za-z0-9]))"
)
_SEED_NAME = lower_case_labels(
    r"(?<![A-Za-z])(?i:(?:totp|2fa|mfa|otp|two[ \t-]?factor|authenticator)(?:[ \t-]*(?:secret|seed|key|setup[ \t]+key|code))?|"
    r"setup[ \t]+key)(?![A-Za-z])"
    r"|种子|两步验证(?:密钥)?|二步验证(?:密钥)?|二次验证(?:密钥)?|身份验证器(?:密钥)?|验证器密钥|"
    r"二段階認証|セットアップキー|シークレットキー|2단계[ \t]?인증|시크릿[ \t]?키|설정[ \t]?키"
)
_BASE32 = lazy_compile(
    r"(?<![A-Za-z0-9])(?P<secret>[A-Z2-7]{16,64}=*|(?:[A-Z2-7]{4}[ \t]){3,15}[A-Z2-7]{4}|(?:[a-z2-7]{4}[ \t]){3,15}[a-z2-7]{4})"
    r"(?![A-Za-z0-9])"
)
_KEY_HINT = lazy_compile(
    r"key|token|secret|seed|schl|clave|cl[ée]|chave|chiave|totp|2fa|mfa|otp|auth|factor|setup|code|phrase|mnemonic|words|"
    r"密钥|秘钥|私钥|令牌|码|卡密|キー|トークン|シークレット|コード|認証|토큰|시크릿|키|인증|种子|验证|助记词|短语|フレーズ|구문"
)
_ABOUT_A_KEY = frozenset(
    {"rotation", "rotated", "expired", "expires", "required", "missing", "invalid", "revoked"}
)


# A list of backup or recovery codes: each code 4-12 letters or digits (one dash inside allowed), a
# digit in each, joined by commas, semicolons, slashes or spaces.
_CODE = r"(?=[A-Za-z\-]*\d)[A-Za-z0-9]{3,12}(?:-[A-Za-z0-9]{3,12})?(?![A-Za-z0-9])"
_BACKUP_CODES = lazy_compile(
    r"(?:(?<![^\W\d_])(?i:(?:backup|recovery|rescue|one[ \t-]?time|2fa|mfa|emergency|scratch|verification)[ \t-]*codes?|"
    r"(?:wiederherstellungs|backup-?|sicherungs|notfall|herstel|back-?up|reserve)codes?|"
    r"c[óo]digos?[ \t]+de[ \t]+(?:respaldo|recuperaci[óo]n|recupera[çc][ãa]o|seguridad|seguran[çc]a|backup|emergencia|reserva)|"
    r"codes?[ \t]+de[ \t]+(?:secours|r[ée]cup[ée]ration|sauvegarde|r[ée]cup)|codici[ \t]+di[ \t]+(?:backup|recupero|emergenza)|"
    r"kody[ \t]+(?:zapasowe|odzyskiwania|awaryjne))(?![^\W\d_])"
    r"|备用(?:验证)?码|恢复码|救援码|备份码|备用代码|恢复代码|备份代码|恢复密钥|紧急代码|"
    r"リカバリーコード|バックアップコード|復旧コード|予備コード|복구[ \t]?코드|백업[ \t]?코드|예비[ \t]?코드)"
    r"(?:[ \t]*[(（][^)）\n]{0,40}[)）])?"  # "2FA backup codes (keep them safe): ..."
    r"(?:(?:[ \t,]+[^\s:：,，]{1,15}){1,6}?(?=[ \t]*[:：]))?"  # "backup codes for Google:", "… if I lose my phone:"
    r"(?:[ \t]+(?i:are|is|were|sind|son|sont|são|zijn|to)|[ \t]*(?:是|为|[:：=]|は|는|은))?[ \t]*:?\s*"
    rf"(?:(?:\d{{1,2}}[.)]|[-*•])[ \t]+)?(?P<secret>{_CODE}(?:(?:[ \t]*[,;，、/|][ \t]*|[ \t]+"
    r"|,?[ \t]+(?i:and|und|y|et|e|en|i|og|och)[ \t]+|[ \t]*[和及与][ \t]*"
    rf"|[ \t]*\n\s*(?:(?:\d{{1,2}}[.)]|[-*•])[ \t]+)?){_CODE})*)"
)
_BACKUP_HINT = lazy_compile(
    r"backup|recovery|rescue|one[ \t-]?time|2fa|mfa|emergency|scratch|verification|wiederherstell|sicherung|notfall|"
    r"herstel|back-?up|reserve|c[óo]digo|codes?[ \t]+de|codici|kody|备用|恢复|救援|备份|紧急|"
    r"リカバリー|バックアップ|復旧|予備|복구|백업|예비"
)


# A wallet's recovery phrase: 12-24 lower-case words after its name.
_PHRASE_NAME = lower_case_labels(
    r"(?<![A-Za-z])(?i:(?:secret[ \t]+)?(?:seed|recovery|backup|mnemonic|wallet)[ \t]+(?:phrase|words)|mnemonic)(?![A-Za-z])"
    r"|助记词|恢复短语|シードフレーズ|リカバリーフレーズ|복구[ \t]?구문|시드[ \t]?구문"
)
_PHRASE = lazy_compile(
    r"(?:[ \t]*(?:is|are|was|were|[:：=]|是|为|は|는))+[ \t]*[:：]?[ \t]*[\"'“]?"
    r"(?P<secret>[a-z]{3,8}(?:[ \t,]+[a-z]{3,8}){11,23})(?![A-Za-z])"
)
# Words of a sentence that no recovery-phrase word list holds.
_SENTENCE_WORDS = frozenset({"the", "and", "was", "were", "with", "that", "this", "have", "has", "are", "you", "your",
                             "its", "they", "them", "our", "his", "her", "not", "but", "from", "into", "onto"})  # fmt: skip
_SEED_CONTEXT = lazy_compile(
    r"(?i:2fa|totp|mfa|otp|two[ \t-]?factor|authenticator|google[ \t]+auth)|两步验证|二步验证|身份验证器|二段階認証|2단계"
)


def _made_up(value: str) -> bool:
    return bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value))


def _clause_end(text: str, start: int) -> int:
    cut = _CLAUSE_END.search(text, start, min(len(text), start + _GAP + 80))
    return cut.start() if cut else len(text)


def _trim(text: str, start: int, end: int) -> Span:
    while end - start > 1 and text[end - 1] in ".,)\"'”":
        end -= 1
    return start, end


def find_named_secret(text: str) -> Iterator[Span]:
    """A list of backup or recovery codes in any language and layout (``backup codes: 8472-1934,
    2291-0043``, ``恢复码 …``, one per line, numbered, ``… and …``), each code holding a digit. A key,
    token, secret or seed named in any phrasing: the name (``API key``/``token``/
    ``secret``/``密钥``/``令牌``/``APIキー``/``토큰``/``Schlüssel``/``clave de API`` ...), up to five
    words in its clause (``my API key for the weather service is …``), a copula or colon, then a
    made-up value (letters and digits, 8 or more characters: no word, no number, no AWS
    ``…EXAMPLE…`` key); an activation,
    licence or pick-up code (``激活码``/``提取码``/``product key``/``プロダクトキー``) of 4-8 characters
    with a digit, or dash-joined groups; a TOTP/2FA seed in base32 anywhere in the clause after
    ``2FA``/``TOTP``/``authenticator``/``种子``/``两步验证``/``二段階認証``/``2단계 인증``, or in upper
    case anywhere in a text that speaks of 2FA; a wallet's recovery phrase (12-24 lower-case words
    after ``seed phrase``/``recovery phrase``/``mnemonic``/``助记词``)."""
    lowered = lower_same_length(text)
    if _BACKUP_HINT.search(lowered) is not None:
        for match in _BACKUP_CODES.finditer(text):
            yield match.span("secret")
    if _KEY_HINT.search(lowered) is None:
        return
    for name in _KEY_NAME_LOWER.finditer(lowered):
        key = _NAMED_KEY.match(text, name.end())
        if key is None:
            continue
        secret = key["secret"]
        if not key["lead"].strip() and key["gap"]:
            continue  # words then a bare value: only a stated one counts
        if _made_up(secret) and secret.lower() not in _ABOUT_A_KEY and "EXAMPLE" not in secret:
            yield _trim(text, *key.span("secret"))
    for match in _CODE_NAME.finditer(lowered):
        value = _CODE_VALUE.match(text, match.end())
        if value is not None:
            yield value.span("secret")
    for match in _PHRASE_NAME.finditer(lowered):
        phrase = _PHRASE.match(text, match.end())
        if phrase is not None and not _SENTENCE_WORDS.intersection(re.split(r"[ \t,]+", phrase["secret"])):
            yield phrase.span("secret")
    if _SEED_CONTEXT.search(text) is not None:  # "JBSWY3DPEHPK3PXP is my 2FA secret"
        for anywhere in _BASE32.finditer(text):
            run = anywhere["secret"]
            if re.search(r"[2-7]", run) and re.search(r"[A-Za-z]", run) and run.isupper():
                yield anywhere.span("secret")
    for match in _SEED_NAME.finditer(lowered):
        seed = _BASE32.search(text, match.end(), _clause_end(text, match.end()))
        if (
            seed is not None
            and re.search(r"[2-7]", seed["secret"])
            and re.search(r"[A-Za-z]", seed["secret"])
        ):
            yield seed.span("secret")


# ---------------------------------------------------------------- a password named for something

# "password for the office wifi: Kettle-99x", "mot de passe du compte Free : Croissant_77!",
# "contraseña de la cuenta de Netflix: Tigre_88#", "密码（工作邮箱）：Qwe_12345": the name, what it is
# for (up to 40 characters of the clause, no colon), then a colon or "=" and a made-up value.
_PASSWORD_NAME = lower_case_labels(
    r"(?<![^\W\d_])(?:password|passwd|passphrase|pass[ \t]?code|passwort|kennwort|mot[ \t]+de[ \t]+passe|mdp|"
    r"contrase[ñn]a|clave|senha|wachtwoord|has[łl]o|m[ậa]t[ \t]+kh[ẩa]u|пароль|lösenord|salasana|heslo|jelszó|parolă)"
    r"(?![^\W\d_])|密码|密碼|口令|パスワード|暗証番号|비밀번호|비번|암호"
)
_FOR_WHAT = lazy_compile(
    r"(?P<what>[ \t(（][^\n:：=。.;；!?！？\"']{0,39}?)[ \t]*[:：=][ \t]*"
    r"(?:(?P<open>[\"'“‘「『`])(?P<quoted>[^\"'”’」』`\n]{1,64})[\"'”’」』`]|(?P<secret>[^\s,;，；。、]{4,64}))"
)
# What a password's rules or tools are called: "password requirements: 8 characters", "密码规则：…"
ABOUT_PASSWORDS = lazy_compile(
    r"(?i:polic(?:y|ies)|rules?|requirements?|manager|length|hint|reset|strength|format|strategy|tips?|generator|"
    r"règles?|politique|regla|política|richtlinie|regel|anforderung)|规则|要求|长度|提示|策略|管理器|重置|格式"
)


def find_qualified_password(text: str) -> Iterator[Span]:
    """A password named for what it opens, then a colon or ``=`` and the value: ``password for the
    office wifi: …``, ``mot de passe du compte Free : …``, ``Passwort vom Router: …``, ``密码（工作邮箱）：…``.
    The value is quoted, or made up (letters and a digit or a symbol, 4 or more characters; not a
    path or a link); words about passwords (``password requirements: 8 characters``) are not one."""
    lowered = lower_same_length(text)
    for name in _PASSWORD_NAME.finditer(lowered):
        found = _FOR_WHAT.match(text, name.end())
        if found is None or ABOUT_PASSWORDS.search(found["what"]):
            continue
        if found["quoted"] is not None:
            yield found.span("quoted")
            continue
        secret = found["secret"]
        if secret.startswith(("/", "~", "http", "www.")) or "://" in secret:
            continue
        if re.search(r"[^\W\d_]", secret) and re.search(r"[\d\W_]", secret):
            yield _trim(text, *found.span("secret"))
