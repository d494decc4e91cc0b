"""PII classes that got through a held-out corpus, part 1: credentials named in other
languages, PINs and one-time codes a few words after their name, recovery material (backup codes,
TOTP seeds) and keys in any phrasing. Each class in many phrasings and languages, with look-alikes
that must be kept."""

from __future__ import annotations

import pytest

from agentmem.domain.guards import redact


def assert_gone(text: str, secrets: list[str]) -> None:
    result = redact(text)
    for secret in secrets:
        assert secret not in result.text, result.text
    assert result.findings, result.text


def assert_kept(text: str) -> None:
    result = redact(text)
    assert result.findings == (), result.text


# ---------------------------------------------------------------- 1. credentials in other languages

CREDENTIALS = [
    ("Mein Passwort ist Sonnenblume!7", "Sonnenblume!7"),
    ("mein Passwort ist Sommerwind", "Sommerwind"),
    ("Kennwort: blau2024", "blau2024"),
    ("das Kennwort lautet Xy7kLm", "Xy7kLm"),
    ("Passwort Xy7!kLm für den Router", "Xy7!kLm"),
    ("Mein Passwort für Gmail ist Hund2024", "Hund2024"),
    ("Ich habe mein Kennwort auf Tiger!88 geändert", "Tiger!88"),
    ("Das WLAN-Passwort lautet: Haus2023Garten", "Haus2023Garten"),
    ("mi contraseña es perro123", "perro123"),
    ("La contraseña de mi correo es Gato2020", "Gato2020"),
    ("mi clave es 8812", "8812"),
    ("contraseña Perro2024", "Perro2024"),
    ("la clave del wifi: pato7788", "pato7788"),
    ("mon mot de passe est soleil2023", "soleil2023"),
    ("Mon mot de passe Netflix est Fromage75", "Fromage75"),
    ("le mot de passe c'est azerty123", "azerty123"),
    ("Le mot de passe du wifi est maison42", "maison42"),
    ("minha senha é banana77", "banana77"),
    ("a senha do banco é 4471", "4471"),
    ("A minha senha do email é Praia2024", "Praia2024"),
    ("mijn wachtwoord is Fiets123", "Fiets123"),
    ("Het wachtwoord van de router is Tulp8899", "Tulp8899"),
    ("moje hasło to Kot2024!", "Kot2024!"),
    ("Moje hasło do banku to Pies#2020", "Pies#2020"),
    ("mật khẩu của tôi là hoa2020", "hoa2020"),
    ("Mật khẩu wifi là nha12345", "nha12345"),
    ("私のパスワードはsakura1234です", "sakura1234"),
    ("ログインパスワードは hanako2020 です", "hanako2020"),
    ("暗証番号は1234です", "1234"),
    ("キャッシュカードの暗証番号は 5821", "5821"),
    ("제 비밀번호 hello789 이에요", "hello789"),
    ("카드 비밀번호 4자리는 7391", "7391"),
    ("Mon mdp est Soleil#12", "Soleil#12"),
    ("mdp : azerty99", "azerty99"),
    ("la contraseña es Primavera", "Primavera"),
    ("Passwort = hallo123", "hallo123"),
    ("パスワードは「sakura#2024」です", "sakura#2024"),
    ("비밀번호: 1q2w3e4r!", "1q2w3e4r!"),
    ("mật khẩu: Hanoi@123", "Hanoi@123"),
    ("мой пароль: Kotik2024", "Kotik2024"),
    ("şifrem: Ankara06!", "Ankara06!"),
    ("mitt lösenord är Sommar2024", "Sommar2024"),
    ("adgangskoden er Hygge123", "Hygge123"),
    ("heslo je Praha123", "Praha123"),
    ("kata sandi: Jakarta99", "Jakarta99"),
    # payment PINs and codes named as such, the value a few words on
    ("支付密码一般用 739104", "739104"),
    ("我的支付密码一般用739104", "739104"),
    ("取款密码通常是 660218", "660218"),
    ("银行卡取款密码 660218 别告诉别人", "660218"),
    ("银行卡密码我一般设 820416", "820416"),
    ("微信支付密码是我生日 900512", "900512"),
    ("银行卡密码六位：582913", "582913"),
    ("微信支付密码我设的是 246810", "246810"),
    ("交易密码就是我生日0512", "0512"),
    ("门禁密码 2580#", "2580"),
    ("开门密码一般是 0808", "0808"),
    ("我手机锁屏密码 147369", "147369"),
    ("我的 PIN 是 4821", "4821"),
    ("my payment PIN, usually 739104", "739104"),
    ("my bank PIN is usually 7391", "7391"),
    ("my ATM PIN — normally 4417", "4417"),
    ("the passcode I use is 908172", "908172"),
    ("iPhone passcode is 241709", "241709"),
    ("the code for the front door is 2580", "2580"),
    ("garage code 1379, don't share", "1379"),
    ("alarm code 4471 for the house", "4471"),
    ("Meine PIN ist 4821", "4821"),
    ("mi PIN es 4821", "4821"),
    ("mon code PIN est 4821", "4821"),
    ("我的六位数支付密码一般用739104", "739104"),
    ("my 6-digit code, usually 739104", "739104"),
    ("the six-digit passcode: usually 739104", "739104"),
    ("password for room 1204 is 5521", "5521"),
    ("验证码 482913，五分钟内有效", "482913"),
    ("短信验证码是 827364", "827364"),
    ("my one-time code is 552913", "552913"),
    ("OTP 662091 for the login", "662091"),
    ("認証コードは 482913 です", "482913"),
    ("인증번호는 482913 입니다", "482913"),
]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_credentials_named_in_any_language_are_redacted(text: str, secret: str) -> None:
    assert_gone(text, [secret])


ABOUT_CREDENTIALS = [
    "Das Passwort muss 8 Zeichen lang sein",
    "Passwort muss mindestens 12 Zeichen haben",
    "mein Passwort ist zu kurz",
    "das Passwort ist falsch",
    "Ich habe mein Passwort vergessen",
    "mi contraseña es muy débil",
    "mi contraseña es segura",
    "la contraseña debe tener 8 caracteres",
    "La contraseña es obligatoria",
    "mon mot de passe est trop court",
    "le mot de passe doit contenir 8 caractères",
    "minha senha está errada",
    "a senha deve ter 6 dígitos",
    "mijn wachtwoord is verlopen",
    "пароль не подходит",
    "lösenordet är fel",
    "Das Passwort ist Pflicht",
    "Das Passwort ist Privatsache",
    "la contraseña es la misma",
    "MDP is a Markov decision process",
    "mijn wachtwoord is vergeten",
    "moje hasło jest za krótkie",
    "hasło musi mieć 8 znaków",
    "パスワードを忘れました",
    "비밀번호를 잊어버렸어요",
    "密码至少8位",
    "密码错了3次",
    "密码有效期 90 天",
    "支付密码是6位数字",
    "支付密码输错3次会锁定",
    "交易密码在2023年改过",
    "I changed my password 3 times since 2019",
    "PIN must have 4 digits",
    "changed my PIN in 2021",
    "the passcode has 6 digits",
    "door code changes every 30 days",
    "verification code valid for 10 minutes",
    "验证码5分钟内有效",
    "price 4821 USD, PIN pad included",
    "the wifi password is on the card in room 1204",
    "wifi password: ask the front desk",
    "flight 1234, password reset needed",
    "我在上密码学 2023 课程",
    "买了个密码锁 5678 型号",
    "zip code 94107",
    "WiFi 密码贴在 1204 房间的门上",
]


@pytest.mark.parametrize("text", ABOUT_CREDENTIALS)
def test_sentences_about_credentials_are_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------- 2. recovery material, keys, seeds

RECOVERY = [
    ("backup codes: 8413-2291, 5530-7784", ["8413-2291", "5530-7784"]),
    ("my recovery codes are 8413-2291 5530-7784 1187-2290", ["8413-2291", "5530-7784", "1187-2290"]),
    (
        "Here are my Google backup codes:\n1. 8413 2291\n2. 5530 7784\n3. 1187 2290",
        ["8413 2291", "5530 7784", "1187 2290"],
    ),
    (
        "GitHub recovery codes:\n- a1b2c-d3e4f\n- g5h6i-j7k8l\n- m9n0o-p1q2r",
        ["a1b2c-d3e4f", "g5h6i-j7k8l", "m9n0o-p1q2r"],
    ),
    ("2FA backup codes (keep them safe): 84132291 55307784", ["84132291", "55307784"]),
    ("my backup codes are 1234 5678, 2345 6789 and 3456 7890", ["1234 5678", "2345 6789", "3456 7890"]),
    ("emergency codes: 918273; 564738; 102938", ["918273", "564738", "102938"]),
    ("Backup codes for Google: 1234-5678 2345-6789 3456-7890", ["1234-5678", "2345-6789", "3456-7890"]),
    ("2FA恢复码：ABCD-1234 EFGH-5678", ["ABCD-1234", "EFGH-5678"]),
    ("my 2FA codes if I lose my phone: 8413-2291 5530-7784", ["8413-2291", "5530-7784"]),
    ("备用码：84132291、55307784", ["84132291", "55307784"]),
    ("保存一下我的备用验证码：58213790 66120384", ["58213790", "66120384"]),
    ("恢复代码 8413-2291 5530-7784", ["8413-2291", "5530-7784"]),
    ("Wiederherstellungscodes: 8413-2291, 5530-7784", ["8413-2291", "5530-7784"]),
    ("códigos de respaldo: 8413-2291, 5530-7784", ["8413-2291", "5530-7784"]),
    ("codes de secours : 8413-2291, 5530-7784", ["8413-2291", "5530-7784"]),
    ("バックアップコード 8413-2291 5530-7784", ["8413-2291", "5530-7784"]),
    ("복구 코드: 8413-2291, 5530-7784", ["8413-2291", "5530-7784"]),
    ("Apple 恢复密钥 ABCD-EFGH-2345-JKLM-6789-NPQR-STUV", ["ABCD-EFGH-2345-JKLM-6789-NPQR-STUV"]),
    # TOTP / 2FA seeds
    ("2FA secret JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("authenticator key: jbsw y3dp ehpk 3pxp", ["jbsw y3dp ehpk 3pxp"]),
    ("TOTP 种子：JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("两步验证密钥 JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("谷歌身份验证器的种子 JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("GitHub 的恢复码：a1b2c-d3e4f, g5h6i-j7k8l", ["a1b2c-d3e4f", "g5h6i-j7k8l"]),
    ("阿里云 AccessKey Secret：abcdEFGH1234ijklMNOP5678qrst", ["abcdEFGH1234ijklMNOP5678qrst"]),
    ("身份验证器密钥：JBSW Y3DP EHPK 3PXP", ["JBSW Y3DP EHPK 3PXP"]),
    ("二段階認証のキー JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("otpauth://totp/Acme:bob?secret=JBSWY3DPEHPK3PXP&issuer=Acme", ["JBSWY3DPEHPK3PXP"]),
    ("the Google Authenticator setup key is JBSW Y3DP EHPK 3PXP", ["JBSW Y3DP EHPK 3PXP"]),
    ("my 2FA seed, in case I lose my phone: JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
    ("the seed for my authenticator app is KRSXG5CTMVRXEZLU", ["KRSXG5CTMVRXEZLU"]),
    # keys and tokens in any phrasing
    (
        "my API key for the weather service is 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        ["3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"],
    ),
    ("the key is 9f86d081884c7d659a2feaa0c55ad015", ["9f86d081884c7d659a2feaa0c55ad015"]),
    ("here's my token: a8F3kL9qPz2Xv7Bn", ["a8F3kL9qPz2Xv7Bn"]),
    ("my OpenWeather key = 4b8f2c9d1e7a3b5c6d0e9f8a7b6c5d4e", ["4b8f2c9d1e7a3b5c6d0e9f8a7b6c5d4e"]),
    ("the secret for the webhook: Zx9Lm2Qp8Rt4Vw6Y", ["Zx9Lm2Qp8Rt4Vw6Y"]),
    ("the access token I use is Qm9ic2VjcmV0MTIz", ["Qm9ic2VjcmV0MTIz"]),
    ("API密钥：a8F3kL9qPz2Xv7Bn", ["a8F3kL9qPz2Xv7Bn"]),
    ("我的 key 是 a8F3kL9qPz2Xv7Bn", ["a8F3kL9qPz2Xv7Bn"]),
    ("访问令牌 tok_8f7e6d5c4b3a2910", ["tok_8f7e6d5c4b3a2910"]),
    ("APIキーは a8F3kL9qPz2Xv7Bn です", ["a8F3kL9qPz2Xv7Bn"]),
    ("API 키: a8F3kL9qPz2Xv7Bn", ["a8F3kL9qPz2Xv7Bn"]),
    ("Schlüssel: a8F3kL9qPz2Xv7Bn", ["a8F3kL9qPz2Xv7Bn"]),
    ("激活码 7KQ2-M9XP-4RTZ-8WBN", ["7KQ2-M9XP-4RTZ-8WBN"]),
    ("百度网盘提取码 x7k2", ["x7k2"]),
    ("Windows product key: VK7JG-NPHTM-C97JM-9MPGT-3V66T", ["VK7JG-NPHTM-C97JM-9MPGT-3V66T"]),
    ("my recovery key: ABCD-EFGH-2345-JKLM", ["ABCD-EFGH-2345-JKLM"]),
    ("JBSWY3DPEHPK3PXP is my 2FA secret", ["JBSWY3DPEHPK3PXP"]),
    ("Google Authenticator: add JBSWY3DPEHPK3PXP manually", ["JBSWY3DPEHPK3PXP"]),
    (
        "my seed phrase is: witch collapse practice feed shame open despair creek road again ice least",
        ["witch collapse practice feed shame open despair creek road again ice least"],
    ),
    (
        "助记词是 witch collapse practice feed shame open despair creek road again ice least",
        ["witch collapse practice feed shame open despair creek road again ice least"],
    ),
]


@pytest.mark.parametrize(("text", "secrets"), RECOVERY)
def test_recovery_material_keys_and_seeds_are_redacted(text: str, secrets: list[str]) -> None:
    assert_gone(text, secrets)


ABOUT_KEYS = [
    "the key to success is practice",
    "the key is to stay calm",
    "key takeaways from the meeting",
    "key: value",
    "token ring network",
    "the token expired yesterday",
    "token expires in 3600 seconds",
    "API key rotation is every 90 days",
    "API key must be 32 characters",
    "the API key is stored in Vault",
    "secret santa this year",
    "my seed round closed",
    "2FA is enabled",
    "backup codes are in my drawer",
    "backup codes: none yet",
    "backup codes are useful: see docs 2024",
    "recovery codes: I saved them offline",
    "恢复码已经用完了",
    "验证码已发送",
    "commit a1b2c3d4e5f6a7b8c9d0",
    "the sha is 9f86d081884c7d659a2feaa0c55ad015",
    "the seed phrase has twelve words",
    "product code 7KQ2-M9XP is out of stock",
    "产品码 A1B2-C3D4 已下架",
    "invite code AB12CD for the beta",
    "my recovery phrase is written down on paper because losing access would hurt badly and cost money forever",
    "JBSWY3DPEHPK3PXP without any context",
]


@pytest.mark.parametrize("text", ABOUT_KEYS)
def test_words_about_keys_and_hashes_are_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------- sentences about credentials, in many languages

MULTILINGUAL_LOOK_ALIKES = [
    "Mein Passwort ist seit 2019 gleich",
    "Das Passwort wurde 2023 geändert",
    "Passwort zurücksetzen dauert 5 Minuten",
    "Mi contraseña tiene 12 caracteres",
    "Cambié la contraseña en 2022",
    "la clave del éxito es la constancia",
    "La clave está en el cajón",
    "mon mot de passe expire dans 30 jours",
    "le code postal est 75001",
    "code postal 75001",
    "o código postal é 01310-100",
    "CEP 01310-100",
    "Postleitzahl 10115",
    "mi código de cliente es el 12345",
    "número de pedido 12345678",
    "Bestellnummer 87654321",
    "numéro de commande 12345678A",
    "la referencia es ABC123 del pedido",
    "パスワードは8文字以上",
    "パスワードを2024年に変更した",
    "暗証番号は4桁です",
    "비밀번호는 8자리 이상이어야 합니다",
    "비밀번호를 2023년에 바꿨어요",
    "인증번호가 안 와요",
    "認証コードが届かない",
    "密码长度至少12位",
    "验证码是6位数字",
    "支付密码忘了怎么办",
    "密码错误次数超过5次",
    "我的密码和去年一样",
    "换了新密码",
    "密码是生日",
    "验证码发了三次都没收到",
    "the PIN is 4 digits long",
    "I typed the PIN 3 times",
    "PIN reset takes 24 hours",
    "my PIN expired in March 2024",
    "the door code is on the fridge",
    "alarm code reset at 9am",
    "gate code changes monthly",
    "the key was under the mat",
    "my keys are on the table",
    "key 2024 results",
    "token 1 of 3",
    "the secret ingredient is love",
    "2FA backup codes are stored in 1Password",
    "I lost my recovery codes",
    "OTP sent to +86 138****8000",
    "recovery email is set",
    "seed 12345 for the random generator",
    "Die Kennzeichenpflicht gilt ab 2025",
    "matrícula universitaria 2024",
    "la plaque de cuisson 4 feux",
    "plate 2 of the atlas",
    "registration fee is 50 USD",
    "my car has 4 doors and 5 seats",
    "tag #2024 trending",
    "UK reg changes in March and September",
    "Kennzeichen-Reservierung kostet 10 Euro",
    "placa madre ASUS B550",
    "placa de rede 1000Mbps",
    "base 64 encoding explained",
    "hex editor 2.0",
    "Mon code PIN ne marche pas",
    "mi PIN no funciona",
    "meine PIN ist gesperrt",
    "PIN vergessen",
    "le mot de passe est trop simple",
    "mot de passe oublié ? cliquez ici",
    "senha incorreta, tente novamente",
    "wachtwoord moet 8 tekens hebben",
    "hasło jest nieprawidłowe",
    "mật khẩu sai",
    "mật khẩu phải có 8 ký tự",
    "Passwort: siehe Zettel",
    "contraseña: la de siempre",
    "mot de passe : le même",
    "senha: a mesma de sempre",
    "password: same as before",
    "password: see the note",
    "密码：同上",
    "パスワード：前と同じ",
    "call me at 5 on 12/03",
    "tel. office hours 9-17",
    "I was born in 1990 and moved in 2001",
    "the rest is history",
    "my phone starts ringing at 7",
    "the first 3 digits are the area code",
]


@pytest.mark.parametrize("text", MULTILINGUAL_LOOK_ALIKES)
def test_multilingual_sentences_about_credentials_are_kept(text: str) -> None:
    assert_kept(text)
