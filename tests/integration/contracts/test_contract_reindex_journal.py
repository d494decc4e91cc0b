"""ReindexJournal contract, parametrised over implementations: ``embedded`` (the SQLite journal
beside the data, :class:`agentmem_dev.reindex.Journal`), ``aws`` (items in the memory table on
moto, :class:`~agentmem.adapters.aws.dynamodb_reindex.DynamoReindexJournal`) and ``fake`` (the
in-memory fake, :mod:`support.fakes.reindex_journal`).

Every adapter must: hand back staged vectors at the version they were staged at (and nothing for
a memory never staged), a later stage replacing an earlier; keep scopes apart; list the marked
scopes with when each was listed, a page at a time; drop a discarded scope's vectors and mark
without touching another scope's; save progress only at the revision it was read at (a second
run's stale save is a ``VersionConflict``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmem.adapters.aws.dynamodb_base import DynamoTable
from agentmem.adapters.aws.dynamodb_reindex import DynamoReindexJournal
from agentmem.domain.models import Scope
from agentmem.errors import VersionConflict
from agentmem.ports import ReindexJournal, ReindexProgress, StagedVector
from agentmem_dev.reindex import Journal
from support.aws import dynamodb_tables
from support.fakes.reindex_journal import InMemoryReindexJournal

S1, S2 = Scope("t1", "u1"), Scope("t1", "u2")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MODEL = "m/new"
V1 = (0.25, -0.5, 0.125, 1.0)  # exact in float16
V2 = (1.0, 0.5, -0.25, 0.0)


@pytest.fixture(params=["embedded", "aws", "fake"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReindexJournal]:
    if request.param == "fake":
        yield InMemoryReindexJournal(MODEL)
        return
    if request.param == "embedded":
        yield Journal(tmp_path / "reindex" / "m.sqlite", MODEL)
        return
    with dynamodb_tables("aws") as tables:
        table = DynamoTable(tables.lazy(), tables.memory_table, store="dynamodb")
        yield DynamoReindexJournal(table, MODEL, clock=lambda: T0, sleep=lambda _: None)


def test_staged_vectors_come_back_at_their_version_and_a_later_stage_replaces(
    journal: ReindexJournal,
) -> None:
    assert journal.model_id == MODEL
    journal.keep(S1, [StagedVector("m1", 1, "h1", V1), StagedVector("m2", 3, "h2", V2)])
    got = journal.staged(S1, ["m1", "m2", "never"])
    assert set(got) == {"m1", "m2"}
    assert (got["m1"].version, got["m1"].content_hash, got["m1"].vector) == (1, "h1", V1)
    journal.keep(S1, [StagedVector("m1", 2, "h1b", V2)])
    again = journal.staged(S1, ["m1"])["m1"]
    assert (again.version, again.content_hash, again.vector) == (2, "h1b", V2)
    assert journal.staged(S2, ["m1"]) == {}  # scopes are apart
    assert journal.staged(S1, []) == {}


def test_marked_scopes_are_listed_a_page_at_a_time_and_a_discarded_one_is_gone(
    journal: ReindexJournal,
) -> None:
    journal.keep(S1, [StagedVector("m1", 1, "h1", V1)])
    journal.keep(S2, [StagedVector("m9", 1, "h9", V2)])
    journal.mark_scope(S1, T0)
    journal.mark_scope(S2, T0 + timedelta(minutes=1))
    journal.mark_scope(S1, T0 + timedelta(minutes=2))  # a later mark replaces the earlier
    seen: dict[str, datetime] = {}
    cursor: str | None = None
    for _ in range(5):
        page, cursor = journal.staged_scopes(1, cursor)
        assert len(page) <= 1
        seen.update({scope.key: at for scope, at in page})
        if cursor is None:
            break
    assert seen == {S1.key: T0 + timedelta(minutes=2), S2.key: T0 + timedelta(minutes=1)}
    journal.discard_scope(S1)
    assert journal.staged(S1, ["m1"]) == {}
    assert set(journal.staged(S2, ["m9"])) == {"m9"}
    page, _ = journal.staged_scopes(10)
    assert [scope.key for scope, _ in page] == [S2.key]


def test_progress_is_saved_only_at_the_revision_it_was_read_at(journal: ReindexJournal) -> None:
    assert journal.progress() is None
    first = journal.save_progress(ReindexProgress(MODEL, staged=3, updated_at=T0))
    assert first.revision == 1
    read = journal.progress()
    assert read is not None and (read.revision, read.staged) == (1, 3)
    second = journal.save_progress(ReindexProgress(MODEL, staged=5, revision=1, updated_at=T0))
    assert second.revision == 2
    with pytest.raises(VersionConflict):  # another run saved meanwhile: this one read revision 1
        journal.save_progress(ReindexProgress(MODEL, staged=9, revision=1, updated_at=T0))
    final = journal.progress()
    assert final is not None and (final.revision, final.staged) == (2, 5)
