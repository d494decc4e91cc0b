"""Task-note compression (agentmem.domain.compress): verbatim while it fits; past the bound the
oldest notes are folded first into their key sentences (numbers, dates, names, conclusions kept
word for word, zh and en), the newest note never; the result always within the bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.compress import compress_notes, is_key, key_parts
from agentmem.domain.text import estimate_tokens


@pytest.mark.parametrize(
    "text",
    [
        "The quote was 1200 EUR.",
        "We meet on Friday.",
        "Checked with Alice.",
        "Deploy to AWS first.",
        "Therefore we picked plan B.",
        "The root cause was a stale cache.",
        "报价1200欧元。",
        "住三晚。",
        "下周一出发。",
        "王伟说可以。",
        "因此选了方案B。",
        "已订《千与千寻》的票。",
    ],
)
def test_keys_are_numbers_dates_names_and_conclusions(text: str) -> None:
    assert is_key(text)


@pytest.mark.parametrize(
    "text",
    [
        "the page kept reloading for a while",
        "Browsed some reviews and nothing much came of it.",
        "看了一些评论，没什么用。",
        "天气不错，心情很好。",
    ],
)
def test_filler_is_not_a_key(text: str) -> None:
    assert not is_key(text)


def test_key_parts_keep_only_the_key_sentences_verbatim() -> None:
    note = "The site was slow. Alice quoted 1200 EUR for 5 nights. Nothing else happened."
    assert key_parts(note) == ["Alice quoted 1200 EUR for 5 nights."]
    assert key_parts("网站很慢。王伟确认了3月14日的房间。没别的了。") == ["王伟确认了3月14日的房间。"]


def test_notes_that_fit_are_unchanged() -> None:
    notes = ["hotel A is full", "酒店B有空房"]
    out = compress_notes(notes, max_tokens=100, max_chars=350)
    assert out.notes == tuple(notes) and out.folded == 0 and out.omitted == 0


def test_the_oldest_notes_fold_first_and_the_newest_stays_verbatim() -> None:
    notes = [
        "Looked around for a while. Flight LH716 leaves at 09:40.",
        "Read some blogs about food in general, nothing much.",
        "Bob booked the Granvia for 3 nights.",
        "Now: waiting for the hotel's answer.",
    ]
    out = compress_notes(notes, max_tokens=40, max_chars=170)
    assert out.notes[-1] == notes[-1]
    assert out.notes[0].startswith("earlier notes: ")
    assert "Flight LH716 leaves at 09:40." in out.notes[0]
    assert "blogs" not in " ".join(out.notes)
    assert out.folded >= 2


def test_chinese_notes_fold_under_a_chinese_label() -> None:
    notes = [
        "随便看了看网站，没什么收获。",
        "李娜订了5晚的酒店。",
        "浏览了很多博客，内容泛泛。" * 3,
        "当前：等回复。",
    ]
    out = compress_notes(notes, max_tokens=30)
    assert out.notes[-1] == "当前：等回复。"
    assert out.notes[0].startswith("此前记录：") and "李娜订了5晚的酒店。" in out.notes[0]


def test_past_key_sentences_the_oldest_parts_are_left_out_and_counted() -> None:
    notes = [f"Step {i}: Alice checked room {100 + i} for March {i + 1}." for i in range(12)] + ["Now: done."]
    out = compress_notes(notes, max_tokens=60, max_chars=200)
    text = " ".join(out.notes)
    assert out.omitted > 0 and f"(+{out.omitted} earlier parts omitted)" in text
    assert "March 12" in text  # the newest key parts survive longest
    assert sum(len(n) for n in out.notes) <= 200 and estimate_tokens("\n".join(out.notes)) <= 60


def test_a_newest_note_too_long_on_its_own_is_cut() -> None:
    out = compress_notes(["old note 1", "word " * 500], max_tokens=50, max_chars=120)
    assert len(out.notes) == 1 and out.notes[0].endswith("…") and len(out.notes[0]) <= 120
    assert out.cut and out.notes[0].startswith("word word")


_note = st.text(
    alphabet=st.sampled_from(list("abc XYZ 0123 。，.,;天气王伟确认因此 Alice Friday")),
    min_size=0,
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(
    notes=st.lists(_note, max_size=30),
    tokens=st.integers(16, 300),
    chars=st.one_of(st.none(), st.integers(20, 800)),
)
def test_the_result_is_always_within_the_bound(notes: list[str], tokens: int, chars: int | None) -> None:
    out = compress_notes(notes, max_tokens=tokens, max_chars=chars)
    assert estimate_tokens("\n".join(out.notes)) <= tokens
    if chars is not None:
        assert sum(len(n) for n in out.notes) <= chars
    if out.folded == 0 and not out.cut:
        assert out.notes == tuple(n for n in notes if n.strip())  # untouched unless folded or cut
