"""The OpenSearch documents and query DSL the search adapter sends — pure functions, one place to
read (and test) exactly what goes over the wire.

Index (docs/aws.md): one document per active memory, ``_id = <scope key>#<memory id>``, routed by
the scope key (``_routing`` is required, so a request without it fails instead of scattering).
``content`` is analysed with ``cjk`` (bigrams for Chinese/Japanese/Korean, English stopwords), with
sub-fields ``content.en`` (``agentmem_en``: the cjk chain plus English possessive, stopwords and
Porter stemming — the built-in ``english`` analyzer would cut CJK text into single characters and
match on any shared one) and ``content.std`` (``standard``: single CJK characters). ``embedding`` is a ``knn_vector`` (HNSW, Lucene engine,
``cosinesimil``); tenant, user, status, category, tags, model, key, memory id and hash are
keywords.

Queries: every one is built here around :func:`scope_filter` — callers pass a Scope, never a
filter. k-NN uses efficient filtering (the ``filter`` inside the ``knn`` clause: tenant, user,
status=active, model). BM25 is ``multi_match`` (best fields) over ``content`` and
``content.en``, plus ``content.std`` when *every* query word is present (single-character CJK
queries; it never adds noise from stray characters).

Scores: the Lucene engine reports ``s = (1 + cos) / 2`` for cosinesimil, so :func:`score_to_cosine`
returns ``2s - 1`` (callers get the cosine the embedded index gives); BM25 scores are raw, and the
recall service normalises them by the top hit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentmem.adapters import record_json
from agentmem.adapters.readings import parse_reading, reading_doc, rules_fingerprint
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.port_types import Reading

KNN_ENGINE = "lucene"
SPACE_TYPE = "cosinesimil"
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
SOURCE_FIELDS = ["memory_id", "version", "content_hash"]
ADDED_FIELDS: dict[str, Any] = {
    # the attribute rules' reading of the content (agentmem.adapters.readings), read back by id
    # only: kept in _source, not indexed
    "reading": {"type": "object", "enabled": False},
    # the same reading's keys, each as "<rules fingerprint>:<key>", for stating()
    "reading_keys": {"type": "keyword"},
    # the record as indexed (agentmem.adapters.record_json.card), read back by id only (cards())
    "card": {"type": "object", "enabled": False},
}
"""Fields added to the mapping after indexes were deployed: :func:`index_mappings` has them, and
an existing index gets them through ``PUT <index>/_mapping`` (:func:`missing_fields`)."""


def document_id(scope: Scope, memory_id: str) -> str:
    return f"{scope.key}#{memory_id}"


def routing(scope: Scope) -> str:
    return scope.key


ENGLISH_ANALYZER = "agentmem_en"


def index_settings() -> dict[str, Any]:
    return {
        "index": {"knn": True, "number_of_shards": 2, "number_of_replicas": 1, "refresh_interval": "1s"},
        "analysis": {
            "filter": {
                "agentmem_english_possessive": {"type": "stemmer", "language": "possessive_english"},
                "agentmem_english_stop": {"type": "stop", "stopwords": "_english_"},
            },
            "analyzer": {
                ENGLISH_ANALYZER: {
                    "type": "custom",
                    "tokenizer": "standard",
                    "filter": [
                        "cjk_width",
                        "lowercase",
                        "cjk_bigram",
                        "agentmem_english_possessive",
                        "agentmem_english_stop",
                        "porter_stem",
                    ],
                }
            },
        },
    }


def index_mappings(dimension: int) -> dict[str, Any]:
    keyword = {"type": "keyword"}
    return {
        "dynamic": "strict",
        "_routing": {"required": True},
        "properties": {
            "tenant_id": keyword,
            "user_id": keyword,
            "memory_id": keyword,
            "status": keyword,
            "category": keyword,
            "tags": keyword,
            "model": keyword,
            "key": keyword,
            "content_hash": keyword,
            "version": {"type": "long"},
            "importance": {"type": "float"},
            "created_at": {"type": "date"},
            "updated_at": {"type": "date"},
            "content": {
                "type": "text",
                "analyzer": "cjk",
                "fields": {
                    "en": {"type": "text", "analyzer": ENGLISH_ANALYZER},
                    "std": {"type": "text", "analyzer": "standard"},
                },
            },
            "embedding": {
                "type": "knn_vector",
                "dimension": dimension,
                "method": {
                    "name": "hnsw",
                    "engine": KNN_ENGINE,
                    "space_type": SPACE_TYPE,
                    "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
                },
            },
            **ADDED_FIELDS,
        },
    }


def missing_fields(mapping: dict[str, Any]) -> dict[str, Any]:
    """The :data:`ADDED_FIELDS` that a stored mapping (``GET <index>/_mapping``'s, for one
    index) lacks: the body of the ``PUT <index>/_mapping`` that brings it up to date, or {}."""
    stored = (mapping.get("mappings") or {}).get("properties") or {}
    missing = {name: spec for name, spec in ADDED_FIELDS.items() if name not in stored}
    return {"properties": missing} if missing else {}


def index_body(dimension: int) -> dict[str, Any]:
    """``PUT <index>`` body."""
    return {"settings": index_settings(), "mappings": index_mappings(dimension)}


def index_template(index: str, dimension: int) -> dict[str, Any]:
    """``PUT _index_template/<index>``: the same settings for ``<index>`` and its rebuilds
    (``<index>-v2``, ...), so a reindex never runs on dynamic mappings."""
    return {
        "index_patterns": [index, f"{index}-*"],
        "priority": 100,
        "template": {"settings": index_settings(), "mappings": index_mappings(dimension)},
        "_meta": {"managed_by": "agentmem", "dimension": dimension},
    }


def document(record: MemoryRecord, dimension: int) -> dict[str, Any]:
    """The indexed form of an active record; a vector of another dimension is left out (the
    record stays findable by BM25)."""
    doc: dict[str, Any] = {
        "tenant_id": record.scope.tenant_id,
        "user_id": record.scope.user_id,
        "memory_id": record.memory_id,
        "status": record.status.value,
        "category": record.category.value,
        "tags": list(record.tags),
        "version": record.version,
        "content_hash": record.content_hash,
        "importance": record.importance,
        "content": record.content,
    }
    if record.key is not None:
        doc["key"] = record.key
    if record.created_at is not None:
        doc["created_at"] = record.created_at.isoformat()
    if record.updated_at is not None:
        doc["updated_at"] = record.updated_at.isoformat()
    if record.embedding is not None and record.embedding_model and len(record.embedding) == dimension:
        doc["embedding"] = [float(x) for x in record.embedding]
        doc["model"] = record.embedding_model
    if (reading := reading_doc(record)) is not None:
        fingerprint, keys, pinned = reading
        doc["reading"] = {"rules": fingerprint, "keys": keys, "pinned": pinned}
        doc["reading_keys"] = [f"{fingerprint}:{key}" for key in keys]
    doc["card"] = json.loads(record_json.card(record))
    return doc


def parse_card(scope: Scope, source: dict[str, Any]) -> MemoryRecord | None:
    """The record a document's ``card`` holds (:func:`document`); None without one, or when it
    does not parse (a document indexed by another release): the caller reads the store."""
    card = source.get("card")
    if not isinstance(card, dict):
        return None
    try:
        return record_json.decode(scope, json.dumps(card))
    except (KeyError, TypeError, ValueError):
        return None


def stating_query(scope: Scope, keys: Sequence[str], k: int) -> dict[str, Any] | None:
    """The ``k`` newest active documents whose reading by the current rules has one of ``keys``;
    None when there is nothing to ask."""
    fingerprint = rules_fingerprint()
    if not keys or k <= 0 or not fingerprint:
        return None
    return {
        "size": k,
        "_source": ["memory_id"],
        "sort": [{"memory_id": "desc"}],
        "query": {
            "bool": {
                "filter": [
                    *active_filter(scope),
                    {"terms": {"reading_keys": [f"{fingerprint}:{key}" for key in sorted(set(keys))]}},
                ]
            }
        },
    }


def listing_query(scope: Scope, category: str, limit: int) -> dict[str, Any]:
    """The ``limit`` newest active documents of ``category``, with their cards."""
    return {
        "size": limit,
        "_source": ["memory_id", "card"],
        "sort": [{"memory_id": "desc"}],
        "query": {"bool": {"filter": [*active_filter(scope), {"term": {"category": category}}]}},
    }


def parse_document_reading(source: dict[str, Any]) -> Reading | None:
    """The reading a document's ``_source`` keeps (:func:`document`), by the rules that run now."""
    kept = source.get("reading")
    if not isinstance(kept, dict):
        return None
    return parse_reading([kept.get("rules"), kept.get("keys"), kept.get("pinned")])


def scope_filter(scope: Scope) -> list[dict[str, Any]]:
    """The filter clauses every query carries."""
    return [{"term": {"tenant_id": scope.tenant_id}}, {"term": {"user_id": scope.user_id}}]


def active_filter(scope: Scope) -> list[dict[str, Any]]:
    return [*scope_filter(scope), {"term": {"status": Status.ACTIVE.value}}]


def knn_query(scope: Scope, vector: Sequence[float], k: int, model: str) -> dict[str, Any]:
    """Approximate k-NN with efficient filtering on scope, status and model."""
    return {
        "size": k,
        "_source": ["memory_id"],
        "query": {
            "knn": {
                "embedding": {
                    "vector": [float(x) for x in vector],
                    "k": k,
                    "filter": {"bool": {"filter": [*active_filter(scope), {"term": {"model": model}}]}},
                }
            }
        },
    }


def similarity_query(
    scope: Scope, vector: Sequence[float], memory_ids: Sequence[str], model: str
) -> dict[str, Any]:
    """Exact cosine of ``vector`` with the listed documents' vectors, through the k-NN plugin's
    Painless ``cosineSimilarity`` (offset by 1: a script score must not be negative). Only the
    scope's active documents of ``model`` count; the ids are a filter, not a search."""
    return {
        "size": len(memory_ids),
        "_source": ["memory_id"],
        "query": {
            "script_score": {
                "query": {
                    "bool": {
                        "filter": [
                            *active_filter(scope),
                            {"term": {"model": model}},
                            {"terms": {"memory_id": list(memory_ids)}},
                        ]
                    }
                },
                "script": {
                    "source": "1.0 + cosineSimilarity(params.query_value, doc[params.field])",
                    "params": {"field": "embedding", "query_value": [float(x) for x in vector]},
                },
            }
        },
    }


def keyword_query(scope: Scope, text: str, k: int) -> dict[str, Any]:
    """BM25 over the CJK-aware and stemmed content fields, scoped and active only."""
    return {
        "size": k,
        "_source": ["memory_id"],
        "query": {
            "bool": {
                "filter": active_filter(scope),
                "should": [
                    {
                        "multi_match": {
                            "query": text,
                            "fields": ["content", "content.en"],
                            "type": "best_fields",
                        }
                    },
                    {"match": {"content.std": {"query": text, "minimum_should_match": "100%"}}},
                ],
                "minimum_should_match": 1,
            }
        },
    }


def scope_states_query(scope: Scope, page_size: int, after: list[Any] | None) -> dict[str, Any]:
    """One page of every document of the scope, by memory id (``search_after``)."""
    body: dict[str, Any] = {
        "size": page_size,
        "_source": SOURCE_FIELDS,
        "version": True,
        "sort": [{"memory_id": "asc"}],
        "query": {"bool": {"filter": scope_filter(scope)}},
    }
    if after is not None:
        body["search_after"] = after
    return body


def scope_delete_query(scope: Scope) -> dict[str, Any]:
    return {"query": {"bool": {"filter": scope_filter(scope)}}}


def score_to_cosine(score: float, engine: str = KNN_ENGINE) -> float:
    """Invert the k-NN plugin's cosinesimil score: Lucene and Faiss report ``(1 + cos) / 2``,
    nmslib ``1 / (2 - cos)``."""
    if engine == "nmslib":
        return 2.0 - 1.0 / score if score > 0 else -1.0
    return max(-1.0, min(1.0, 2.0 * score - 1.0))
