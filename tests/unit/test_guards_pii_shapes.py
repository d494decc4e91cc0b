"""PII classes that got through a held-out corpus, part 2: encoded PII, unlabelled national IDs
that validate, obfuscated e-mails and licence plates of other countries, with look-alikes that
must be kept (and everyday text that must pass untouched)."""

from __future__ import annotations

import base64

import pytest

from agentmem.domain.guards import redact
from support.pii import assert_gone, assert_kept


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def b64url_unpadded(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def dni(number: str) -> str:
    """A Spanish DNI: eight digits and the letter of their remainder mod 23."""
    return number + "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23]


def cn_ric(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return first17 + "10X98765432"[sum(int(d) * w for d, w in zip(first17, weights, strict=True)) % 11]


def nir(first13: str) -> str:
    """A French NIR: 13 digits and the key 97 - (number mod 97)."""
    return first13 + f"{97 - int(first13) % 97:02d}"


def cpf(first9: str) -> str:
    """A Brazilian CPF printed ``123.456.789-09``: two mod-11 check digits."""
    digits = [int(d) for d in first9]
    for length in (9, 10):
        total = sum(d * w for d, w in zip(digits, range(length + 1, 1, -1), strict=True))
        digits.append((total * 10) % 11 % 10)
    s = "".join(map(str, digits))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


# ---------------------------------------------------------------- 3. encoded PII

ENCODED = [
    "call me: " + b64("+86 138 0013 8000"),
    "here " + b64("+1 (415) 555-0132"),
    "decode this: " + b64("+44 7911 123456"),
    "my contact " + b64("tel: 138-0013-8000"),
    "mail " + b64("alice@example.com"),
    "encoded " + b64("bob.smith@gmail.com").rstrip("="),
    "my email in base64 " + b64url_unpadded("zhang.wei@163.com"),
    "id " + b64("11010519491231002X"),
    "身份证的base64：" + b64("身份证 110105194912310021"),
    "b64url " + b64url_unpadded("电话 13800138000"),
    "card b64 " + b64("4111 1111 1111 1111"),
    "hex " + b"+86 138 0013 8000".hex(),
    "hex " + b"alice@example.com".hex().upper(),
    "hex: " + b"jane.doe@proton.me".hex(),
    "0x" + b"13800138000".hex(),
    "bytes " + " ".join(f"{c:02x}" for c in b"+1 415 555 0132"),
]

SPLIT_B64 = b64("+1 (415) 555-0132")


@pytest.mark.parametrize(
    "text",
    [
        "split: " + " ".join(SPLIT_B64[i : i + 4] for i in range(0, len(SPLIT_B64), 4)),
        "lines:\n"
        + b64("my email is alice@example.com ok")[:16]
        + "\n"
        + b64("my email is alice@example.com ok")[16:],
        "url %2B86%20138%200013%208000 done",
        "mail alice%40example.com",
    ],
)
def test_split_base64_and_url_encoding_are_decoded(text: str) -> None:
    result = redact(text)
    assert result.findings and result.text.count("[") == 1, result.text


@pytest.mark.parametrize("text", ENCODED)
def test_encoded_pii_is_replaced_as_a_whole(text: str) -> None:
    run = text.split()[-1].removeprefix("0x") if "bytes" not in text else text.split(" ", 1)[1]
    result = redact(text)
    assert run not in result.text and result.findings, result.text
    assert result.text.count("[") == 1  # one placeholder for the whole run


@pytest.mark.parametrize(
    "text",
    [
        "base64 of hello world is aGVsbG8gd29ybGQ=",
        "base64: SGVsbG8sIFdvcmxkIQ==",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "hex value 0x7fffffff",
        "MAC 00:1A:2B:3C:4D:5E",
        "internationalization and localization",
        "hex " + b"the weather is nice".hex(),  # decodes, but to no PII
        "this text with some many word list here okay",  # groups of four letters, no payload
        "search?q=hello%20world%21 ok",
        "discount 50%25 off",
    ],
)
def test_encoded_runs_without_pii_are_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------- 4. unlabelled national IDs

VALID_RIC = cn_ric("11010519491231002")
IDS = [
    VALID_RIC,
    f"其实就是 {VALID_RIC} 这个",
    f"please note {VALID_RIC} for the booking",
    f"the number {VALID_RIC[:6]} {VALID_RIC[6:10]} {VALID_RIC[10:14]} {VALID_RIC[14:]}",
    f"号码 {VALID_RIC[:14]} {VALID_RIC[14:]}",
    f"写成 {VALID_RIC[:4]}-{VALID_RIC[4:8]}-{VALID_RIC[8:12]}-{VALID_RIC[12:16]}-{VALID_RIC[16:]}",
    f"{dni('12345678')} on the form",
    f"Mi número {dni('87654321')}",
    "my number X1234567L",
    "RSSMRA85T10A562S is what they asked",
    f"{nir('1850578006084')} was on the letter",
    "1 85 05 78 006 084 91 was on the letter",
    "131052-308T from Helsinki",
    f"it is {cpf('111444777')}",
    "o meu é 123.456.789-09",
    "RUT 12.345.678-5".replace("RUT ", "el mío: "),
    "756.9217.0769.85 steht auf der Karte",
    "mine: 1800101221144",
    "15108695088 is mine",
    "85.07.30-033.28",
    "19811218-9876",
]


@pytest.mark.parametrize("text", IDS)
def test_national_ids_that_validate_are_redacted_without_a_label(text: str) -> None:
    result = redact(text)
    assert "id_number" in result.kinds, result.text


NOT_IDS = [
    f"SKU {dni('12345678')}",
    f"model number {dni('87654321')}",
    f"order {nir('1850578006084')}",
    cn_ric("11010519491231002")[:17] + ("1" if cn_ric("11010519491231002")[-1] != "1" else "2"),  # bad check
    cn_ric("11010519490230002")[:-1] + "0",  # 30 February
    "12345678A was the ticket",  # a DNI letter that does not match
    "123.456.789-00",  # a CPF shape with wrong check digits
    "order 4111111111111111 shipped",  # passes Luhn, labelled an order
    "ISBN 978-3-16-148410-0",
    "tracking 9400111899223197428490",
    "ticket 11010519491231002 opened",
    "order 15108695088",
    "call 13012345678",
]


@pytest.mark.parametrize("text", NOT_IDS)
def test_id_shapes_that_fail_their_checksum_or_are_labelled_impersonal_are_kept(text: str) -> None:
    assert "id_number" not in redact(text).kinds


# ---------------------------------------------------------------- 5. obfuscated e-mails

EMAILS = [
    ("john.smith (at) gmail (dot) com", "john.smith (at) gmail (dot) com"),
    ("john dot smith at gmail dot com", "john dot smith at gmail dot com"),
    ("j.smith AT company DOT co DOT uk", "j.smith AT company DOT co DOT uk"),
    ("alice [at] example [.] org", "alice [at] example [.] org"),
    ("alice @ example . com", "alice @ example . com"),
    ("alice at example.com", "alice at example.com"),
    ("write to bob{at}corp{dot}io", "bob{at}corp{dot}io"),
    ("alice <at> example <dot> com", "alice <at> example <dot> com"),
    ("bob -at- example -dot- org", "bob -at- example -dot- org"),
    ("email me at john_doe [at] yahoo [dot] co [dot] uk", "john_doe [at] yahoo [dot] co [dot] uk"),
    ("my mail is wang AT 126 DOT com", "wang AT 126 DOT com"),
    ("xiaoming 艾特 qq 点 com", "xiaoming 艾特 qq 点 com"),
    ("邮箱是 zhangwei 艾特 gmail 点 com", "zhangwei 艾特 gmail 点 com"),
    ("lilei【at】qq【dot】com", "lilei【at】qq【dot】com"),
    ("邮箱 zhangwei（at）foxmail（dot）com", "zhangwei（at）foxmail（dot）com"),
    ("xiaoming#163.com（#换成@）", "xiaoming#163.com"),
    ("lilei＠qq．com", "lilei@qq.com"),
    ("メールは yamada＠docomo．ne．jp", "yamada@docomo.ne.jp"),
    ("ana arroba gmail punto com", "ana arroba gmail punto com"),
    ("contact: maria.lopez arroba hotmail punto es", "maria.lopez arroba hotmail punto es"),
    ("pierre arobase orange point fr", "pierre arobase orange point fr"),
    ("jean.dupont (arobase) free (point) fr", "jean.dupont (arobase) free (point) fr"),
    ("mario chiocciola libero punto it", "mario chiocciola libero punto it"),
    ("hans at gmx punkt de", "hans at gmx punkt de"),
    ("tanaka アットマーク gmail ドット com", "tanaka アットマーク gmail ドット com"),
    ("kim 골뱅이 naver 닷 com", "kim 골뱅이 naver 닷 com"),
]


@pytest.mark.parametrize(("text", "address"), EMAILS)
def test_obfuscated_emails_are_redacted_whole(text: str, address: str) -> None:
    result = redact(text)
    assert "email" in result.kinds, result.text
    (finding,) = [f for f in result.findings if f.kind == "email"]
    assert result.source_text[finding.start : finding.end] == address


@pytest.mark.parametrize(
    "text",
    [
        "I work at acme dot com",
        "look at google dot com",
        "look at this point com",
        "at home, point taken",
        "send it to the team at work",
        "meet me at starbucks dot",
        "我在北京点了一份外卖",
        "他在公司点名",
        "use #hashtag.com style tags",
    ],
)
def test_prepositions_and_words_are_no_email(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------- 6. licence plates

PLATES = [
    ("my reg is LK19 ABX", "LK19 ABX"),
    ("reg LK19 ABX", "LK19 ABX"),
    ("registration LK19ABX", "LK19ABX"),
    ("UK reg: AB51 ABC", "AB51 ABC"),
    ("my car's registration is YX68 KLM", "YX68 KLM"),
    ("number plate LK19 ABX, silver Corsa", "LK19 ABX"),
    ("licence plate is lk19 abx", "lk19 abx"),
    ("Kennzeichen M-AB 1234", "M-AB 1234"),
    ("mein Kennzeichen ist M-AB 1234", "M-AB 1234"),
    ("Kennzeichen: B-MW 2024", "B-MW 2024"),
    ("Nummernschild HH-AB 123", "HH-AB 123"),
    ("plaque AB-123-CD", "AB-123-CD"),
    ("immatriculation : AB-123-CD", "AB-123-CD"),
    ("la plaque d'immatriculation est GH-456-JK", "GH-456-JK"),
    ("matrícula 1234 BCD", "1234 BCD"),
    ("la matrícula de mi coche es 1234-BCD", "1234-BCD"),
    ("targa AB 123 CD", "AB 123 CD"),
    ("targa della mia auto: FG 234 HJ", "FG 234 HJ"),
    ("placa ABC1D23", "ABC1D23"),
    ("kenteken 12-ABC-3", "12-ABC-3"),
    ("California plate 7ABC123", "7ABC123"),
    ("license plate 8XYZ321 (California)", "8XYZ321"),
    ("Texas plate: ABC-1234", "ABC-1234"),
    ("NY plates KDT 4721", "KDT 4721"),
    ("my tag is ABC 1234", "ABC 1234"),
    ("my Texas tag ABC-1234", "ABC-1234"),
    ("Florida tag number QWE R12", "QWE R12"),
    ("my car, a blue Golf, plate M-AB 1234", "M-AB 1234"),
    ("我的车牌是沪A·12345", "沪A·12345"),
    ("차 번호판 12가 3456", "12가 3456"),
    ("우리 차 번호판은 123가 4567", "123가 4567"),
    ("ナンバーは 品川 330 さ 12-34", "品川 330 さ 12-34"),
    ("車のナンバーは 練馬 500 あ 12-34", "練馬 500 あ 12-34"),
]


@pytest.mark.parametrize(("text", "plate"), PLATES)
def test_plates_of_many_countries_are_redacted(text: str, plate: str) -> None:
    assert_gone(text, [plate])


@pytest.mark.parametrize(
    "text",
    [
        "plate number 3 on the menu",
        "registration opens on March 3",
        "registration opens 2025",
        "reg exp tutorial",
        "plate of pasta",
        "plates are in the cupboard",
        "my car is a Honda Civic",
        "my Tesla Model 3",
        "tag v2.3.1 is released",
        "git tag V12 pushed",
        "my git tag V12 pushed",
        "my luggage tag AB12 34",
        "Kennzeichen fehlt noch",
        "reg: closed",
        "room 1234 BCD wing",
        "table AB 123 CD",
    ],
)
def test_plate_words_without_a_plate_are_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------- everyday look-alikes

LOOK_ALIKES = [
    "固件版本 2.4.10.1 已经是最新",
    "firmware 3.10.2.7 fixed the bug",
    "version 4.2.0.1 of the app",
    "升级到 v5.1.3.2 之后好多了",
    "这个耳机 1380 元",
    "it cost $13,800",
    "花了 ¥2999",
    "总价 138000",
    "product code ABC-12345-XY",
    "产品型号 XR-7788-2024",
    "订单号 6222021234567890123",
    "order #2024052312345678",
    "my order 4111111111111111 arrived",
    "快递单号 SF1234567890123",
    "the password must be 8 characters",
    "the password must be at least 8 characters long",
    "密码必须是8位以上",
    "the password is case-sensitive",
    "pwd: /home/alice/projects",
    "pwd is /var/www",
    "ISBN 978-7-111-54742-6",
    "ISBN: 9780306406157",
    "我生日是 1990-05-12",
    "the meeting is on 2024/06/01 at 14:30",
    "会议在 15:45 开始",
    "we won 3-1",
    "比分 2:0",
    "score 21-19",
    "error 1234 appeared",
    "code 1234 in the docs",
    "HTTP 404",
    "port 8080",
    "room 3201",
    "my password manager is 1Password",
    "I use Bitwarden as password manager",
    "password123 is a terrible password example",
    "Passwort-Manager ist KeePass",
    "mi gestor de contraseñas es Bitwarden",
    "le gestionnaire de mots de passe est 1Password",
    "the PIN was reset yesterday",
    "PIN 码是在柜台设置的",
    "我的支付密码是生日",
    "验证码发到我手机上了",
    "two-factor code came by SMS",
    "backup codes are printed",
    "I printed the recovery codes last year",
    "the seed is forty-two in the config",
    "random seed 42",
    "set seed=42 for reproducibility",
    "API key is in the .env file",
    "token count 4096",
    "max tokens 8192",
    "the secret is to add salt",
    "key 1 and key 2",
    "Key Stage 2 results",
    "F1 key opens help",
    "press key 5",
    "at 5 pm",
    "meet at the station dot",
    "he is at home point blank",
    "Tesla Model Y 2023",
    "BMW X5 M50i",
    "my car is a 2019 Golf",
    "plate 3",
    "license plate lights broken",
    "my reg form is done",
    "registration number will be sent later",
    "Kennzeichen beantragt",
    "la matrícula del curso cuesta 300 euros",
    "immatriculation en cours",
    "targa commemorativa",
    "placa de vídeo RTX 4090",
    "car registration fee 120 dollars",
    "车牌还没上",
    "번호판 교체 예정",
    "ナンバー取得済み",
    "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "md5 d41d8cd98f00b204e9800998ecf8427e",
    "hex color #a1b2c3",
    "0xdeadbeef",
    "base64 dGhpcyBpcyBhIHRlc3Q=",
    "the file hash is 3f786850e387550fdab836ed7e6dc881de23001b",
    "UUID 550e8400-e29b-41d4-a716-446655440000",
    "docker image sha256:e3b0c44298fc1c149afbf4c8996fb924",
    "batch 20240523 lot 7",
    "SKU X1234567L",
    "model Y1234567X",
    "serial RSSMRA85T10A562S",
    "part number 12345678Z",
    "I have 12345678 steps",
    "population 87654321",
    "ticket 131052-308T",
    "CPU i7-12700K",
    "GPU RTX4090",
    "iPhone 15 Pro Max 256GB",
    "Windows 11 23H2",
    "Ubuntu 22.04.3 LTS",
    "it takes 5 minutes",
    "call back in 10 mins",
    "I ran 5 km",
    "3 cups of coffee",
    "8 hours of sleep",
    "my PIN is the same as my birthday",
    "我的密码是我家狗的名字",
    "my password is my dog's name",
    "mein Passwort ist mein Geburtstag",
    "the code for the front door changed",
    "door code: ask the concierge",
    "wifi password: ask the front desk",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_everyday_look_alikes_are_kept(text: str) -> None:
    assert_kept(text)
