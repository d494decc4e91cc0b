"""Normalisation and PII/secret redaction (agentmem.domain.guards)."""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentmem.domain.guards import PiiFinding, RedactionResult, normalize_for_scan, redact
from agentmem.domain.guards.normalize import (
    ScanView,
    fold_chinese_digits,
    fold_digit_separators,
    strip_keycaps,
)
from agentmem.domain.guards.pii import PII_RULES, PLACEHOLDERS, iter_base64_digit_payloads
from agentmem.domain.guards.pii.numbers import hkid_valid, twid_valid

# ---------------------------------------------------------------- independent helpers


def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` pass Luhn."""
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_ok(number: str) -> bool:
    return luhn_check_digit(number[:-1]) == number[-1]


def luhn_failing(payload: str) -> str:
    """``payload`` plus a check digit that is wrong."""
    good = int(luhn_check_digit(payload))
    return payload + str((good + 1) % 10)


def id_with_check(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(first17, weights, strict=True))
    return first17 + "10X98765432"[total % 11]


VALID_ID = "11010519491231002X"
VALID_ID_2 = id_with_check("44030620000229123")  # 2000-02-29 exists
BAD_CHECK_ID = VALID_ID[:17] + "5"
IMPOSSIBLE_DATE_ID = id_with_check("11010519490230002")  # 30 February
CARD_UNIONPAY = "622202123456789012" + luhn_check_digit("622202123456789012")
CARD_16 = "6225880" + "12345678" + luhn_check_digit("622588012345678")
ORDER_NO = luhn_failing("202401011234567")


def test_helpers_agree_with_the_examples() -> None:
    assert id_with_check(VALID_ID[:17]) == VALID_ID
    assert luhn_ok("4111111111111111")
    assert luhn_ok(CARD_UNIONPAY) and luhn_ok(CARD_16)
    assert not luhn_ok(ORDER_NO)
    assert BAD_CHECK_ID != VALID_ID


# ---------------------------------------------------------------- normalize_for_scan


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ｉｇｎｏｒｅ １３８", "ignore 138"),
        ("ign\u200bore\u200d pre\ufeffvious\u2060", "ignore previous"),
        ("ign\u043ere", "ignore"),  # Cyrillic о
        ("\u0455ystem \u0440rompt", "system prompt"),  # Cyrillic ѕ, р
        ("ο\u03bderride", "override"),  # Greek ο, ν
        ("a\x00b\x07c\td\ne", "abc\td\ne"),
        ("line1\r\nline2\rline3", "line1\nline2\nline3"),
        ("中文，标点：保留！（是的）", "中文，标点：保留！（是的）"),
        ("привет мир", "привет мир"),  # real Russian stays
    ],
)
def test_normalize_for_scan(raw: str, expected: str) -> None:
    assert normalize_for_scan(raw) == expected


def test_normalize_is_idempotent() -> None:
    raw = "ｐａｓｓｗｏｒｄ\u200b：ign\u043ere e\u200b\u0301 密码是 １２３"
    once = normalize_for_scan(raw)
    assert normalize_for_scan(once) == once


# ---------------------------------------------------------------- positive redaction

POSITIVE = [
    ("phone", "我的手机是13812345678，有事打给我", "我的手机是[PHONE]，有事打给我"),
    ("phone", "call me at +86-138-1234-5678 tomorrow", "call me at [PHONE] tomorrow"),
    ("phone", "电话 138 1234 5678", "电话 [PHONE]"),
    ("phone", "0086 13912345678", "[PHONE]"),
    ("phone", "手机号：１３８１２３４５６７８", "手机号：[PHONE]"),
    ("id_number", f"身份证号{VALID_ID}，请核对", "身份证号[ID_NUMBER]，请核对"),
    ("id_number", f"ID: {VALID_ID_2}", "ID: [ID_NUMBER]"),
    ("id_number", f"id {VALID_ID.lower()}", "id [ID_NUMBER]"),
    ("bank_card", "card 4111 1111 1111 1111 exp 12/28", "card [BANK_CARD] exp 12/28"),
    ("bank_card", "卡号4111-1111-1111-1111", "卡号[BANK_CARD]"),
    ("bank_card", f"工资卡{CARD_UNIONPAY}", "工资卡[BANK_CARD]"),
    (
        "bank_card",
        f"银行卡 {CARD_16[:4]} {CARD_16[4:8]} {CARD_16[8:12]} {CARD_16[12:]}",
        "银行卡 [BANK_CARD]",
    ),
    ("email", "邮箱zhang.san+work@example.com.cn，谢谢", "邮箱[EMAIL]，谢谢"),
    ("email", "Mail me: Jane_Doe@sub.example.org.", "Mail me: [EMAIL]."),
    ("ip", "服务器IP是192.168.1.10。", "服务器IP是[IP]。"),
    ("ip", "ssh root@10.0.0.255 now", "ssh root@[IP] now"),
    ("ip", "v6 address 2a02:8071:85a3::8a2e:370:7334 is up", "v6 address [IP] is up"),
    ("ip", "link-local fe80::1ff:fe23:4567:890a", "link-local [IP]"),
    ("aws_key", "AWS key AKIAZ3MSJV4WQ7ABCDEF", "AWS key [AWS_KEY]"),
    ("aws_key", "临时凭证ASIAY34FZKBOKMUTVV7A", "临时凭证[AWS_KEY]"),
    (
        "aws_key",
        "aws_secret_access_key = Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0MTIz",
        "aws_secret_access_key = [AWS_KEY]",
    ),
    (
        "jwt",
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        "token [JWT] ok",
    ),
    (
        "private_key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234567890abcdefABCDEF\n"
        "-----END RSA PRIVATE KEY-----\nthanks",
        "key:\n[PRIVATE_KEY]\nthanks",
    ),
    (
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n\n还没贴完",
        "[PRIVATE_KEY]\n\n还没贴完",
    ),
    ("api_key", "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "OPENAI_API_KEY=[API_KEY]"),
    ("api_key", "用这个key：sk-ant-api03-AAAAbbbbCCCCdddd1234_-xyz", "用这个key：[API_KEY]"),
    ("api_key", "gh token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh token [API_KEY]"),
    ("api_key", "slack xoxb-123456789012-abcdefABCDEF", "slack [API_KEY]"),
    ("password", "我的密码是 abc123", "我的密码是 [PASSWORD]"),
    ("password", "password: hunter2", "password: [PASSWORD]"),
    ("password", "该用户的密码是 123456。", "该用户的密码是 [PASSWORD]。"),
    ("password", "WiFi密码：Tp-Link@2024，别外传", "WiFi密码：[PASSWORD]，别外传"),
    ("password", "口令为Qwe!2024;下次改", "口令为[PASSWORD];下次改"),
    ("password", "My password is s3cr3t.", "My password is [PASSWORD]."),
    ("password", "db pwd=P@ssw0rd, user=admin", "db pwd=[PASSWORD], user=admin"),
    ("password", "passwd=letmein", "passwd=[PASSWORD]"),
    ("password", "the pass code is 8842", "the pass code is [PASSWORD]"),
    ("password", 'wifi password: "sunny day 42" ok', 'wifi password: "[PASSWORD]" ok'),
    ("password", "密码是“开门123”", "密码是“[PASSWORD]”"),
    # a labelled ID is redacted whatever its checksum or date (a user's typo is still their ID)
    ("id_number", f"证件号 {BAD_CHECK_ID}", "证件号 [ID_NUMBER]"),
    ("id_number", f"证件号 {IMPOSSIBLE_DATE_ID}", "证件号 [ID_NUMBER]"),
    ("id_number", "HKID A123456(3)", "HKID [ID_NUMBER]"),
    ("ssn", "SSN 536-90-4399 on file", "SSN [SSN] on file"),
    ("passport", "护照号E12345678", "护照号[PASSPORT]"),
    ("iban", "IBAN GB82 WEST 1234 5698 7654 32.", "IBAN [IBAN]."),
    ("cvv", "CVV 123", "CVV [CVV]"),
    ("account", "账号：6230580000123456", "账号：[ACCOUNT]"),
    ("handle", "微信号：zhangsan_88", "微信号：[HANDLE]"),
    ("plate", "车牌京A12345", "车牌[PLATE]"),
    ("address", "我家住北京市朝阳区建国路88号", "我家住[ADDRESS]"),
    ("secret", "mysql -uroot -pS3cret", "mysql -uroot -p[SECRET]"),
    ("phone", "+44 20 7946 0958", "[PHONE]"),
    ("email", "bob(at)example.com", "[EMAIL]"),
    ("password", "PIN 4321", "PIN [PASSWORD]"),
]


@pytest.mark.parametrize(("kind", "raw", "expected"), POSITIVE)
def test_redacts(kind: str, raw: str, expected: str) -> None:
    result = redact(raw)
    assert result.text == expected
    assert kind in result.kinds
    assert result.redacted


# ---------------------------------------------------------------- the rule table


def test_the_rule_table_is_consistent() -> None:
    kinds = [rule.kind for rule in PII_RULES]
    placeholders = [rule.placeholder for rule in PII_RULES]
    ranks = [rule.rank for rule in PII_RULES]
    assert len(set(kinds)) == len(kinds), "a kind appears twice in PII_RULES"
    assert len(set(ranks)) == len(ranks), "two rules share a rank, so their tie-break is undefined"
    assert len(set(placeholders)) == len(placeholders), "two kinds share a placeholder"
    for rule in PII_RULES:
        assert rule.placeholder == f"[{rule.kind.upper()}]", rule
        assert callable(rule.find), rule
    # PLACEHOLDERS (used by the write pipeline) is derived from the table, in table order.
    assert list(PLACEHOLDERS.items()) == list(zip(kinds, placeholders, strict=True))


def test_every_rule_has_a_smoke_example_that_redact_replaces() -> None:
    examples = {kind: raw for kind, raw, _ in reversed(POSITIVE)}  # the first example of each kind
    missing = {rule.kind for rule in PII_RULES} - set(examples)
    assert not missing, f"add a POSITIVE example for {sorted(missing)}"
    unknown = set(examples) - {rule.kind for rule in PII_RULES}
    assert not unknown, f"POSITIVE names kinds that have no rule: {sorted(unknown)}"
    for rule in PII_RULES:
        source = normalize_for_scan(examples[rule.kind])
        assert list(rule.find(source)), f"{rule.kind}: its finder finds nothing in its own example"
        result = redact(examples[rule.kind])
        assert rule.kind in result.kinds and rule.placeholder in result.text, rule.kind


# ---------------------------------------------------------------- negatives

NEGATIVE = [
    f"订单号 {ORDER_NO} 已发货",
    f"tracking {ORDER_NO}",
    "created at 2026-01-05T09:00:00Z",
    "批次 20260105093000 完成",
    "meeting at 12:30:45 today",
    f"批次 {BAD_CHECK_ID}",  # an unlabelled 18-digit run needs its checksum
    f"序号 {IMPOSSIBLE_DATE_ID}",
    "docs use AKIAIOSFODNN7EXAMPLE as the sample key",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "upgrade to v1.2.3 then 1.2.3",
    "version 10.0.19045 build",
    "bad ip 999.1.1.1",
    "release version 2.0.0.1 today",
    "总价 250 万，预算 1380 万",
    "2024 年 Q3 营收",
    "wait 20 minutes",
    "call 110 or 12345",
    "138123456789012 is a 15-digit serial",
    "the password is required",
    "忘记密码了怎么办？密码是什么格式",
    "密码是8位数字",
    "std::vector<int> and a::b",
    "这是一段普通的中文，没有任何敏感信息。",
]


@pytest.mark.parametrize("raw", NEGATIVE)
def test_leaves_non_pii(raw: str) -> None:
    result = redact(raw)
    assert result.findings == ()
    assert not result.redacted
    assert result.text == normalize_for_scan(raw)


# ---------------------------------------------------------------- result shape


def test_offsets_refer_to_normalised_source() -> None:
    raw = "手机\u200b１３８１２３４５６７８ 邮箱 a@b.co"
    result = redact(raw)
    assert isinstance(result, RedactionResult)
    assert result.source_text == normalize_for_scan(raw)
    assert [result.source_text[f.start : f.end] for f in result.findings] == ["13812345678", "a@b.co"]
    assert result.findings[0] == PiiFinding("phone", 2, 13)
    assert result.kinds == ("email", "phone")
    # the view is judged, the input kept: only the found spans leave it
    assert result.text == "手机\u200b[PHONE] 邮箱 [EMAIL]"


def test_findings_do_not_overlap_and_prefer_the_longer_match() -> None:
    result = redact("联系 13812345678@139.com 或 13912345678")
    assert result.text == "联系 [EMAIL] 或 [PHONE]"
    spans = sorted((f.start, f.end) for f in result.findings)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_id_number_wins_over_bank_card_of_same_length() -> None:
    # The ID's 18 digits may also pass Luhn; the more specific kind wins.
    assert redact(f"号码 {VALID_ID_2}").kinds == ("id_number",)


def test_stated_password_keeps_lead_in_english_and_chinese() -> None:
    result = redact("PASSWORD = 'hunter2' 以及 密码为：Abc#123")
    assert result.text == "PASSWORD = '[PASSWORD]' 以及 密码为：[PASSWORD]"


def test_base64_payload_with_pii_is_replaced_whole() -> None:
    encoded = base64.b64encode(b"my email is zhang.san@example.com").decode()
    result = redact(f"blob {encoded} end")
    assert result.text == "blob [EMAIL] end"
    assert result.kinds == ("email",)


def test_base64_payload_without_pii_is_kept() -> None:
    encoded = base64.b64encode("今天天气不错，适合散步".encode()).decode()
    assert redact(encoded).text == encoded


def test_empty_text() -> None:
    assert redact("") == RedactionResult(text="", findings=(), view=ScanView("", ""))


# ---------------------------------------------------------------- the corpus (tests/unit/data/pii_cases.jsonl)

CORPUS_PATH = Path(__file__).parent / "data" / "pii_cases.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
CORPUS_POSITIVE = [c for c in CORPUS if c["kinds"]]
CORPUS_NEGATIVE = [c for c in CORPUS if not c["kinds"]]


def test_the_corpus_is_broad() -> None:
    assert len(CORPUS_POSITIVE) >= 150 and len(CORPUS_NEGATIVE) >= 60
    assert {kind for c in CORPUS_POSITIVE for kind in c["kinds"]} >= {rule.kind for rule in PII_RULES}
    assert all(c["must_not_contain"] for c in CORPUS_POSITIVE)
    assert all(m in normalize_for_scan(c["text"]) for c in CORPUS_POSITIVE for m in c["must_not_contain"])


@pytest.mark.parametrize("case", CORPUS_POSITIVE, ids=lambda c: c["text"][:40])
def test_corpus_positive_is_redacted(case: dict[str, Any]) -> None:
    result = redact(case["text"])
    for secret in case["must_not_contain"]:
        assert secret not in result.text, result.text
    assert set(case["kinds"]) <= set(result.kinds), (result.kinds, result.text)


@pytest.mark.parametrize("case", CORPUS_NEGATIVE, ids=lambda c: c["text"][:40])
def test_corpus_negative_is_kept(case: dict[str, Any]) -> None:
    result = redact(case["text"])
    assert result.findings == (), result.text


# ---------------------------------------------------------------- focused rules, per kind


def test_hkid_and_twid_checksums() -> None:
    assert hkid_valid("A123456(3)") and not hkid_valid("A123456(4)")
    assert twid_valid("A123456789") and not twid_valid("A123456788")
    assert redact("ref A1234563 ok").kinds == ("id_number",)  # valid HKID without brackets
    assert redact("ref A1234564 ok").findings == ()  # neither a valid HKID nor labelled


def test_phone_needs_validity_unless_labelled() -> None:
    assert redact("batch 0912-345-678").findings == ()  # not valid in CN/US/GB, no label
    assert redact("Tel: 0912-345-678").kinds == ("phone",)  # labelled: any grouping of 7-15 digits
    assert redact("+886 912 345 678").kinds == ("phone",)  # international: any region


def test_chinese_numerals_fold_without_moving_offsets() -> None:
    assert fold_chinese_digits("电话一三八一二三四五六七八") == "电话13812345678"
    assert fold_chinese_digits("三五个人一起") == "三五个人一起"  # too short to be dictated digits
    result = redact("电话幺三八一二三四五六七八")
    assert result.text == "电话[PHONE]"
    assert result.source_text[result.findings[0].start :] == "幺三八一二三四五六七八"


def test_order_numbers_that_pass_luhn_are_cards_only_when_labelled_so() -> None:
    assert luhn_ok(CARD_UNIONPAY)
    assert redact(f"订单号 {CARD_UNIONPAY}").findings == ()
    assert redact(f"tracking #{CARD_UNIONPAY}").findings == ()
    assert redact(f"卡号 {CARD_UNIONPAY}").kinds == ("bank_card",)
    assert redact(f"订单号 123，卡号 {CARD_UNIONPAY}").kinds == ("bank_card",)  # the nearest label decides


def test_labelled_card_with_a_failing_checksum_is_still_redacted() -> None:
    assert redact(f"银行卡号 {ORDER_NO}").text == "银行卡号 [BANK_CARD]"
    assert redact(ORDER_NO).findings == ()


def test_cvv_after_a_card_and_its_expiry() -> None:
    assert redact("4111 1111 1111 1111 12/28 737").text == "[BANK_CARD] 12/28 [CVV]"
    assert redact("4111111111111111, 123").text == "[BANK_CARD], [CVV]"


def test_version_strings_are_not_ips_but_addresses_are() -> None:
    assert redact("固件 2.4.10.1").findings == ()
    assert redact("openssl 1.1.1.1").findings == ()
    assert redact("upgrade nginx to 1.25.3.1").findings == ()
    assert redact("ping 1.1.1.1").kinds == ("ip",)
    assert redact("connect to 10.0.0.1 now").kinds == ("ip",)


def test_sentences_about_passwords_keep_their_words() -> None:
    for text in (
        "the password is 8 characters minimum",
        "密码是区分大小写的",
        "password must contain a digit",
        "pwd: /home/bob",
        "I forgot my password",
        "change the password tomorrow",
    ):
        assert redact(text).findings == (), text
    assert redact("pw is hunter2").text == "pw is [PASSWORD]"
    assert redact("密码 abc123").text == "密码 [PASSWORD]"
    assert redact("password was changed to Winter#2025").text == "password was changed to [PASSWORD]"


def test_config_and_command_line_secrets() -> None:
    assert redact("DB_PASS=hunter22").text == "DB_PASS=[PASSWORD]"
    assert redact("API_KEY=9f8e7d6c5b4a").text == "API_KEY=[SECRET]"
    assert redact("API_KEY=$API_KEY").findings == ()  # a variable, not a value
    assert redact("mysql -uroot -pS3cret db").text == "mysql -uroot -p[SECRET] db"
    assert redact("https://bob:pa55@host.example/x").text == "https://bob:[SECRET]@host.example/x"
    assert redact("Passport: K1234567").kinds == ("passport",)  # not a config key holding "pass"


def test_obfuscated_emails_need_a_known_tld_and_not_a_preposition() -> None:
    assert redact("jane dot doe at gmail dot com").text == "[EMAIL]"
    assert redact("zhangsan艾特qq点com").text == "[EMAIL]"
    assert redact("I work at acme dot com").findings == ()
    assert redact("meet at noon. Then lunch").findings == ()


def test_addresses_need_an_address_shape() -> None:
    assert redact("地址：上海市浦东新区世纪大道100号").text == "地址：[ADDRESS]"
    assert redact("I live at 123 Main St, Springfield").text == "I live at [ADDRESS]"
    assert redact("IP地址是什么").findings == ()
    assert redact("please address the issue").findings == ()


def test_handles_need_a_lead_or_a_made_up_value() -> None:
    assert redact("微信：zhangsan").text == "微信：[HANDLE]"
    assert redact("加我微信 zhang_88").text == "加我微信 [HANDLE]"
    assert redact("WeChat Pay works").findings == ()


def test_base64_of_digits_only_is_checked() -> None:
    encoded = base64.b64encode(b"4111111111111111").decode()
    assert [p.decoded for p in iter_base64_digit_payloads(f"x {encoded} y")] == ["4111111111111111"]
    assert redact(f"blob {encoded}").text == "blob [BANK_CARD]"
    assert redact(base64.b64encode(b"12345").decode() + "AAAA").findings == ()


# ---------------------------------------------------------------- round 2: ja/ko, loose phones, versions


def test_digit_separators_fold_one_for_one_and_only_between_digits() -> None:
    raw = "138–0013—8000, 080・9876−5432, 12 – 34, page 3 · chapter 4, A—B 弗拉基米尔·普京"
    folded = fold_digit_separators(raw)
    assert folded == "138-0013-8000, 080.9876-5432, 12 - 34, page 3 · chapter 4, A—B 弗拉基米尔·普京"
    assert len(folded) == len(raw)
    result = redact("手机 138·0013·8000")
    assert result.text == "手机 [PHONE]"
    assert result.source_text[result.findings[0].start :] == "138·0013·8000"  # offsets in the source


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("パスワードは hunter2 です", "パスワードは [PASSWORD] です"),
        ("비밀번호가 sunny2024예요", "비밀번호가 [PASSWORD]예요"),
        ("カード番号は4111 1111 1111 1112です", "カード番号は[BANK_CARD]です"),  # fails Luhn, labelled
        ("여권번호는 M12345678입니다", "여권번호는 [PASSPORT]입니다"),
        ("マイナンバーは1234 5678 9012です", "マイナンバーは[ID_NUMBER]です"),
        ("주민등록번호는 850505-2345678이에요", "주민등록번호는 [ID_NUMBER]이에요"),
        ("住所は東京都新宿区西新宿2-8-1です", "住所は[ADDRESS]です"),
        ("주소: 서울시 강남구 테헤란로 152", "주소: [ADDRESS]"),
        ("私のLINEのIDは tanaka1985 です", "私のLINEのIDは [HANDLE] です"),
        ("카카오톡 아이디는 minsu92", "카카오톡 아이디는 [HANDLE]"),
        ("携帯は090-1234-5678です", "携帯は[PHONE]です"),
        ("전화번호는 02-123-4567 입니다", "전화번호는 [PHONE] 입니다"),
    ],
)
def test_japanese_and_korean_labels_take_their_particles(raw: str, expected: str) -> None:
    assert redact(raw).text == expected


def test_korean_registration_number_unlabelled_needs_its_check_digit() -> None:
    assert redact("서류에 900101-1234568 이라고").kinds == ("id_number",)  # valid by stdnum.kr.rrn
    assert redact("서류에 900101-1234567 이라고").findings == ()
    assert redact("주민등록번호 900101-1234567").kinds == ("id_number",)  # labelled: whatever the check


def test_structured_addresses_need_a_number_and_an_administrative_part() -> None:
    assert redact("東京都新宿区西新宿2-8-1に住んでいます").text == "[ADDRESS]に住んでいます"
    assert redact("서울특별시 종로구 세종대로 209 에 살아요").text == "[ADDRESS] 에 살아요"
    for text in (
        "住所は東京です",
        "東京都に住んでいます",
        "서울시 강남구에 살아요",
        "주소는 나중에 알려줄게",
    ):
        assert redact(text).findings == (), text


@pytest.mark.parametrize(
    "raw",
    [
        "mon portable : 06 12 34 56 78",
        "meine Handynummer lautet 0176 1234 5678",
        "mi teléfono es 91 123 45 67",
        "celular: 11 98765-4321",
        "私の携帯番号は 080 9876 5432",
        "핸드폰 번호 010 9876 5432 로 연락 주세요",
    ],
)
def test_national_formats_behind_a_label_in_any_language(raw: str) -> None:
    assert redact(raw).kinds == ("phone",)


def test_spoken_digit_groups_are_a_phone_when_they_make_one() -> None:
    assert redact("139 then 1234 and finally 5678").text == "[PHONE]"
    assert redact("my number: 138, 0013, 8000").text == "my number: [PHONE]"
    assert redact("号码是138、0013、8000").text == "号码是[PHONE]"
    for text in ("scores were 12, 34 and 56", "we sold 1200, 3400 and 5600 units", "1, 2, 3, 4, 5, 6, 7"):
        assert redact(text).findings == (), text


def test_a_version_word_anywhere_in_the_clause_makes_a_dotted_number_a_version() -> None:
    for text in (
        "the app version on my phone is 10.2.3.4",
        "firmware on my phone is 10.20.30.4000",
        "アプリのバージョンは 10.2.3.4 です",
        "펌웨어를 3.1.0.2 로 업데이트했어요",
        "版本更新到了 4.4.2.1，手机很流畅",
    ):
        assert redact(text).findings == (), text
    assert redact("after the firmware update the router IP is 192.168.0.1").kinds == ("ip",)
    assert redact("升级版本后，服务器地址是 172.16.0.8").kinds == ("ip",)
    assert redact("서버 주소는 10.0.0.5 입니다").kinds == ("ip",)


def test_a_messenger_label_with_is_needs_my_and_a_made_up_value() -> None:
    assert redact("my Instagram is @foodie.jane").text == "my Instagram is [HANDLE]"
    assert redact("my Telegram is durov").kinds == ("handle",)
    for text in (
        "Instagram is great for photos",
        "my Instagram is private now",
        "the signal is weak",
        "LINE Pay",
    ):
        assert redact(text).findings == (), text


def test_keycap_digits_and_base64_of_a_spaced_phone_are_read_as_numbers() -> None:
    keycaps = "".join(d + "\ufe0f\u20e3" for d in "13800138000")
    assert redact(f"call me {keycaps}").kinds == ("phone",)
    assert redact("rate it 5\ufe0f\u20e3 stars").findings == ()
    encoded = base64.b64encode(b"+86 138 0013 8000").decode()
    assert redact(f"data {encoded}").kinds == ("phone",)
    assert strip_keycaps("#\ufe0f\u20e3 \u2764\ufe0f") == "# \u2764\ufe0f"


@pytest.mark.parametrize(
    "text",
    [
        "the docs use 2001:db8::1 for the server",
        "example: ping 192.0.2.10 then 198.51.100.7",
        "the sample config points at 203.0.113.5",
        "see 3fff:0:12::8 in the RFC",
    ],
)
def test_documentation_addresses_are_no_ones(text: str) -> None:
    assert redact(text).text == text
