"""OpenSearch adapter: the requests it sends (checked against the documented DSL — mapping,
external-version writes, k-NN with efficient filtering, BM25, mget, search_after,
delete_by_query), and its parsing of realistic responses (fixtures/opensearch/*.json, in the
shape OpenSearch 2.x returns them). Requests go through a real ``opensearchpy.OpenSearch``
client whose connection is the in-process fake, or a replaying connection for the fixtures."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opensearchpy import OpenSearch
from opensearchpy.connection import Connection

from agentmem.adapters import record_json
from agentmem.adapters.aws import opensearch_dsl as dsl
from agentmem.adapters.aws import opensearch_index
from agentmem.adapters.aws.opensearch_index import OpenSearchIndex
from agentmem.adapters.readings import rules_fingerprint
from agentmem.domain.models import Category, MemoryRecord, Scope, Status
from agentmem.errors import StoreUnavailable
from agentmem.ports import Hit, ProjectionOutcome, ProjectionState
from support.fakes.fake_opensearch import FakeOpenSearch, Index, RecordedRequest, fake_client

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DIM = 4
INDEX = "agentmem-memories"
FIXTURES = Path(__file__).parent / "fixtures" / "opensearch"


def rec(
    memory_id: str, content: str = "I live in Glasgow", scope: Scope = ALICE, **changes: Any
) -> MemoryRecord:
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=content,
        category=Category.IDENTITY,
        key="residence",
        embedding=(1.0, 0.0, 0.0, 0.0),
        embedding_model="bedrock/amazon.titan-embed-text-v2:0/4",
        created_at=T0,
    )
    return replace(record, **changes, content_hash="") if changes else record


@pytest.fixture
def engine() -> FakeOpenSearch:
    return FakeOpenSearch()


@pytest.fixture
def index(engine: FakeOpenSearch) -> OpenSearchIndex:
    return OpenSearchIndex(lambda: fake_client(engine), index=INDEX, dimension=DIM)


def requests(engine: FakeOpenSearch, method: str | None = None, suffix: str = "") -> list[RecordedRequest]:
    return [r for r in engine.requests if (method is None or r.method == method) and r.path.endswith(suffix)]


def test_index_template_and_index_are_created_once(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(rec("m1"))
    index.upsert(rec("m2"))
    OpenSearchIndex(lambda: fake_client(engine), index=INDEX, dimension=DIM).keyword(ALICE, "Glasgow", 5)
    assert [(r.method, r.path) for r in engine.requests[:3]] == [
        ("PUT", f"/_index_template/{INDEX}"),
        ("HEAD", f"/{INDEX}"),
        ("PUT", f"/{INDEX}"),
    ]
    creates = [r for r in engine.requests if (r.method, r.path) == ("PUT", f"/{INDEX}")]
    assert len(creates) == 1  # the second instance found the index
    body = creates[0].body
    mappings = body["mappings"]
    assert mappings["dynamic"] == "strict" and mappings["_routing"] == {"required": True}
    assert mappings["properties"]["embedding"] == {
        "type": "knn_vector",
        "dimension": DIM,
        "method": {
            "name": "hnsw",
            "engine": "lucene",
            "space_type": "cosinesimil",
            "parameters": {"m": 16, "ef_construction": 128},
        },
    }
    assert mappings["properties"]["content"]["analyzer"] == "cjk"
    assert mappings["properties"]["content"]["fields"] == {
        "en": {"type": "text", "analyzer": "agentmem_en"},
        "std": {"type": "text", "analyzer": "standard"},
    }
    for name in ("tenant_id", "user_id", "status", "category", "tags", "model", "content_hash", "memory_id"):
        assert mappings["properties"][name] == {"type": "keyword"}
    assert mappings["properties"]["version"] == {"type": "long"}
    assert body["settings"]["index"]["knn"] is True
    template = requests(engine, "PUT", f"/_index_template/{INDEX}")[0].body
    assert (
        template["index_patterns"] == [INDEX, f"{INDEX}-*"] and template["template"]["mappings"] == mappings
    )


def test_upsert_is_an_external_version_put_routed_by_scope(
    engine: FakeOpenSearch, index: OpenSearchIndex
) -> None:
    record = rec("m1", tags=("home",))
    assert index.upsert(record) is ProjectionOutcome.APPLIED
    put = requests(engine, "PUT", "/_doc/TENANT%23acme%23USER%23alice%23m1")[0]
    assert put.params == {
        "routing": ALICE.key,
        "version": "1",
        "version_type": "external",
        "refresh": "false",
    }
    card = put.body.pop("card")
    assert card == json.loads(record_json.card(record)) and "embedding" not in card
    assert card["memory_id"] == "m1" and card["content"] == "I live in Glasgow"
    assert put.body == {
        "tenant_id": "acme",
        "user_id": "alice",
        "memory_id": "m1",
        "status": "active",
        "category": "identity",
        "tags": ["home"],
        "version": 1,
        "content_hash": record.content_hash,
        "importance": 0.5,
        "content": "I live in Glasgow",
        "key": "residence",
        "created_at": "2026-01-05T09:00:00+00:00",
        "embedding": [1.0, 0.0, 0.0, 0.0],
        "model": "bedrock/amazon.titan-embed-text-v2:0/4",
        "reading": {"rules": rules_fingerprint(), "keys": ["residence"], "pinned": False},
        "reading_keys": [f"{rules_fingerprint()}:residence"],
    }


def test_a_vector_of_another_dimension_is_left_out(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    assert index.upsert(rec("m1", embedding=(1.0, 0.0))) is ProjectionOutcome.APPLIED
    body = requests(engine, "PUT", "%23m1")[0].body
    assert "embedding" not in body and "model" not in body
    assert [h.memory_id for h in index.keyword(ALICE, "Glasgow", 5)] == ["m1"]


def test_same_version_other_hash_reads_the_stored_hash(
    engine: FakeOpenSearch, index: OpenSearchIndex
) -> None:
    v1 = rec("m1")
    index.upsert(v1)
    assert index.upsert(replace(v1, content="drift", content_hash="")) is ProjectionOutcome.CONFLICT
    assert index.upsert(v1) is ProjectionOutcome.STALE
    gets = requests(engine, "GET", "%23m1")
    assert len(gets) == 2 and gets[0].params == {
        "routing": ALICE.key,
        "_source_includes": "version,content_hash",
    }


def test_deletes_use_external_versions(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    v1 = rec("m1")
    index.upsert(v1)
    assert index.upsert(v1.evolve(now=T0, status=Status.SUPERSEDED)) is ProjectionOutcome.APPLIED
    assert requests(engine, "DELETE")[-1].params["version_type"] == "external"
    assert index.delete(ALICE, "m1", 2) is ProjectionOutcome.STALE  # already gone at v2: a tombstone answers
    last = requests(engine, "DELETE")[-1]
    assert last.params == {
        "routing": ALICE.key,
        "version": "2",
        "version_type": "external_gte",
        "refresh": "false",
    }
    engine.gc()  # past index.gc_deletes the tombstone is forgotten: the documented limitation
    assert index.upsert(v1) is ProjectionOutcome.APPLIED


def test_knn_body_is_the_documented_dsl(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(rec("m1"))
    index.upsert(rec("m2", embedding=(0.0, 1.0, 0.0, 0.0)))
    index.upsert(rec("m9", scope=BOB))
    hits = index.knn(ALICE, np.array([2.0, 0.0, 0.0, 0.0]), 5, "bedrock/amazon.titan-embed-text-v2:0/4")
    assert hits == [
        Hit("m1", pytest.approx(1.0)),
        Hit("m2", pytest.approx(0.0)),
    ]  # cosines, as the local index
    search = requests(engine, "POST", "/_search")[-1]
    assert search.params == {"routing": ALICE.key}
    assert search.body == {
        "size": 5,
        "_source": ["memory_id"],
        "query": {
            "knn": {
                "embedding": {
                    "vector": [1.0, 0.0, 0.0, 0.0],
                    "k": 5,
                    "filter": {
                        "bool": {
                            "filter": [
                                {"term": {"tenant_id": "acme"}},
                                {"term": {"user_id": "alice"}},
                                {"term": {"status": "active"}},
                                {"term": {"model": "bedrock/amazon.titan-embed-text-v2:0/4"}},
                            ]
                        }
                    },
                }
            }
        },
    }


def test_keyword_body_is_the_documented_dsl(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(rec("m1", "我住在杭州西湖区"))
    assert [h.memory_id for h in index.keyword(ALICE, "杭州", 5)] == ["m1"]
    assert requests(engine, "POST", "/_search")[-1].body == {
        "size": 5,
        "_source": ["memory_id"],
        "query": {
            "bool": {
                "filter": [
                    {"term": {"tenant_id": "acme"}},
                    {"term": {"user_id": "alice"}},
                    {"term": {"status": "active"}},
                ],
                "should": [
                    {
                        "multi_match": {
                            "query": "杭州",
                            "fields": ["content", "content.en"],
                            "type": "best_fields",
                        }
                    },
                    {"match": {"content.std": {"query": "杭州", "minimum_should_match": "100%"}}},
                ],
                "minimum_should_match": 1,
            }
        },
    }
    assert index.keyword(ALICE, "   ", 5) == [] and index.knn(ALICE, np.zeros(DIM), 5, "x") == []


def test_states_all_states_and_erase_are_scoped(
    engine: FakeOpenSearch, index: OpenSearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opensearch_index, "PAGE_SIZE", 2)
    for i in range(5):
        index.upsert(rec(f"m{i}"))
    index.upsert(rec("m0", scope=BOB))
    assert index.states(ALICE, ["m1", "absent"]) == {"m1": ProjectionState("m1", 1, rec("m1").content_hash)}
    mget = requests(engine, "POST", "/_mget")[-1]
    assert mget.body == {
        "docs": [
            {"_id": f"{ALICE.key}#m1", "routing": ALICE.key},
            {"_id": f"{ALICE.key}#absent", "routing": ALICE.key},
        ]
    }
    assert [s.memory_id for s in index.all_states(ALICE)] == ["m0", "m1", "m2", "m3", "m4"]
    pages = [r.body for r in requests(engine, "POST", "/_search")]
    assert [p.get("search_after") for p in pages] == [None, ["m1"], ["m3"]]
    assert pages[0]["sort"] == [{"memory_id": "asc"}] and pages[0]["version"] is True
    assert index.erase_scope(ALICE) == 5
    assert requests(engine, "POST", "/_delete_by_query")[-1].body == {
        "query": {"bool": {"filter": [{"term": {"tenant_id": "acme"}}, {"term": {"user_id": "alice"}}]}}
    }
    assert [s.memory_id for s in index.all_states(BOB)] == ["m0"]


def filter_clauses(body: Any) -> list[Any]:
    """Every clause under a ``filter`` key, anywhere in a request body."""
    found: list[Any] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key == "filter" and isinstance(value, list):
                found.extend(value)
            found.extend(filter_clauses(value))
    elif isinstance(body, list):
        for value in body:
            found.extend(filter_clauses(value))
    return found


def test_every_query_carries_the_scope(engine: FakeOpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(rec("m1"))
    index.knn(ALICE, np.ones(DIM), 3, "m")
    index.keyword(ALICE, "Glasgow", 3)
    index.all_states(ALICE)
    index.states(ALICE, ["m1"])
    index.delete(ALICE, "m1", 5)
    index.erase_scope(ALICE)
    for r in engine.requests:
        if r.path.endswith(("/_search", "/_delete_by_query")):
            assert r.params["routing"] == ALICE.key
            clauses = filter_clauses(r.body)
            assert {"term": {"tenant_id": "acme"}} in clauses and {"term": {"user_id": "alice"}} in clauses
        elif "/_doc/" in r.path:
            assert r.params["routing"] == ALICE.key and "TENANT%23acme%23USER%23alice%23" in r.path


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transport_errors_become_store_unavailable(
    engine: FakeOpenSearch, index: OpenSearchIndex, status: int
) -> None:
    index.upsert(rec("m1"))
    engine.fail_next(status)
    with pytest.raises(StoreUnavailable) as caught:
        index.keyword(ALICE, "Glasgow", 5)
    assert caught.value.details["status"] == status and caught.value.__cause__ is not None


def test_score_to_cosine() -> None:
    for cosine in (-1.0, -0.3, 0.0, 0.42, 1.0):
        assert dsl.score_to_cosine((1 + cosine) / 2) == pytest.approx(cosine)
        assert dsl.score_to_cosine(1 / (2 - cosine), "nmslib") == pytest.approx(cosine)


# ------------------------------------------------------------------ realistic responses, replayed


class ReplayConnection(Connection):
    """Answers each request with the next (status, fixture) queued for it."""

    script: list[tuple[str, str, int, str]]  # (method, path suffix, status, fixture file or "")

    def perform_request(
        self,
        method: str,
        url: str,
        params: Any = None,
        body: Any = None,
        timeout: Any = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> Any:  # type: ignore[override]
        want_method, suffix, status, fixture = self.script.pop(0)
        assert (method, url.endswith(suffix)) == (want_method, True), (method, url)
        raw = (FIXTURES / fixture).read_text() if fixture else ""
        if not 200 <= status < 300 and status not in (ignore or ()):
            self._raise_error(status, raw, "application/json")
        return status, {"content-type": "application/json"}, raw


def replaying(script: list[tuple[str, str, int, str]]) -> OpenSearchIndex:
    conn = type("Scripted", (ReplayConnection,), {"script": script})
    index = OpenSearchIndex(
        lambda: OpenSearch(hosts=[{"host": "x", "port": 443}], connection_class=conn, max_retries=0),
        index=INDEX,
        dimension=DIM,
    )
    index._ready = True  # the index exists: skip the template / create round trip
    return index


def test_parses_a_knn_response() -> None:
    index = replaying([("POST", "/_search", 200, "knn_search.json")])
    hits = index.knn(Scope("acme", "alice"), np.ones(DIM), 3, "m")
    assert [h.memory_id for h in hits] == [
        "01JH2K9Q8M3V5X7Z9B1D3F5H7K",
        "01JH2K9Q8M3V5X7Z9B1D3F5H7M",
        "01JH2K9Q8M3V5X7Z9B1D3F5H7P",
    ]
    assert [h.score for h in hits] == pytest.approx([0.9624691, 0.5, 0.0])


def test_parses_a_bm25_response_keeping_raw_scores() -> None:
    index = replaying([("POST", "/_search", 200, "bm25_search.json")])
    assert [h.score for h in index.keyword(ALICE, "glasgow", 5)] == pytest.approx([3.2876716, 1.1507283])


def test_parses_a_conflict_then_the_stored_version() -> None:
    record = replace(rec("01JH2K9Q8M3V5X7Z9B1D3F5H7K"), version=3)
    index = replaying([("PUT", "H7K", 409, "version_conflict.json"), ("GET", "H7K", 200, "get_found.json")])
    assert index.upsert(record) is ProjectionOutcome.CONFLICT  # stored hash differs at the same version
    same = replace(record, content_hash="9f2c1d7e0b4a4c52a8e3f1d2c3b4a596")
    index = replaying([("PUT", "H7K", 409, "version_conflict.json"), ("GET", "H7K", 200, "get_found.json")])
    assert index.upsert(same) is ProjectionOutcome.STALE


def test_parses_mget_delete_not_found_and_rejections() -> None:
    index = replaying([("POST", "/_mget", 200, "mget.json")])
    assert index.states(ALICE, ["01JH2K9Q8M3V5X7Z9B1D3F5H7K", "01JH2K9Q8M3V5X7Z9B1D3F5H7Z"]) == {
        "01JH2K9Q8M3V5X7Z9B1D3F5H7K": ProjectionState(
            "01JH2K9Q8M3V5X7Z9B1D3F5H7K", 3, "9f2c1d7e0b4a4c52a8e3f1d2c3b4a596"
        )
    }
    index = replaying([("DELETE", "H7K", 404, "delete_not_found.json")])
    assert index.delete(ALICE, "01JH2K9Q8M3V5X7Z9B1D3F5H7K", 4) is ProjectionOutcome.STALE
    index = replaying([("POST", "/_search", 429, "too_many_requests.json")])
    with pytest.raises(StoreUnavailable) as caught:
        index.keyword(ALICE, "glasgow", 5)
    assert caught.value.details["status"] == 429


def test_a_deployed_stack_leaves_the_index_to_the_deploy() -> None:
    """``AGENTMEM_OPENSEARCH_CREATE_INDEX=false``: no template or index request on cold start."""
    engine = FakeOpenSearch()
    engine.indices["deployed"] = Index("deployed", {})
    index = OpenSearchIndex(lambda: fake_client(engine), index="deployed", dimension=4, create_index=False)
    index.states(Scope("t", "u"), ["m1"])
    assert [r.path for r in engine.requests if "_index_template" in r.path or r.method == "PUT"] == []


def test_the_index_is_created_with_the_configured_replicas() -> None:
    engine = FakeOpenSearch()
    index = OpenSearchIndex(lambda: fake_client(engine), index="single", dimension=4, replicas=0)
    index.ensure_index()
    created = next(r for r in engine.requests if r.method == "PUT" and r.path == "/single")
    assert created.body["settings"]["index"]["number_of_replicas"] == 0
    template = next(r for r in engine.requests if "_index_template" in r.path)
    assert template.body["template"]["settings"]["index"]["number_of_replicas"] == 0


def test_an_index_made_before_the_reading_field_gets_it_and_serves_readings() -> None:
    """A cold start on an index an older release made (strict mapping without ``reading``) puts
    the field first: the documents it writes carry their reading, the old ones read as unknown."""
    engine = FakeOpenSearch()
    old = dsl.index_body(4)
    for name in dsl.ADDED_FIELDS:
        del old["mappings"]["properties"][name]
    engine.indices["older"] = Index("older", old)
    index = OpenSearchIndex(lambda: fake_client(engine), index="older", dimension=4, refresh=True)
    index.ensure_index()
    assert [r.method for r in engine.requests if r.path == "/older/_mapping"] == ["GET", "PUT"]
    assert index.upsert(rec("m1")) is ProjectionOutcome.APPLIED
    assert index.readings(ALICE, ["m1"])["m1"].keys == frozenset({"residence"})
    assert index.stating(ALICE, ["residence"], 5) == ["m1"]
