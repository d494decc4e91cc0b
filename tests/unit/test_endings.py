"""How a retraction or a correction finds the fact it ends (``domain/endings.py``): the
retraction's topic terms mostly in the earlier fact; a correction's value put in place of the
earlier statement's value of the same shape."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentmem.domain.endings import (
    Said,
    amended,
    contained,
    ended_by,
    shares_topic,
)
from agentmem.domain.models import Category, MemoryRecord, Scope, Source
from agentmem.domain.reading import read
from agentmem.domain.similarity import SimilarityThresholds


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


# ------------------------------------------------------------ a retraction's topic, by meaning

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _fact(memory_id: str, content: str) -> MemoryRecord:
    return MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id=memory_id,
        content=content,
        category=Category.PREFERENCE,
        source=Source.USER,
        created_at=T0,
        updated_at=T0,
    )


ESPRESSO = _fact("m1", "I drink three espressos a day.")
CELLO = _fact("m2", "I play the cello in a community orchestra.")
LATTE = _fact("m3", "I take my latte with oat milk.")
QUIT = "I gave up coffee completely last month."


def _said(text: str) -> Said:
    return Said(read(text), text, T0, "s2", "msg-2")


def test_a_retraction_in_other_words_keeps_both() -> None:
    """No shared word and far apart as sentences: nothing is ended (a learned topic match put a
    job under "I'm not climbing any more" on a fresh set, so it is not used: keep both)."""
    ranked = [(0.15, ESPRESSO), (0.02, CELLO), (0.0, LATTE)]
    assert ended_by(_said(QUIT), ranked, SimilarityThresholds()) is None


def test_a_retraction_ends_the_near_fact_of_its_topic_in_another_form_of_the_word() -> None:
    smoke = _fact("m4", "I smoke about five cigarettes a day.")
    said = _said("I quit smoking back in March.")
    assert ended_by(said, [(0.26, smoke), (0.0, CELLO)], SimilarityThresholds()) is smoke


def test_a_retraction_never_ends_a_fact_of_its_own_message() -> None:
    same = ESPRESSO.evolve(now=T0, source_refs=ESPRESSO.source_refs.with_message("msg-2"))
    assert ended_by(_said("I gave up espressos."), [(0.5, same)], SimilarityThresholds()) is None


def test_a_shared_topic_counts_a_words_other_forms() -> None:
    assert shares_topic("I quit smoking in March.", "I smoke five a day.")
    assert not shares_topic("I quit smoking in March.", "I drink three espressos a day.")
