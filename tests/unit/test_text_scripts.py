"""Script detection of :mod:`agentmem.domain.text` (compiled character classes, cached per text)
against the per-character definition it replaced: the same answers for any text, CJK blocks,
kana, hangul, astral ideographs, symbols and punctuation included."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain import text as t


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in t._CJK_RANGES)


def _cjk_ratio(text: str) -> float:
    letters = [ch for ch in text if ch.isalpha()]
    return sum(1 for ch in letters if _is_cjk(ch)) / len(letters) if letters else 0.0


def _runs_and_words(text: str) -> tuple[list[str], list[str]]:
    runs: list[str] = []
    current: list[str] = []
    latin: list[str] = []
    for ch in text:
        if _is_cjk(ch):
            current.append(ch)
            latin.append(" ")
        else:
            if current:
                runs.append("".join(current))
                current = []
            latin.append(ch)
    if current:
        runs.append("".join(current))
    return runs, re.findall(r"[0-9a-z]+(?:['’][a-z]+)?", "".join(latin))


# Edges of every block, neighbours just outside, and characters of each kind met in practice.
_EDGES = [chr(c) for lo, hi in t._CJK_RANGES for c in (lo - 1, lo, hi, hi + 1)]
_PICKED = [
    *"abcXYZ019 ,.'’!?。，！？「」・ー々〆ヶ한글かなカナ中文字½²一二三⺀⼀\n\t",
    "\U00020000",
    "\U0003134f",
]
_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from(_EDGES + _PICKED), st.characters(codec="utf-8")), max_size=60
)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_detection_matches_the_per_character_definition(text: str) -> None:
    assert [t.is_cjk(ch) for ch in text] == [_is_cjk(ch) for ch in text]
    assert t.cjk_ratio(text) == _cjk_ratio(text)
    assert t.language(text) == ("zh" if _cjk_ratio(text) >= 0.2 else "en")
    assert t._cjk_runs_and_words(text) == _runs_and_words(text)
    cjk = sum(1 for ch in text if _is_cjk(ch))
    words = len(re.findall(r"[A-Za-z0-9]+", text))
    assert t.estimate_tokens(text) == cjk + int(words * 1.3 + 0.5) + max(0, len(text) // 40)


def test_language_of_everyday_texts() -> None:
    assert t.language("我住在杭州，在一家公司做产品经理。") == "zh"
    assert t.language("I live in Porto and work as a nurse.") == "en"
    assert t.language("我们 team 每天早上 10 点开 standup") == "zh"  # a fifth of the letters suffice
    assert t.language("") == "en" and t.cjk_ratio("123 !?") == 0.0
    assert t.is_cjk("中") and t.is_cjk("\U00020000") and not t.is_cjk("a") and not t.is_cjk("。")
