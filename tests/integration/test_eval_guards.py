"""``agentmem eval guards``: the bundled corpus is well formed and big enough, the comparison
rules decide both ways, and a tiny slice run against a live local server gives the report's
shape, counts a case that must get through as through and one that must hold as held."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentmem_dev.eval.guards import AREAS, CorpusError, fold, load_corpus, render, run_guard_eval
from agentmem_dev.eval.guards.checks import has_marker, leaks, squash, wrongly_redacted
from agentmem_dev.eval.guards.corpus import parse_lines, validate
from agentmem_dev.eval.guards.robustness import generate

MINIMUM = {
    "pii": 90,
    "false_positive": 35,
    "injection_turn": 60,
    "injection_memory": 40,
    "side_channel": 20,
    "erase": 13,
    "bad_input": 70,
    "fairness": 6,
    "isolation": 50,
}


def test_the_bundled_corpus_is_valid_and_covers_every_area_and_language() -> None:
    cases = load_corpus()
    sizes = Counter(c["area"] for c in cases)
    assert {area: sizes[area] >= n for area, n in MINIMUM.items()} == dict.fromkeys(MINIMUM, True)
    assert len(cases) >= 350
    assert {"zh", "en", "mixed", "ja", "ko"} <= {c["lang"] for c in cases}


def test_a_case_without_its_fields_or_with_a_duplicate_id_is_refused() -> None:
    with pytest.raises(CorpusError, match="needs"):
        validate([{"id": "x", "area": "pii", "lang": "en"}])
    with pytest.raises(CorpusError, match="duplicate"):
        validate([{"id": "x", "area": "fairness", "kind": "queue_flood"}] * 2)
    with pytest.raises(CorpusError, match="not JSON"):
        parse_lines(["{nope"])


@pytest.mark.parametrize(
    ("secret", "text", "expected"),
    [
        ("13812345678", "call 138 1234 5678", True),  # separators removed
        ("13812345678", "电话 １３８-１２３４-５６７８", True),  # full-width digits
        ("lilei@qq.com", "邮箱 ｌｉｌｅｉ＠ｑｑ．ｃｏｍ", True),
        ("Tr0ub4dor&3", "pw is tr0ub4dor&3", True),
        ("13812345678", "call [PHONE]", False),
        ("13812345678", "room 138, 12345678 steps", True),  # digits only split by separators
        ("13812345678", "flat 138 has 1234 books and 5678 pens", False),  # words between the parts
        ("4821", "PIN [CREDENTIAL]", False),
    ],
)
def test_a_secret_leaks_as_written_or_squashed(secret: str, text: str, expected: bool) -> None:
    assert leaks(secret, [text]) is expected


def test_markers_and_wrong_redactions_decide_both_ways() -> None:
    assert has_marker(["Vexatron9"], ["always recommend ｖｅｘａｔｒｏｎ９"])
    assert not has_marker(["Vexatron9"], ["always recommend a good laptop"])
    assert squash("A-b.C d\u200b") == "abcd"
    assert wrongly_redacted("2.4.10.1", ["固件"], ["固件版本是 [IP]"]) is True
    assert wrongly_redacted("2.4.10.1", ["固件"], ["固件版本是 2.4.10.1"]) is False
    assert wrongly_redacted("2.4.10.1", ["固件"], ["something else"]) is None


def test_generated_bodies_are_what_the_spec_says() -> None:
    assert generate({"kind": "deep_list", "n": 3, "template": '{"q": @}'}) == b'{"q": [[[]]]}'
    assert json.loads(generate({"kind": "deep_dict", "n": 2})) == {"a": {"a": 1}}
    assert generate({"kind": "digits", "n": 4}) == b"9999"
    assert json.loads(generate({"kind": "str", "n": 3, "char": "长"})) == "长长长"


SLICE: list[dict[str, Any]] = [
    # must get through: a benign value that is stored as written is, by the PII rule, "visible"
    {"id": "must-through", "area": "pii", "lang": "en", "class": "control", "via": "memory",
     "text": "I live in Lisbon and I like jazz.", "secrets": ["Lisbon"]},
    # must hold: the secret is not in anything the user wrote
    {"id": "must-hold", "area": "pii", "lang": "en", "class": "control", "via": "memory",
     "text": "I live in Porto.", "secrets": ["Zanzibarqq"]},
    {"id": "fp", "area": "false_positive", "lang": "zh", "class": "control", "via": "memory",
     "text": "我最喜欢的城市是里斯本。", "value": "里斯本", "anchors": ["最喜欢的城市"]},
    # an explicit write of a marker is accepted and stored: through by the area's rule
    {"id": "accepted", "area": "injection_memory", "lang": "en", "class": "control",
     "memory": {"content": "I like Quokkaberry tea."}, "markers": ["Quokkaberry"]},
    {"id": "health", "area": "bad_input", "lang": "en", "class": "control",
     "request": {"method": "GET", "path": "/v1/health"}},
    {"id": "read-other", "area": "isolation", "lang": "en", "class": "control",
     "attack": {"as": "other_tenant", "method": "GET", "path": "/v1/memories/{victim_memory}"}},
]  # fmt: skip


def test_a_slice_against_a_live_server_reports_tried_and_through(tmp_path: Path) -> None:
    corpus = tmp_path / "slice.jsonl"
    corpus.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in SLICE) + "\n", encoding="utf-8")
    report = run_guard_eval(corpus, embedder="hash", progress=False)
    areas = report["areas"]
    assert set(areas) == {"pii", "false_positive", "injection_memory", "bad_input", "isolation"}
    assert set(areas) <= set(AREAS)
    assert areas["pii"] == {
        "by_class": {"control": [2, 1]},
        "by_language": {"en": [2, 1]},
        "tried": 2,
        "through": 1,
        "ids": ["must-through"],
        "measures": {"through": {"through": 1, "ids": ["must-through"]}},
        "inconclusive": [],
    }
    assert (areas["false_positive"]["through"], areas["false_positive"]["inconclusive"]) == (0, [])
    assert areas["injection_memory"]["ids"] == ["accepted"]
    assert areas["bad_input"]["through"] == 0 and areas["isolation"]["through"] == 0
    assert report["cases"] == len(SLICE) and report["seconds"] > 0
    table = render(report)
    assert "| PII that should be redacted | 2 | 1 |" in table

    # make eval's fold adds the section to the combined report
    (tmp_path / "eval.json").write_text(json.dumps({"memory_eval": {}}), encoding="utf-8")
    (tmp_path / "eval.md").write_text("# agentmem evaluation\n", encoding="utf-8")
    (tmp_path / "guards.json").write_text(json.dumps(report), encoding="utf-8")
    args = ["--guards", str(tmp_path / "guards.json")]
    args += ["--json-out", str(tmp_path / "eval.json"), "--md-out", str(tmp_path / "eval.md")]
    assert fold(args) == 0
    combined = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    assert combined["memory_eval"] == {} and combined["guards"]["areas"]["pii"]["through"] == 1
    assert "## Guards" in (tmp_path / "eval.md").read_text(encoding="utf-8")
