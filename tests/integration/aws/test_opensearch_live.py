"""Against a real OpenSearch cluster: the project's engine (:mod:`support.engine_run`) or the one
``AGENTMEM_OPENSEARCH_URL`` names (see docs/aws.md "Live checks"; the whole SearchIndex contract
suite has a ``live`` run too).
These check what the fake cannot: that the cluster accepts the mapping and template (k-NN Lucene
HNSW, the ``cjk`` analyzer, the custom English analyzer), that k-NN scores convert back to
cosines, and the engine's external-version semantics."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.aws.opensearch_index import OpenSearchIndex
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import ProjectionOutcome
from support import engine_run
from support.fakes import live

pytestmark = [
    pytest.mark.opensearch,
    pytest.mark.skipif(
        engine_run.skip_reason("opensearch") is not None,
        reason=f"opensearch engine: {engine_run.skip_reason('opensearch')}",
    ),
]
S = Scope("live", f"u-{uuid.uuid4().hex[:8]}")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def cluster() -> Iterator[tuple[Any, OpenSearchIndex]]:
    client = live.opensearch_client(engine_run.engine_url("opensearch"))
    name = f"agentmem-live-{uuid.uuid4().hex[:12]}"
    yield client, OpenSearchIndex(lambda: client, index=name, dimension=4, refresh=True)
    client.indices.delete(index=name, ignore_unavailable=True)
    client.indices.delete_index_template(name=name, ignore=[404])


def rec(memory_id: str, content: str, vec: tuple[float, ...], version: int = 1) -> MemoryRecord:
    return MemoryRecord(
        scope=S,
        memory_id=memory_id,
        content=content,
        category=Category.FACT,
        embedding=vec,
        embedding_model="live-test",
        version=version,
        created_at=T0,
    )


def test_the_cluster_accepts_the_mapping(cluster: tuple[Any, OpenSearchIndex]) -> None:
    client, index = cluster
    index.ensure_index()
    mapping = client.indices.get_mapping(index=index.index)[index.index]["mappings"]
    assert mapping["properties"]["embedding"]["type"] == "knn_vector"
    assert mapping["properties"]["content"]["analyzer"] == "cjk"
    tokens = client.indices.analyze(
        index=index.index, body={"field": "content.en", "text": "我们的项目 meetings"}
    )["tokens"]
    assert [t["token"] for t in tokens] == ["我们", "们的", "的项", "项目", "meet"]


def test_knn_scores_come_back_as_cosines(cluster: tuple[Any, OpenSearchIndex]) -> None:
    _, index = cluster
    index.upsert(rec("a", "alpha", (1.0, 0.0, 0.0, 0.0)))
    index.upsert(rec("b", "beta", (1.0, 1.0, 0.0, 0.0)))
    index.upsert(rec("c", "gamma", (0.0, 1.0, 0.0, 0.0)))
    hits = index.knn(S, np.array([1.0, 0.0, 0.0, 0.0]), 3, "live-test")
    assert [h.memory_id for h in hits] == ["a", "b", "c"]
    assert [h.score for h in hits] == pytest.approx([1.0, math.sqrt(0.5), 0.0], abs=1e-3)


def test_external_versions_and_tombstones(cluster: tuple[Any, OpenSearchIndex]) -> None:
    _, index = cluster
    v2 = rec("m", "我们项目的总预算是 250 万", (1.0, 0.0, 0.0, 0.0), version=2)
    assert index.upsert(v2) is ProjectionOutcome.APPLIED
    assert index.upsert(rec("m", "older", (1.0, 0.0, 0.0, 0.0))) is ProjectionOutcome.STALE
    assert [h.memory_id for h in index.keyword(S, "项目预算", 5)] == ["m"]
    assert index.delete(S, "m", 1) is ProjectionOutcome.STALE
    assert index.delete(S, "m", 2) is ProjectionOutcome.APPLIED
    assert index.upsert(v2) is ProjectionOutcome.STALE  # within index.gc_deletes
