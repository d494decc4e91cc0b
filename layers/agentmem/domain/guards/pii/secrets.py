"""Credentials: passwords and PINs in any phrasing, keys and tokens by their shape, secrets in
config lines, command lines and URLs."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.guards.pii._text import WORDS_ABOUT_A_VALUE as _NOT_A_SECRET
from agentmem.domain.guards.pii._text import WORDS_ABOUT_A_VALUE_EU as _NOT_A_SECRET_EU
from agentmem.domain.guards.pii._text import Span, lower_case_labels, lower_same_length
from agentmem.domain.guards.pii.codes import ABOUT_PASSWORDS
from agentmem.domain.lazy_re import lazy_compile

__all__ = [
    "find_api_key",
    "find_aws_key",
    "find_jwt",
    "find_password",
    "find_private_key",
    "find_secret",
]

_AWS_ACCESS_KEY = lazy_compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET = lazy_compile(
    r"(?i:aws_?secret_?access_?key|aws_?secret_?key)[\"']?\s*[:=]\s*[\"']?"
    r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
)
_JWT = lazy_compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])"
)
_PRIVATE_KEY = lazy_compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
    r"(?:(?:(?!-----BEGIN ).)*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:\s+[A-Za-z0-9+/=]{16,})*)",
    re.DOTALL,
)
_API_KEY = lazy_compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|gh[oprsu]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abeoprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe keys
    r"|whsec_[A-Za-z0-9]{16,}"  # webhook signing secrets
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{36}"
    r")(?![A-Za-z0-9_-])"
)
# A secret assigned in config/env style: DB_PASS=..., api_key: ..., "password": "...", GITHUB_TOKEN=...
_CONFIG_SECRET = lazy_compile(
    r"(?<![A-Za-z0-9_])[\"']?(?P<name>(?:[A-Za-z][A-Za-z0-9_.\-]*?)?"
    r"(?P<key>(?i:secret|token|passwd|password|passphrase|pass|pwd|pw|api_?key|apikey|private_?key|access_?key|"
    r"auth|credentials?|client_?secret|signing_?key|encryption_?key|session_?key))(?P<rest>[A-Za-z0-9_]*))[\"']?"
    r"[ \t]*(?:=|:(?!//))[ \t]*[\"']?(?P<value>[^\s\"',;]{3,})"
)
_PLACEHOLDER_VALUE = lazy_compile(
    r"^(?:x{3,}|\*{3,}|\.{3}|your|example|changeme|placeholder|<|\$|\{\{|%\(|null$|none$|true$|false$|"
    r"required$|optional$|\[[A-Z_]+\]$)",
    re.IGNORECASE,
)
_EXAMPLE_KEY = "EXAMPLE"


def find_aws_key(text: str) -> Iterator[Span]:
    """Access key ids ``AKIA``/``ASIA`` + 16, and a stated ``aws_secret_access_key`` (only the
    40-character value is replaced). AWS's documented example keys (``...EXAMPLE...``) are not
    secrets and are kept."""
    if "AKIA" not in text and "ASIA" not in text and "ecret" not in text and "ECRET" not in text:
        return
    for match in _AWS_ACCESS_KEY.finditer(text):
        if _EXAMPLE_KEY not in match.group(0):
            yield match.span()
    for match in _AWS_SECRET.finditer(text):
        if _EXAMPLE_KEY not in match["secret"]:
            yield match.span("secret")


def find_jwt(text: str) -> Iterator[Span]:
    """Three base64url segments, the first starting with ``eyJ``."""
    if "eyJ" not in text:
        return
    for match in _JWT.finditer(text):
        yield match.span()


def find_private_key(text: str) -> Iterator[Span]:
    """A PEM ``-----BEGIN ... PRIVATE KEY-----`` block through its END line (a block cut off before
    END is replaced up to the end of its base64 body)."""
    if "PRIVATE KEY" not in text:
        return
    for match in _PRIVATE_KEY.finditer(text):
        yield match.span()


def find_api_key(text: str) -> Iterator[Span]:
    """Keys by their vendor's shape: ``sk-``/``sk-proj-``/``sk-ant-`` + 20 or more, GitHub
    (``ghp_`` ..., ``github_pat_``), GitLab, Slack (``xoxb-`` ...), Google (``AIza`` + 35), Stripe,
    webhook, Hugging Face and npm tokens."""
    for match in _API_KEY.finditer(text):
        yield match.span()


# ---------------------------------------------------------------- passwords and PINs

_SECRET_QUOTED = r"(?P<open>[\"'“‘「『`])(?P<quoted>(?:(?![\"'”’」』`]).){1,64})(?P<close>[\"'”’」』`])"
# The secret unquoted: printable ASCII up to whitespace or , ; (CJK characters and punctuation end it too).
_SECRET_BARE = r"(?P<secret>[!-+\--:<-~]+)"
# Chinese, Japanese and Korean labels; the particles after a ja/ko label (は, が, 는, 은, 이, 가) hand
# over the value as "是" does.
_PASSWORD_ZH = lazy_compile(
    r"(?:密码|密碼|口令|登录密码|支付密码|取款密码|交易密码|(?i:pin)码|(?i:wifi)密码|"
    r"パスワード|暗証番号|パスコード|ピン番号|(?i:pin)(?:コード|番号)|"
    r"비밀[ \t]?번호|비번|암호|패스워드|(?i:pin)[ \t]?번호)"
    r"(?P<lead>(?:[ \t]*(?:[六四八]|\d)位(?:数字|數字|数)?)?[ \t]*(?:是|为|為|改成了?|改为|设成了?|设为|设置为|:|：|=|は|が|는|은|이|가|を|를|"
    r"(?:に|로|으로)(?:変更|설정|변경)[^\s\dA-Za-z]{0,6})[ \t]*[:：]?[ \t]*(?:(?:[六四八]|\d)位(?:数字|數字|数)?[ \t]*[:：,，]?[ \t]*(?=[0-9]))?|(?:[ \t]*(?:[六四八]|\d)位(?:数字|數字|数)?)?[ \t]*)"
    r"(?![否不])(?:" + _SECRET_QUOTED + "|" + _SECRET_BARE + ")"
)
_PASSWORD_EN = lazy_compile(
    r"(?<![A-Za-z])(?i:password|passwd|passphrase|pass[ \t]?word|pwd|pw|pass[ \t]?code|pin(?:[ \t]?(?:code|number|no\.?))?|"
    r"pass(?=[ \t]*[:=]|[ \t]+(?:is|was)[ \t]))(?![A-Za-z])"
    r"(?P<lead>[ \t]+(?i:(?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:changed|set|updated|reset|switched)[ \t]+to)[ \t]+"
    r"|[ \t]+(?i:is|was|=|:)(?:[ \t]*[:=][ \t]*|[ \t]+)|[ \t]*(?:[:=]|：|是|为|為)[ \t]*"
    r"|[ \t]+(?i:of|for|on)(?:[ \t]+(?:(?![\s,;，。]).)+){1,3}[ \t]+(?i:is|was)[ \t]+|[ \t]+)"
    r"(?:" + _SECRET_QUOTED + "|" + _SECRET_BARE + ")"
)
# Labels in European languages and Vietnamese, then a colon or the language's copula; the value
# must hold a non-letter unless a colon states it ("la clave es importante" is words).
# The labels are found in the lower-cased text (case-sensitive: several times faster), the rest
# is matched after each label.
_PASSWORD_EU_LABEL = lower_case_labels(
    r"(?<![^\W\d_])(?i:passwort|kennwort|mot[ \t]+de[ \t]+passe|mdp|contrase[ñn]a|clave|senha|parola[ \t]+d['’]ordine|"
    r"wachtwoord|has[łl]o|m[ậa]t[ \t]+kh[ẩa]u|password|parola[ \t]+chiave|"
    r"пароль|şifre(?:m|si)?|sifre|lösenord(?:et)?|adgangskode(?:n)?|passord(?:et)?|salasana|heslo|jelszó|parolă|kata[ \t]+sandi)(?![^\W\d_])"
)
_PASSWORD_EU = lazy_compile(
    r"(?:[ \t]+(?i:của[ \t]+tôi|de[ \t]+mi[ \t]+cuenta|meines[ \t]+kontos|du[ \t]+compte|(?:del|de[ \t]+la|du|do|da|della|dell[’']|van[ \t]+de|des)[ \t]*wi-?fi|wi-?fi)|(?:[ \t]+[^\W\d_]{1,12}){1,3}(?=[ \t]*[:=：])"
    r"|(?P<words>(?:[ \t]+[^\W\d_](?:[^\W\d_]|-(?=[^\W\d_])){0,19}){1,3})"
    r"(?=[ \t]+(?i:ist|lautet|war|est|était|es|era|é|è|is|to|là|jest|c['’]est|är|er|je)[ \t]))?"
    r"(?P<lead>[ \t]*[:=：][ \t]*|[ \t]+(?i:ist|lautet|war|est|était|es|era|é|è|is|to|là|jest|c['’]est|är|er|je)[ \t]*[:]?[ \t]+"
    r"|[ \t]+(?i:auf|in|a|en|para|naar|na|thành)[ \t]+|[ \t]+)"
    r"(?:" + _SECRET_QUOTED + "|" + _SECRET_BARE + ")"
)
_POSSESSIVE_EU = lazy_compile(
    r"(?<![^\W\d_])(?i:mein|meine|mi|mis|mon|ma|minha|meu|mijn|moje|mój|mio|mia|của[ \t]+tôi)[ \t]+$"
)
_WORD_AT_CLAUSE_END = lazy_compile(r"[ \t]*(?:[.,;!?。，；！？\n)]|$)")


def _owned_word(text: str, label_start: int, match: re.Match[str], end: int) -> bool:
    """``mein Passwort ist Sommerwind``, ``la contraseña es Primavera``: a single word that ends
    its clause (and is no word about the password) is the password after a possessive, or when it
    is capitalised and the label is not German (whose nouns are all capitalised: ``Das Passwort
    ist Pflicht``)."""
    secret = text[match.start("secret") : end]
    if _WORD_AT_CLAUSE_END.match(text, end) is None or len(secret) < 4:
        return False
    owned = _POSSESSIVE_EU.search(text, max(0, label_start - 12), label_start) is not None
    german = text[label_start : label_start + 4].lower() in ("pass", "kenn")
    return owned or (secret[0].isupper() and secret[1:].islower() and not german)


_PASSWORD_EU_HINT = lazy_compile(
    r"passwort|kennwort|passe|mdp|contrase|clave|senha|parola|wachtwoord|has[łl]o|kh[ẩa]u|password|"
    r"пароль|şifre|sifre|lösenord|adgangskode|passord|salasana|heslo|jelszó|sandi"
)
# A PIN in Chinese numerals after a password label: "密码是八四二零一九".
_PIN_ZH_NUMERALS = lazy_compile(
    r"(?:密码|密碼|口令|(?i:pin)码?)[ \t]*(?:[六四八]位(?:数字)?)?[ \t]*(?:是|为|為|:|：|=)?[ \t]*"
    r"(?P<secret>[零〇一二三四五六七八九幺两]{4,8})(?![零〇一二三四五六七八九幺两十百千万])"
)
_CJK = lazy_compile(r"[^\W\d_A-Za-z]")  # a letter outside ASCII: cheaper to compile than the CJK ranges
_UNIT_AFTER = lazy_compile(
    r"[ \t]*(?:-[ \t]*)?(?:位|个字符|个字|字符|文字|桁|자리|글자|자(?![가-힣])|(?i:char(?:acter)?s?|digits?|letters?|symbols?|"
    r"numbers?|min(?:imum)?|max(?:imum)?|long|or more|at least|words?|times|days?|months?|tries|attempts|"
    r"年(?!\d)|년|月|월|"
    r"zeichen|stellen|caract[eè]res|d[íi]gitos|chiffres|caratteri|znak[óo]w|tekens|cijfers)(?![A-Za-z]))"
)
_WORDY_SUFFIX = lazy_compile(r"(?i:.+(?:ed|ing|ly|able|ible|ive|less|ful|ous|tion|ment|ness))$")
_WORKING_DIRECTORY = lazy_compile(r"^(?:/|~|\.{1,2}/|[A-Za-z]:\\)")


def _trim_secret(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop what closes the sentence rather than the secret: quotes, a final ``.``, a stray ``)``."""
    while end - start > 1 and text[end - 1] in "\"'`":
        end -= 1
    if end - start > 1 and text[end - 1] == ".":
        end -= 1
    if end - start > 1 and text[end - 1] == ")" and "(" not in text[start:end]:
        end -= 1
    return start, end


_NUMBER_FOLLOWS = lazy_compile(r"[ \t,]+\d{4,8}(?!\d)")
# After a lower-case word stated as the value, another word: a phrase ("password: same as before",
# "Passwort: siehe Zettel", "contraseña: la de siempre"), not a password.
_WORDS_FOLLOW = lazy_compile(r"[ \t]+[^\W\d_]")


def _looks_stated(text: str, match: re.Match[str], start: int, end: int, *, pin: bool) -> bool:
    """Whether the value after a password/PIN label is the secret and not words about it."""
    secret = text[start:end]
    lead = match["lead"].strip().lower()
    if _UNIT_AFTER.match(text, end) or (len(secret) <= 2 and _CJK.match(text, end)):
        return False  # "8 characters minimum", "密码是8位数字"
    if pin and not re.fullmatch(r"\d{4,8}", secret):
        return False
    if secret.isalpha() and secret.islower() and _WORDS_FOLLOW.match(text, end):
        return False  # "wifi password: ask the front desk" is an instruction, not the password
    if secret.isalpha() and secret.islower() and _NUMBER_FOLLOWS.match(text, end):
        return False  # "passcode: usually 739104": the number is the secret (codes.find_named_code)
    label = text[match.start() : match.start("lead")].lower()
    if label == "pass" and lead in ("is", "was") and secret.isalpha():
        return False  # "the bus pass is free": only a made-up value after a bare "pass is"
    wordy = secret.lower().rstrip(".,!?") in _NOT_A_SECRET or _WORDY_SUFFIX.fullmatch(secret) is not None
    if wordy and (lead in ("", "is", "was") or lead.startswith(("of", "for", "on"))):
        return False
    # "密码 abc123", "pw hunter2": without any lead-in the value must look made, not a word
    return bool(lead or pin or re.search(r"[^A-Za-z]", secret))


_PASSWORD_ZH_WORDS = lazy_compile(
    r"(?:密码|密碼|口令)[ \t]*(?:[:：=])[ \t]*(?P<secret>(?=(?:(?![\s，,。；;！!？?]).)*[A-Za-z0-9])"
    r"(?![0-9]+[ \t]*(?:位|个))(?:(?![\s，,。；;！!？?]).){2,32})"
)


_PASSWORD_HINT = lower_case_labels(
    r"(?i:pass|pw|pin|mdp|пароль|şifre|sifre|lösenord|adgangskode|salasana|heslo|jelszó|sandi|kennwort|contrase|clave|senha|parola|wachtwoord|has[łl]o|kh[ẩa]u)|密码|密碼|口令|パスワード|暗証|パスコード|비밀|비번|암호|패스워드"
)
_SECRET_HINT = lazy_compile(
    r"(?i:secret|token|pass|pw|key|auth|credential|bearer|basic|://|mysql|mongo|maria|sshpass|redis|--|otp|"
    r"recovery|backup|seed|mnemonic|2fa|mfa|totp)|密钥|秘钥|私钥|令牌|助记词|恢复码|备用码|验证码|救援码"
)


def find_password(text: str) -> Iterator[Span]:
    """A stated password or PIN in any phrasing: ``密码是``/``密码：``/``密码 abc123``/``口令为``/
    ``PIN码``/``password:``/``password is``/``pw is``/``pwd=``/``pass: ``/``passcode``/``PIN
    4321``/``set the password to …``. The lead-in stays; the secret (the run of printable ASCII up to
    whitespace, ``,``/``;`` or any CJK character, or a quoted phrase inside its quotes) is
    replaced. Words about the password are not a secret: ``the password is 8 characters minimum``,
    ``password must contain a digit``, ``the password is case-sensitive``, ``I forgot my password``;
    nor is ``pwd: /home/bob`` (a working directory). A PIN is 4-8 digits."""
    lowered = lower_same_length(text)
    if _PASSWORD_HINT.search(lowered) is None:
        return
    for pattern in (_PASSWORD_ZH, _PASSWORD_EN):
        for match in pattern.finditer(text):
            label = text[match.start() : match.start("lead")].lower()
            pin = label.startswith("pin")
            if match["quoted"] is not None:  # password: "correct horse battery"
                yield match.span("quoted")
                continue
            start, end = _trim_secret(text, *match.span("secret"))
            if label in ("pwd", "pw") and _WORKING_DIRECTORY.match(text[start:end]):
                continue
            if not match["lead"].strip() and text[start:end].endswith((":", "：")):
                continue  # "password hint: …", "password manager: …": a label of its own, not a value
            if _PLACEHOLDER_VALUE.match(text[start:end]):
                continue
            if _looks_stated(text, match, start, end, pin=pin):
                yield start, end
    eu = _PASSWORD_EU_HINT.search(lowered) is not None
    for eu_label in _PASSWORD_EU_LABEL.finditer(lowered) if eu else ():
        eu_match = _PASSWORD_EU.match(text, eu_label.end())
        if eu_match is None:
            continue
        if eu_match["words"] and eu_label.group(0) == "password":
            continue  # "password manager is 1Password": English phrasings are _PASSWORD_EN's
        if ABOUT_PASSWORDS.search(text, eu_label.end(), eu_match.start("lead")):
            continue  # "password hint: …", "Passwort-Richtlinie: …": about passwords, not one
        if eu_match["quoted"] is not None:
            yield eu_match.span("quoted")
            continue
        start, end = _trim_secret(text, *eu_match.span("secret"))
        secret = text[start:end]
        stated = ":" in eu_match["lead"] or "=" in eu_match["lead"] or "：" in eu_match["lead"]
        if _PLACEHOLDER_VALUE.match(secret) or _UNIT_AFTER.match(text, end):
            continue
        if secret.isalpha() and secret.islower() and _WORDS_FOLLOW.match(text, end):
            continue
        wordy = (
            secret.lower() in _NOT_A_SECRET
            or secret.lower() in _NOT_A_SECRET_EU
            or _WORDY_SUFFIX.fullmatch(secret) is not None
        )
        bare = eu_match["lead"].strip().lower() in ("", "auf", "in", "a", "en", "para", "naar", "na", "thành")
        if bare:  # "contraseña Perro2024", "Kennwort auf Tiger!88 geändert": the value must look made
            if re.search(r"\d", secret) and re.search(r"[^\d]", secret) and len(secret) >= 4:
                yield start, end
        elif not wordy and (
            re.search(r"[^A-Za-z\-']", secret) or stated or _owned_word(text, eu_label.start(), eu_match, end)
        ):
            yield start, end
    for match in (
        _PIN_ZH_NUMERALS.finditer(text) if ("密" in text or "口令" in text or "pin" in lowered) else ()
    ):
        yield match.span("secret")
    for match in _PASSWORD_ZH_WORDS.finditer(text):  # 密码：我爱北京2024
        if not _PLACEHOLDER_VALUE.match(match["secret"]):
            yield _trim_secret(text, *match.span("secret"))


# ---------------------------------------------------------------- other secrets

_URL_CREDENTIALS = lazy_compile(r"(?i:[a-z][a-z0-9+.\-]*)://[^\s:/@]*:(?P<secret>[^\s@/]+)@[A-Za-z0-9\[]")
_BEARER = lazy_compile(
    r"(?i:bearer|token|basic)[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])"
)
_CLI_SECRET = lazy_compile(
    r"(?:(?<![A-Za-z])(?:mysql|mysqldump|mysqladmin|mariadb|mongo|mongosh)(?![A-Za-z])[^\n]*?[ \t]-p(?P<short>[^\s\-][^\s]*)"
    r"|(?<![A-Za-z])sshpass[ \t]+-p[ \t]*(?P<sshpass>\S+)"
    r"|(?<![A-Za-z])redis-cli[^\n]*?[ \t]-a[ \t]+(?P<redis>\S+)"
    r"|--(?:password|passwd|pass|token|secret|api-key)(?:=|[ \t]+)(?P<long>[^\s\-]\S*))"
)
_LABELLED_SECRET = lazy_compile(
    r"(?:(?<![A-Za-z])(?i:api[ \t]?key|access[ \t]?key|secret(?:[ \t]?key)?|client[ \t]?secret|"
    r"(?:access|refresh|auth|session|bot|personal[ \t]access)[ \t]?token|token|private[ \t]?key|otp|"
    r"recovery[ \t]?codes?|backup[ \t]?codes?|seed[ \t]?phrase|mnemonic)(?![A-Za-z])|密钥|秘钥|私钥|令牌|助记词|恢复码|"
    r"(?i:token))"
    r"(?:[ \t]+(?i:is|was)[ \t]+|[ \t]*(?:[:=：]|是|为)[ \t]*)[\"'“]?(?P<secret>[A-Za-z0-9_\-./+=]{8,})"
)


# A TOTP/2FA seed: base32 (A-Z, 2-7), compact or in groups of four, after "secret"/"seed"/"2FA".
_TOTP_SEED = lazy_compile(
    r"(?<![A-Za-z])(?i:(?:totp|2fa|mfa|otp|authenticator)(?:[ \t-]*(?:secret|seed|key|setup[ \t]+key))?|"
    r"secret(?:[ \t]*key)?|seed|setup[ \t]+key)(?![A-Za-z])"
    r"(?:[ \t]+(?i:is|was)[ \t]+|[ \t]*[:=：][ \t]*|[ \t]+)[\"'“]?"
    r"(?P<secret>[A-Z2-7]{16,64}=*|[A-Z2-7]{10,64}={1,6}|(?:[A-Z2-7]{4}[ \t]){3,15}[A-Z2-7]{4}|(?:[a-z2-7]{4}[ \t]){3,15}[a-z2-7]{4})"
    r"(?![A-Za-z0-9])"
)


def _base32_seed(value: str) -> bool:
    """A base32 seed holds a digit 2-7 and a letter."""
    return bool(re.search(r"[2-7]", value)) and bool(re.search(r"[A-Za-z]", value))


def _made_up(value: str) -> bool:
    """A token holds digits and letters (or symbols), not a plain word."""
    return (bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value))) or bool(
        re.search(r"[^A-Za-z0-9]", value) and len(value) >= 12
    )


def _inside_a_word(match: re.Match[str]) -> bool:
    """Whether the config name's keyword is only part of an ordinary word (``Passport``,
    ``bypass``, ``author``) rather than a name part (``DB_PASS``, ``dbPassword``, ``apiKey``)."""
    key, rest = match["key"], match["rest"]
    before = match.string[match.start("key") - 1] if match.start("key") > match.start("name") else ""
    glued_before = before.isalpha() and before.islower() and key[0].islower()
    glued_after = (
        bool(rest) and rest[0].isalpha() and (rest[0].islower() or (rest.isupper() and key.isupper()))
    )
    return glued_before or glued_after


def find_secret(text: str) -> Iterator[Span]:
    """Other secrets: the value of a config/env assignment whose name says secret
    (``DB_PASS=…``, ``API_KEY=…``, ``export AWS_SECRET_ACCESS_KEY=…``, ``"password": "…"``) unless
    it is a placeholder or a variable (``$DB_PASS``, ``<token>``, ``xxx``); the password in a URL
    (``https://user:pass@host``); ``Bearer``/``token`` values; command-line passwords
    (``mysql -uroot -pS3cret``, ``--password=…``, ``sshpass -p``, ``redis-cli -a``); and a labelled
    key or token (``api key is …``, ``密钥：…``) that looks made up (letters and digits); a TOTP/2FA
    seed in base32 after ``secret``/``seed``/``2FA``/``TOTP`` (``JBSWY3DPEHPK3PXP``, or in groups of
    four). Lists of backup codes: :func:`.codes.find_named_secret`."""
    if _SECRET_HINT.search(text) is None:
        return
    for match in _CONFIG_SECRET.finditer(text):
        value = match["value"]
        if _inside_a_word(match):  # passport:, bypass=, author:
            continue
        if _EXAMPLE_KEY in value or _PLACEHOLDER_VALUE.match(value) or _WORKING_DIRECTORY.match(value):
            continue
        if value.isalpha() and value.islower() and _WORDS_FOLLOW.match(text, match.end("value")):
            continue  # "wifi password: ask the front desk"
        if value:
            yield _trim_secret(text, *match.span("value"))
    for match in _URL_CREDENTIALS.finditer(text):
        yield match.span("secret")
    for match in _BEARER.finditer(text):
        if _made_up(match["secret"]):
            yield match.span("secret")
    for match in _CLI_SECRET.finditer(text):
        group = next(g for g in ("short", "sshpass", "redis", "long") if match[g] is not None)
        yield match.span(group)
    for match in _LABELLED_SECRET.finditer(text):
        if _made_up(match["secret"]):
            yield _trim_secret(text, *match.span("secret"))
    for match in _TOTP_SEED.finditer(text):
        if _base32_seed(match["secret"]):
            yield match.span("secret")
