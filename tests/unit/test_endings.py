"""How a retraction or a correction finds the fact it ends (``domain/endings.py``): the
retraction's topic terms mostly in the earlier fact; a correction's value put in place of the
earlier statement's value of the same shape."""

from __future__ import annotations

import pytest

from agentmem.domain.endings import amended, contained


@pytest.mark.parametrize(
    ("retraction", "old", "ends"),
    [
        (
            "I stopped doing hot yoga, it was too much.",
            "I do hot yoga at the Lotus studio every Tuesday.",
            True,
        ),
        ("I don't volunteer at the food bank anymore.", "I volunteer at the food bank on Sundays.", True),
        ("I quit my job at the bank.", "I volunteer at the food bank on Sundays.", False),
        ("I cancelled the newspaper.", "I do hot yoga at the Lotus studio every Tuesday.", False),
        ("I quit smoking in March.", "I smoke about five cigarettes a day.", True),  # stems, a time word
    ],
)
def test_a_retraction_is_mostly_about_the_fact_it_ends(retraction: str, old: str, ends: bool) -> None:
    assert contained(retraction, old) is ends


@pytest.mark.parametrize(
    ("correction", "old", "new"),
    [
        ("I meant 8pm.", "The team dinner is at 7pm on Thursday.", "The team dinner is at 8pm on Thursday."),
        ("Sorry, it's Friday.", "Piano lesson is on Wednesday.", "Piano lesson is on Friday."),
        ("说错了，是3月21号。", "我的驾照考试在3月12号。", "我的驾照考试在3月21号。"),
        ("不对，是周五。", "家长会是周四下午。", "家长会是周五下午。"),
        ("Sorry, I meant Lyon, not Lille.", "The conference is in Lille.", "The conference is in Lyon."),
        ("Sorry, it is 2,150 not 1,800.", "My rent is 1,800 a month.", "My rent is 2,150 a month."),
        ("I meant the other one.", "The conference is in Lille.", None),  # no value of a shape: as said
    ],
)
def test_a_correction_puts_its_value_in_place(correction: str, old: str, new: str | None) -> None:
    assert amended(correction, old) == new
