"""How a retraction or a correction finds the fact it ends (``domain/endings.py``): the
retraction's topic terms mostly in the earlier fact; a correction's value put in place of the
earlier statement's value of the same shape."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentmem.domain.endings import (
    TOPIC_FLOOR,
    Said,
    amended,
    contained,
    ended_by,
    retraction_subject,
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


def _said(text: str, topical: dict[str, float]) -> Said:
    return Said(read(text), text, T0, "s2", "msg-2", topical)


def test_a_retraction_ends_the_one_fact_its_topic_stands_out_for() -> None:
    ranked = [(0.15, ESPRESSO), (0.02, CELLO)]  # no shared word, too far apart as sentences
    assert ended_by(_said(QUIT, {}), ranked, SimilarityThresholds()) is None
    topical = {"m1": 0.14, "m2": 0.03}
    assert ended_by(_said(QUIT, topical), ranked, SimilarityThresholds()) is ESPRESSO


def test_a_retraction_ends_nothing_when_two_facts_could_be_meant_or_none_is_near() -> None:
    ranked = [(0.15, ESPRESSO), (0.12, LATTE), (0.02, CELLO)]
    assert ended_by(_said(QUIT, {"m1": 0.16, "m3": 0.14, "m2": 0.0}), ranked, SimilarityThresholds()) is None
    faint = {"m1": TOPIC_FLOOR - 0.02, "m2": 0.0}
    assert ended_by(_said(QUIT, faint), [(0.05, ESPRESSO), (0.0, CELLO)], SimilarityThresholds()) is None


def test_a_retraction_never_ends_a_fact_of_its_own_message() -> None:
    same = ESPRESSO.evolve(now=T0, source_refs=ESPRESSO.source_refs.with_message("msg-2"))
    assert ended_by(_said(QUIT, {"m1": 0.5}), [(0.5, same)], SimilarityThresholds()) is None


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("I quit smoking back in March.", "smoking"),
        ("I gave up coffee completely last month.", "coffee"),
    ],
)
def test_what_a_retraction_is_about_drops_its_markers_and_time_words(text: str, subject: str) -> None:
    assert retraction_subject(text) == subject


def test_a_shared_topic_counts_a_words_other_forms() -> None:
    assert shares_topic("I quit smoking in March.", "I smoke five a day.")
    assert not shares_topic("I quit smoking in March.", "I drink three espressos a day.")
