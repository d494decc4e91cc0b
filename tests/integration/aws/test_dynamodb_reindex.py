"""The reindex on the AWS backend (moto's DynamoDB): the journal's items beside the memories
(``adapters/aws/dynamodb_reindex.py``) and the reindex function (``functions/reindex``) run by
the operator: stage under a cut budget, resume, switch with version-conditional transactions,
while the service's listings, the stream and the serving index never see the staged vectors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from awshelpers import Moto

from agentmem.adapters.aws.dynamodb_base import DynamoTable
from agentmem.adapters.aws.dynamodb_reindex import STAGED_PREFIX, DynamoReindexJournal
from agentmem.adapters.codec import change_from_stream_record
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Status
from agentmem.errors import VersionConflict
from agentmem.ports import ReindexProgress, StagedVector
from agentmem.settings import load_settings
from agentmem_dev.dynamodb_stream import StreamReader
from agentmem_dev.emulator import lambdas
from support.aws import REGION

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
ALICE, BOB = Scope("t1", "alice"), Scope("t1", "bob")
FACTS = {
    ALICE: ["I live in Glasgow.", "I prefer window seats.", "我喜欢喝乌龙茶。"],
    BOB: ["我住在杭州西湖区。", "I am allergic to peanuts."],
}
V = (0.25, -0.5, 0.125, 1.0)  # exact in float16


class NewModel(HashEmbedder):
    """The model the stack moves to: another id and dimension."""

    model_id = "hash/ngram-64"

    def __init__(self) -> None:
        super().__init__(64)


def journal(moto: Moto, model: str = "m/new", clock: ManualClock | None = None) -> DynamoReindexJournal:
    table = DynamoTable(moto.lazy(), moto.memory_table, store="dynamodb")
    return DynamoReindexJournal(table, model, clock=(clock or ManualClock(T0)).now, sleep=lambda _: None)


def test_staged_vectors_round_trip_per_model_and_stay_out_of_listings_and_the_stream(moto: Moto) -> None:
    j, other = journal(moto), journal(moto, "m/other")
    container = world(moto, Path("/tmp/agentmem-reindex-unused"), HashEmbedder())
    record, _ = container.explicit.write(ALICE, "I live in Glasgow.", now=T0, request_id="r1")
    assert record is not None
    reader = StreamReader(moto.streams, moto.stream_arn)
    reader.read()
    j.keep(ALICE, [StagedVector(record.memory_id, record.version, record.content_hash, V)])
    assert j.staged(ALICE, [record.memory_id, "absent"]) == {
        record.memory_id: StagedVector(record.memory_id, record.version, record.content_hash, V)
    }
    assert other.staged(ALICE, [record.memory_id]) == {}  # another model's journal reads none of it
    assert j.staged(BOB, [record.memory_id]) == {}
    listed = container.store.list(ALICE, statuses=tuple(Status), limit=50).items
    assert [r.memory_id for r in listed] == [record.memory_id]
    for raw in reader.read():  # the staged item's stream record is not a change of a memory
        assert raw["dynamodb"]["Keys"]["sk"]["S"].startswith(STAGED_PREFIX)
        assert change_from_stream_record(raw) is None
    container.store.erase_scope(ALICE)  # the user's partition goes, the staged vectors with it
    assert j.staged(ALICE, [record.memory_id]) == {}


def test_staged_scopes_page_and_a_discarded_scope_leaves_nothing(moto: Moto) -> None:
    j = journal(moto)
    scopes = [Scope("t1", f"u{i}") for i in range(5)]
    for i, scope in enumerate(scopes):
        j.mark_scope(scope, T0 + timedelta(seconds=i))
        j.keep(scope, [StagedVector("m1", 1, "h", V)])
    seen: list[tuple[Scope, datetime]] = []
    cursor: str | None = None
    while True:
        page, cursor = j.staged_scopes(2, cursor)
        seen += page
        if cursor is None:
            break
    assert sorted(seen, key=lambda p: p[0].key) == [
        (s, T0 + timedelta(seconds=i)) for i, s in enumerate(scopes)
    ]
    j.discard_scope(scopes[0])
    assert j.staged(scopes[0], ["m1"]) == {} and j.staged(scopes[1], ["m1"])
    page, _ = j.staged_scopes(10)
    assert scopes[0] not in [s for s, _ in page]


def test_progress_is_saved_conditionally_on_the_revision_read(moto: Moto) -> None:
    j = journal(moto)
    assert j.progress() is None
    saved = j.save_progress(ReindexProgress("m/new", step="stage", position="p", skip=3, pass_started_at=T0))
    assert saved.revision == 1
    read = j.progress()
    assert read == saved
    j.save_progress(read)  # revision 1 -> 2
    with pytest.raises(VersionConflict):
        j.save_progress(read)  # a second run that read revision 1
    with pytest.raises(VersionConflict):
        j.save_progress(ReindexProgress("m/new"))  # a fresh run over a saved walk


# ------------------------------------------------------------------ the function, end to end


def world(
    moto: Moto, projections: Path, embedder: HashEmbedder, clock: ManualClock | None = None
) -> Container:
    settings = load_settings(
        backend="aws",
        embedder="hash",
        semantic_guard=False,
        search_backend="local",
        graph_backend="local",
        local_projection_dir=projections,
        queue_url="https://sqs.eu-west-1.amazonaws.com/123456789012/agentmem-ingest",
        table_memory=moto.memory_table,
        table_session=moto.session_table,
        table_audit=moto.audit_table,
        aws_region=REGION,
    )
    return bootstrap(settings, clock=clock or ManualClock(T0), embedder=embedder)


@dataclass
class Context:
    """A Lambda context whose remaining time is what the test says."""

    remaining_ms: int
    function_name: str = "agentmem-reindex"
    memory_limit_in_mb: int = 1024
    aws_request_id: str = "req-1"
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:agentmem-reindex"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@pytest.fixture
def stack(moto: Moto, tmp_path: Path) -> Iterator[tuple[Container, Container]]:
    """The serving functions (old model, old index) and the reindex function (new model, its own
    index), over the same tables."""
    serving = world(moto, tmp_path / "old-index", HashEmbedder())
    for scope, facts in FACTS.items():
        for i, fact in enumerate(facts):
            record, _ = serving.explicit.write(scope, fact, now=T0, request_id=f"{scope.user_id}-{i}")
            assert record is not None
    yield serving, world(moto, tmp_path / "new-index", NewModel())


def invoke(container: Container, step: str, remaining_ms: int = 900_000) -> dict[str, Any]:
    handler = lambdas.load("reindex").handler  # with a context that says how long is left
    result: dict[str, Any] = handler({"step": step}, Context(remaining_ms), container=container)
    return result


def test_the_function_stages_while_the_old_vectors_serve_then_switches(
    stack: tuple[Container, Container],
) -> None:
    serving, reindex = stack
    before = {
        (r.memory_id, r.version, r.embedding_model)
        for s in FACTS
        for r in serving.store.list(s, statuses=(Status.ACTIVE,), limit=50).items
    }
    assert invoke(reindex, "switch")["error"].startswith("stage every memory first")
    # a Lambda with less time left than the margin: the run stops before its first scope
    cut = invoke(reindex, "stage", remaining_ms=30_000)
    assert cut["budget_exhausted"] and cut["staged"] == 0 and not cut["pass_completed"]
    staged = invoke(reindex, "stage")
    assert staged["pass_completed"] and staged["staged"] == 5 and staged["progress"]["stage_done"]
    after = {
        (r.memory_id, r.version, r.embedding_model)
        for s in FACTS
        for r in serving.store.list(s, statuses=(Status.ACTIVE,), limit=50).items
    }
    assert after == before  # the serving items are untouched
    query = NewModel().embed_query("Where do I live?")
    assert len(reindex.index.knn(ALICE, query, 5, NewModel.model_id)) == 3  # the new index is complete
    late, _ = serving.explicit.write(BOB, "I drive a blue van.", now=T0, request_id="late")
    assert late is not None
    switched = invoke(reindex, "switch")
    assert switched["pass_completed"] and switched["switched"] == 6 and switched["caught_up"] == 1
    assert switched["next"].startswith("done")
    for scope in FACTS:
        for r in serving.store.list(scope, statuses=(Status.ACTIVE,), limit=50).items:
            full = serving.store.get(scope, r.memory_id)
            assert (
                full is not None and full.embedding_model == NewModel.model_id and full.embedding is not None
            )
            np.testing.assert_allclose(
                np.asarray(full.embedding), NewModel().embed_documents([full.content])[0], atol=2e-3
            )  # float16 at rest
    status = invoke(reindex, "status")
    assert status["progress"]["switch_done"] and status["staged"] == 0
    assert invoke(reindex, "drop")["error"].startswith("step must be")
