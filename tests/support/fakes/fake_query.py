"""Documents, indices and the query evaluator of the fake OpenSearch (see :mod:`.fake_opensearch`):
``bool`` (filter / must / must_not / should with OpenSearch's ``minimum_should_match`` default),
``term``, ``terms``, ``match`` (with ``minimum_should_match``), ``multi_match`` (best fields),
``match_all`` and ``knn`` (exact cosine over the documents passing its ``filter``, scored
``(1 + cos) / 2`` like the Lucene engine's cosinesimil). Unknown clauses raise 400
``parsing_exception``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from support.fakes.fake_analysis import FieldStats, analyze


class FakeError(Exception):  # becomes an HTTP error response
    """An OpenSearch error response (status, type, reason)."""

    def __init__(self, status: int, kind: str, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.status, self.kind, self.reason, self.extra = status, kind, reason, extra

    def body(self) -> dict[str, Any]:
        cause = {"type": self.kind, "reason": self.reason, **self.extra}
        return {"error": {"root_cause": [cause], **cause}, "status": self.status}


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    params: dict[str, str]
    body: Any


@dataclass
class Doc:
    id: str
    routing: str | None
    source: dict[str, Any]
    version: int
    seq_no: int


@dataclass
class Index:
    name: str
    body: dict[str, Any]
    docs: dict[str, Doc] = field(default_factory=dict)
    tombstones: dict[str, int] = field(default_factory=dict)

    @property
    def mappings(self) -> dict[str, Any]:
        return dict(self.body.get("mappings") or {})

    def properties(self) -> dict[str, Any]:
        return dict(self.mappings.get("properties") or {})

    def analyzer(self, path: str) -> str:
        """The analyzer of a text field or sub-field (``content`` / ``content.en``)."""
        base, _, sub = path.partition(".")
        spec = self.properties().get(base) or {}
        if sub:
            spec = (spec.get("fields") or {}).get(sub) or {}
        if spec.get("type") != "text":
            raise FakeError(400, "query_shard_exception", f"field [{path}] is not a text field")
        return str(spec.get("analyzer", "standard"))

    def analysis(self) -> dict[str, Any]:
        settings = self.body.get("settings") or {}
        return dict(settings.get("analysis") or (settings.get("index") or {}).get("analysis") or {})

    def tokens(self, path: str, text: str) -> list[str]:
        try:
            return analyze(self.analyzer(path), text, self.analysis())
        except ValueError as exc:
            raise FakeError(400, "illegal_argument_exception", str(exc)) from exc


def sort_value(doc: Doc, *, name: str) -> Any:
    return field_values(doc, name)[0]


def field_values(doc: Doc, name: str) -> list[Any]:
    value = doc.source.get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def text_stats(index: Index, name: str) -> FieldStats:
    base = name.split(".")[0]
    return FieldStats({d.id: index.tokens(name, str(d.source.get(base, ""))) for d in index.docs.values()})


def match(index: Index, name: str, spec: Any, candidates: dict[str, Doc]) -> dict[str, float]:
    query = spec if isinstance(spec, str) else spec["query"]
    msm = None if isinstance(spec, str) else spec.get("minimum_should_match")
    tokens = index.tokens(name, str(query))
    if not tokens:
        return {}
    needed = minimum(msm, len(tokens), default=1)
    stats = text_stats(index, name)
    scores: dict[str, float] = {}
    for doc_id in candidates:
        score, matched = stats.score(doc_id, tokens)
        if matched >= needed and matched > 0:
            scores[doc_id] = score
    return scores


def evaluate(index: Index, query: dict[str, Any], candidates: dict[str, Doc]) -> dict[str, float]:
    ((kind, spec),) = query.items()
    if kind == "match_all":
        return dict.fromkeys(candidates, 1.0)
    if kind in ("term", "terms"):
        ((name, wanted),) = spec.items()
        values = wanted if kind == "terms" else [wanted["value"] if isinstance(wanted, dict) else wanted]
        return {i: 1.0 for i, d in candidates.items() if set(field_values(d, name)) & set(values)}
    if kind == "match":
        ((name, inner),) = spec.items()
        return match(index, name, inner, candidates)
    if kind == "multi_match":
        if spec.get("type", "best_fields") != "best_fields":
            raise FakeError(400, "parsing_exception", "the fake serves best_fields only")
        best: dict[str, float] = {}
        for name in spec["fields"]:
            for doc_id, score in match(index, name, {"query": spec["query"]}, candidates).items():
                best[doc_id] = max(best.get(doc_id, 0.0), score)
        return best
    if kind == "bool":
        return _bool(index, spec, candidates)
    if kind == "knn":
        return _knn(index, spec, candidates)
    if kind == "script_score":
        return _script_score(index, spec, candidates)
    raise FakeError(400, "parsing_exception", f"unknown query [{kind}]")


COSINE_SCRIPT = "1.0 + cosineSimilarity(params.query_value, doc[params.field])"


def _script_score(index: Index, spec: dict[str, Any], candidates: dict[str, Doc]) -> dict[str, float]:
    """The k-NN plugin's Painless ``cosineSimilarity`` offset by 1, the one script the adapter
    sends; any other script is refused. A document without a vector is an error in OpenSearch
    (``doc[field]`` of a missing value); the fake refuses it the same way."""
    script = spec.get("script") or {}
    if script.get("source") != COSINE_SCRIPT:
        raise FakeError(400, "illegal_argument_exception", "the fake serves the cosineSimilarity script only")
    params = script.get("params") or {}
    name = params["field"]
    if index.properties().get(name, {}).get("type") != "knn_vector":
        raise FakeError(400, "script_exception", f"field [{name}] is not knn_vector type")
    hits = evaluate(index, spec.get("query") or {"match_all": {}}, candidates)
    query = np.asarray(params["query_value"], dtype=np.float64)
    scores: dict[str, float] = {}
    for doc_id in hits:
        vector = candidates[doc_id].source.get(name)
        if vector is None:
            raise FakeError(400, "script_exception", f"document [{doc_id}] has no value for [{name}]")
        v = np.asarray(vector, dtype=np.float64)
        denominator = float(np.linalg.norm(v) * np.linalg.norm(query)) or 1.0
        scores[doc_id] = 1.0 + float(v @ query) / denominator
    return scores


def _bool(index: Index, spec: dict[str, Any], candidates: dict[str, Doc]) -> dict[str, float]:
    keep = dict(candidates)
    for clause in clauses(spec.get("filter")):
        hits = evaluate(index, clause, keep)
        keep = {i: d for i, d in keep.items() if i in hits}
    scores = dict.fromkeys(keep, 0.0)
    for clause in clauses(spec.get("must")):
        hits = evaluate(index, clause, keep)
        keep = {i: d for i, d in keep.items() if i in hits}
        scores = {i: scores[i] + hits[i] for i in keep}
    for clause in clauses(spec.get("must_not")):
        hits = evaluate(index, clause, keep)
        keep = {i: d for i, d in keep.items() if i not in hits}
        scores = {i: scores[i] for i in keep}
    should = clauses(spec.get("should"))
    default = 1 if should and not spec.get("must") and not spec.get("filter") else 0
    needed = minimum(spec.get("minimum_should_match"), len(should), default=default)
    matched = dict.fromkeys(keep, 0)
    for clause in should:
        for doc_id, score in evaluate(index, clause, keep).items():
            matched[doc_id] += 1
            scores[doc_id] += score
    return {i: scores[i] for i in keep if matched[i] >= needed}


def _knn(index: Index, spec: dict[str, Any], candidates: dict[str, Doc]) -> dict[str, float]:
    ((name, inner),) = spec.items()
    if index.properties().get(name, {}).get("type") != "knn_vector":
        raise FakeError(400, "query_shard_exception", f"field [{name}] is not knn_vector type")
    keep = candidates
    if inner.get("filter"):
        hits = evaluate(index, inner["filter"], candidates)
        keep = {i: d for i, d in candidates.items() if i in hits}
    query = np.asarray(inner["vector"], dtype=np.float64)
    query = query / (np.linalg.norm(query) or 1.0)
    scored: list[tuple[float, int, str]] = []
    for doc_id, doc in keep.items():
        vector = doc.source.get(name)
        if vector is None:
            continue
        v = np.asarray(vector, dtype=np.float64)
        cosine = float(v @ query / (np.linalg.norm(v) or 1.0))
        scored.append(((1.0 + cosine) / 2.0, doc.seq_no, doc_id))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return {doc_id: score for score, _, doc_id in scored[: int(inner["k"])]}


def clauses(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def minimum(value: Any, clauses: int, *, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, str) and value.endswith("%"):
        return int(clauses * int(value[:-1]) / 100)
    return int(value)
