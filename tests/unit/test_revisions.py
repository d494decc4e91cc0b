"""Revisions within one conversation (``domain/endings.revision_candidates`` and the revision
pair head): which earlier statements a new one may give another value to, before the learned head
is asked. The gates are the point: another conversation, a third party's fact, an asserted fact
under a mere wish, a multi-valued fact and the same message are never candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agentmem.domain.endings import Said, revision_candidates
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.domain.reading import read
from agentmem.domain.reading.heads import REVISION_HEAD, Head, Heads, pair_features
from agentmem.domain.similarity import SimilarityThresholds

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TH = SimilarityThresholds()


def said(
    text: str, *, session: str = "s1", message: str = "m9", at: datetime = T0 + timedelta(minutes=9)
) -> Said:
    return Said(read(text), text, at, session, message)


def rec(memory_id: str, text: str, *, session: str = "s1", message: str | None = None) -> MemoryRecord:
    return MemoryRecord(
        scope=Scope("t1", "u1"),
        memory_id=memory_id,
        content=text,
        category=Category.EPISODIC,
        source_refs=SourceRefs(session_id=session, message_ids=(message or f"m-{memory_id}",)),
        created_at=T0,
        updated_at=T0,
        valid_from=T0,
    )


def test_a_statement_of_the_same_conversation_with_a_value_of_the_same_shape_comes_first() -> None:
    near = rec("a", "I need a bus for two people to Fresno.")
    dated = rec("b", "I'd like to leave on March 6th.")
    got = revision_candidates(said("I want to leave on March 12th."), [(0.7, near), (0.5, dated)], TH)
    assert [r.memory_id for r in got] == ["b", "a"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (rec("x", "I'd like to leave on March 6th.", session="s0"), "I want to leave on March 12th."),
        (rec("x", "My sister lives in Oslo."), "I live in Porto now."),
        (rec("x", "I live in Lisbon."), "Someday I'd love to live in Porto."),
        (rec("x", "I'd like to leave on March 6th.", message="m9"), "I want to leave on March 12th."),
        (rec("x", "I also play the violin."), "I play the piano."),
    ],
    ids=["another conversation", "a third party's", "a wish over a fact", "same message", "multi-valued"],
)
def test_what_is_never_a_candidate(old: MemoryRecord, new: str) -> None:
    assert revision_candidates(said(new), [(0.8, old)], TH) == []


def test_a_duplicate_is_not_a_candidate_but_a_faint_likeness_is() -> None:
    old = rec("x", "I'd like to leave on March 6th.")
    assert revision_candidates(said("I want to leave on March 12th."), [(0.0, old)], TH) == [old]
    assert revision_candidates(said("I want to leave on March 12th."), [(TH.dedup, old)], TH) == []


def test_the_pair_head_reads_both_vectors_in_order() -> None:
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.6, 0.8], dtype=np.float32)
    features = pair_features(a, b)
    assert features.tolist() == pytest.approx([0.6, 0.0, 0.4, 0.8, 1.0, 0.0, 0.6, 0.8])
    weights = np.zeros((2, 8), dtype=np.float32)
    weights[1, 2:4] = 5.0  # "same" grows with where they part (a toy head)
    head = Head(("other", "same"), weights, np.zeros(2, dtype=np.float32), np.zeros(8, dtype=np.float32))
    heads = Heads("m", {REVISION_HEAD: head})
    assert heads.revises(a, b) == pytest.approx(1 / (1 + np.exp(-6.0)))
    assert heads.revises(a, a) == pytest.approx(0.5)
    assert Heads("m", {}).revises(a, b) is None
