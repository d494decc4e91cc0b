"""An in-process OpenSearch for offline tests: the REST subset the search adapter uses, with the
engine's semantics where the adapter depends on them, and realistic response bodies.

Served: ``PUT _index_template/<name>``, ``HEAD|PUT <index>``, ``PUT|GET|DELETE <index>/_doc/<id>``
(external / external_gte / internal versions, delete tombstones kept until :meth:`FakeOpenSearch.gc`
— i.e. tests run "within ``index.gc_deletes``"), ``<index>/_search`` (``bool`` / ``term`` /
``terms`` / ``match`` / ``multi_match`` / ``match_all`` / ``knn`` with ``filter`` / ``script_score``
(the cosineSimilarity script only); ``sort`` +
``search_after``; ``_source`` filtering; ``version``), ``<index>/_msearch`` (NDJSON header / body pairs, a
failed search answered in its place), ``<index>/_mget`` and
``<index>/_delete_by_query`` (internal-version deletes). Mappings are enforced where the adapter
relies on them: ``dynamic: strict``, ``_routing.required``, ``knn_vector`` dimension. Anything
else answers 400 ``parsing_exception`` / ``illegal_argument_exception`` — the fake never guesses.

Not modelled: shards and their separate BM25 statistics, refresh (writes are visible at once),
HNSW approximation (k-NN is exact), Lucene's lossy length norms. :func:`fake_client` returns a
real ``opensearchpy.OpenSearch`` whose connection calls the fake, so the client's own URL
building, serialisation and error classes are exercised; :attr:`FakeOpenSearch.requests`
records every request for assertions on the DSL.
"""

from __future__ import annotations

import itertools
import json
from functools import partial
from typing import Any
from urllib.parse import unquote

from opensearchpy import OpenSearch
from opensearchpy.connection import Connection

from support.fakes.fake_query import (
    Doc,
    FakeError,
    Index,
    RecordedRequest,
    evaluate,
    field_values,
    sort_value,
)

__all__ = ["FakeConnection", "FakeOpenSearch", "RecordedRequest", "fake_client"]


def _shards() -> dict[str, int]:
    return {"total": 2, "successful": 1, "failed": 0}


class FakeOpenSearch:
    """The engine: state, request log and fault injection."""

    def __init__(self) -> None:
        self.indices: dict[str, Index] = {}
        self.templates: dict[str, dict[str, Any]] = {}
        self.requests: list[RecordedRequest] = []
        self._seq = itertools.count()
        self._faults: list[tuple[int, str]] = []

    def fail_next(self, status: int, kind: str = "es_rejected_execution_exception") -> None:
        """The next request answers ``status`` (e.g. 429 or 503) instead of being served."""
        self._faults.append((status, kind))

    def gc(self) -> None:
        """Forget delete tombstones, as OpenSearch does after ``index.gc_deletes``."""
        for index in self.indices.values():
            index.tombstones.clear()

    # ------------------------------------------------------------------ dispatch

    def handle(self, method: str, path: str, params: dict[str, str], body: Any) -> tuple[int, Any]:
        self.requests.append(RecordedRequest(method, path, dict(params), body))
        try:
            if self._faults:
                status, kind = self._faults.pop(0)
                raise FakeError(status, kind, "injected fault")
            return self._route(method, [unquote(p) for p in path.strip("/").split("/")], params, body or {})
        except FakeError as exc:
            return exc.status, exc.body()

    def _route(
        self, method: str, parts: list[str], params: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        if parts == ["_bulk"] and method in ("POST", "PUT"):
            return 200, self._bulk(body)  # type: ignore[arg-type]  # NDJSON: a list of lines
        if parts[0] == "_index_template" and len(parts) == 2 and method == "PUT":
            self.templates[parts[1]] = body
            return 200, {"acknowledged": True}
        name = parts[0]
        if len(parts) == 1:
            if method == "HEAD":
                return (200 if name in self.indices else 404), None
            if method == "PUT":
                if name in self.indices:
                    raise FakeError(
                        400,
                        "resource_already_exists_exception",
                        f"index [{name}/x] already exists",
                        index=name,
                    )
                self.indices[name] = Index(name, body)
                return 200, {"acknowledged": True, "shards_acknowledged": True, "index": name}
        index = self.indices.get(name)
        if index is None:
            raise FakeError(404, "index_not_found_exception", f"no such index [{name}]", index=name)
        if len(parts) == 3 and parts[1] == "_doc":
            doc_id = parts[2]
            if method in ("PUT", "POST"):
                return self._index_doc(index, doc_id, params, body)
            if method == "GET":
                return self._get_doc(index, doc_id, params)
            if method == "DELETE":
                return self._delete_doc(index, doc_id, params)
        if len(parts) == 2 and parts[1] == "_mapping" and method == "GET":
            return 200, {name: {"mappings": index.mappings}}
        if len(parts) == 2 and parts[1] == "_mapping" and method in ("PUT", "POST"):
            mappings = index.body.setdefault("mappings", {})
            properties = mappings.setdefault("properties", {})
            for field_name, spec in (body.get("properties") or {}).items():
                if field_name in properties and properties[field_name] != spec:
                    raise FakeError(
                        400, "illegal_argument_exception", f"mapper [{field_name}] cannot be changed"
                    )
                properties[field_name] = spec
            return 200, {"acknowledged": True}
        if len(parts) == 2 and parts[1] == "_search" and method in ("GET", "POST"):
            return 200, self._search(index, body)
        if len(parts) == 2 and parts[1] == "_msearch" and method in ("GET", "POST"):
            return 200, self._msearch(index, body)  # type: ignore[arg-type]  # NDJSON: a list of lines
        if len(parts) == 2 and parts[1] == "_mget" and method in ("GET", "POST"):
            return 200, self._mget(index, body, params)
        if len(parts) == 2 and parts[1] == "_delete_by_query" and method == "POST":
            return 200, self._delete_by_query(index, body)
        raise FakeError(
            400, "illegal_argument_exception", f"{method} /{'/'.join(parts)} not served by the fake"
        )

    # ------------------------------------------------------------------ documents

    @staticmethod
    def _routing(index: Index, doc_id: str, params: dict[str, str]) -> str | None:
        routing = params.get("routing")
        if routing is None and (index.mappings.get("_routing") or {}).get("required"):
            raise FakeError(
                400, "routing_missing_exception", f"routing is required for [{index.name}]/[{doc_id}]"
            )
        return routing

    @staticmethod
    def _check_versions(index: Index, doc_id: str, params: dict[str, str]) -> tuple[int | None, int | None]:
        """(requested version or None, current version incl. tombstone)."""
        doc = index.docs.get(doc_id)
        current = doc.version if doc is not None else index.tombstones.get(doc_id)
        version_type = params.get("version_type", "internal")
        if "version" not in params:
            return None, current
        wanted = int(params["version"])
        if version_type not in ("external", "external_gte"):
            raise FakeError(
                400, "action_request_validation_exception", f"version type [{version_type}] not served"
            )
        refused = current is not None and (
            wanted <= current if version_type == "external" else wanted < current
        )
        if refused:
            raise FakeError(
                409,
                "version_conflict_engine_exception",
                f"[{doc_id}]: version conflict, current version [{current}] is higher or equal to the one provided [{wanted}]",
                index=index.name,
                shard="0",
                index_uuid="fAkEuUiD0000000000000A",
            )
        return wanted, current

    def _validate(self, index: Index, source: dict[str, Any]) -> None:
        properties = index.properties()
        strict = index.mappings.get("dynamic") == "strict"
        for name, value in source.items():
            spec = properties.get(name)
            if spec is None:
                if strict:
                    raise FakeError(
                        400,
                        "strict_dynamic_mapping_exception",
                        f"mapping set to strict, dynamic introduction of [{name}] within [_doc] is not allowed",
                    )
                continue
            if spec.get("type") == "knn_vector" and len(value) != int(spec["dimension"]):
                raise FakeError(
                    400,
                    "mapper_parsing_exception",
                    f"Vector dimension mismatch. Expected: {spec['dimension']}, Given: {len(value)}",
                )

    def _meta(self, index: Index, doc: Doc) -> dict[str, Any]:
        return {
            "_index": index.name,
            "_id": doc.id,
            "_version": doc.version,
            "_seq_no": doc.seq_no,
            "_primary_term": 1,
        }

    def _index_doc(
        self, index: Index, doc_id: str, params: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        routing = self._routing(index, doc_id, params)
        wanted, current = self._check_versions(index, doc_id, params)
        self._validate(index, body)
        created = doc_id not in index.docs
        version = wanted if wanted is not None else (current or 0) + 1
        doc = Doc(doc_id, routing, dict(body), version, next(self._seq))
        index.docs[doc_id] = doc
        index.tombstones.pop(doc_id, None)
        result = {
            **self._meta(index, doc),
            "result": "created" if created else "updated",
            "_shards": _shards(),
        }
        return (201 if created else 200), result

    @staticmethod
    def _source(source: dict[str, Any], includes: Any) -> dict[str, Any] | None:
        if includes is False:
            return None
        if isinstance(includes, str):
            includes = [p for p in includes.split(",") if p]
        if isinstance(includes, list) and includes:
            return {k: v for k, v in source.items() if k in includes}
        return dict(source)

    def _get_doc(self, index: Index, doc_id: str, params: dict[str, str]) -> tuple[int, Any]:
        self._routing(index, doc_id, params)
        doc = index.docs.get(doc_id)
        if doc is None:
            return 404, {"_index": index.name, "_id": doc_id, "found": False}
        out = {
            **self._meta(index, doc),
            "found": True,
            "_source": self._source(doc.source, params.get("_source_includes")),
        }
        if doc.routing is not None:
            out["_routing"] = doc.routing
        return 200, out

    def _delete_doc(self, index: Index, doc_id: str, params: dict[str, str]) -> tuple[int, Any]:
        self._routing(index, doc_id, params)
        wanted, current = self._check_versions(index, doc_id, params)
        tombstone = wanted if wanted is not None else (current or 0) + 1
        doc = index.docs.pop(doc_id, None)
        index.tombstones[doc_id] = tombstone
        body = {
            "_index": index.name,
            "_id": doc_id,
            "_version": tombstone,
            "result": "deleted" if doc is not None else "not_found",
            "_shards": _shards(),
            "_seq_no": next(self._seq),
            "_primary_term": 1,
        }
        return (200 if doc is not None else 404), body

    def _bulk(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        """``_bulk``: each action served like its single request; a failed item fails alone."""
        items: list[dict[str, Any]] = []
        pending = list(lines)
        while pending:
            action, meta = next(iter(pending.pop(0).items()))
            source = pending.pop(0) if action == "index" else {}
            params = {k: str(v) for k, v in meta.items() if not k.startswith("_")}
            try:
                index = self.indices.get(meta["_index"])
                if index is None:
                    raise FakeError(404, "index_not_found_exception", f"no such index [{meta['_index']}]")
                handler = self._index_doc if action == "index" else self._delete_doc
                args = (index, str(meta["_id"]), params) + ((source,) if action == "index" else ())
                status, reply = handler(*args)
            except FakeError as exc:
                status, reply = exc.status, exc.body()
            items.append({action: {**reply, "status": status}})
        errors = any(not 200 <= next(iter(i.values()))["status"] < 300 for i in items)
        return {"took": 1, "errors": errors, "items": items}

    def _mget(self, index: Index, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        out = []
        for spec in body.get("docs", []):
            doc_id = str(spec["_id"])
            self._routing(
                index, doc_id, {k: v for k, v in {"routing": spec.get("routing")}.items() if v is not None}
            )
            doc = index.docs.get(doc_id)
            if doc is None:
                out.append({"_index": index.name, "_id": doc_id, "found": False})
                continue
            out.append(
                {
                    **self._meta(index, doc),
                    "found": True,
                    "_source": self._source(doc.source, params.get("_source_includes")),
                }
            )
        return {"docs": out}

    def _search(self, index: Index, body: dict[str, Any]) -> dict[str, Any]:
        scores = evaluate(index, body.get("query") or {"match_all": {}}, index.docs)
        docs = [index.docs[i] for i in scores]
        sort = body.get("sort")
        if sort:
            keys = [next(iter(s.items())) if isinstance(s, dict) else (s, "asc") for s in sort]
            for name, order in reversed(keys):
                docs.sort(key=partial(sort_value, name=name), reverse=order == "desc")
            after = body.get("search_after")
            if after is not None:
                docs = [d for d in docs if [field_values(d, n)[0] for n, _ in keys] > list(after)]
        else:
            docs.sort(key=lambda d: (-scores[d.id], d.seq_no))
        size = int(body.get("size", 10))
        hits = []
        for doc in docs[:size]:
            hit: dict[str, Any] = {
                "_index": index.name,
                "_id": doc.id,
                "_score": None if sort else scores[doc.id],
            }
            if doc.routing is not None:
                hit["_routing"] = doc.routing
            if body.get("version"):
                hit["_version"] = doc.version
            source = self._source(doc.source, body.get("_source", True))
            if source is not None:
                hit["_source"] = source
            if sort:
                hit["sort"] = [field_values(doc, n)[0] for n, _ in keys]
            hits.append(hit)
        top = max((scores[d.id] for d in docs), default=None)
        return {
            "took": 3,
            "timed_out": False,
            "_shards": {"total": 2, "successful": 2, "skipped": 0, "failed": 0},
            "hits": {
                "total": {"value": len(docs), "relation": "eq"},
                "max_score": None if sort else top,
                "hits": hits,
            },
        }

    def _msearch(self, default: Index, lines: list[dict[str, Any]]) -> dict[str, Any]:
        if len(lines) % 2:
            raise FakeError(400, "illegal_argument_exception", "msearch: a header without a body")
        responses: list[dict[str, Any]] = []
        for header, body in zip(lines[::2], lines[1::2], strict=True):
            try:
                index = self.indices.get(header.get("index", default.name))
                if index is None:
                    raise FakeError(
                        404, "index_not_found_exception", f"no such index [{header.get('index')}]"
                    )
                responses.append({**self._search(index, body), "status": 200})
            except FakeError as exc:
                responses.append({**exc.body(), "status": exc.status})
        return {"took": 1, "responses": responses}

    def _delete_by_query(self, index: Index, body: dict[str, Any]) -> dict[str, Any]:
        matched = evaluate(index, body.get("query") or {"match_all": {}}, index.docs)
        for doc_id in matched:
            doc = index.docs.pop(doc_id)
            index.tombstones[doc_id] = doc.version + 1  # internal-version delete
        return {
            "took": 7,
            "timed_out": False,
            "total": len(matched),
            "deleted": len(matched),
            "batches": 1,
            "version_conflicts": 0,
            "noops": 0,
            "retries": {"bulk": 0, "search": 0},
            "throttled_millis": 0,
            "requests_per_second": -1.0,
            "throttled_until_millis": 0,
            "failures": [],
        }


class FakeConnection(Connection):
    """An opensearch-py connection that hands each request to :attr:`engine`."""

    engine: FakeOpenSearch

    def perform_request(
        self,
        method: str,
        url: str,
        params: Any = None,
        body: bytes | None = None,
        timeout: Any = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> Any:
        if body and url.rstrip("/").endswith(("_bulk", "_msearch")):  # NDJSON: one object per line
            parsed: Any = [json.loads(line) for line in body.splitlines() if line.strip()]
        else:
            parsed = json.loads(body) if body else None
        plain = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in (params or {}).items()}
        status, payload = self.engine.handle(method, url, plain, parsed)
        raw = "" if payload is None else json.dumps(payload)
        if not 200 <= status < 300 and status not in (ignore or ()):
            self._raise_error(status, raw, "application/json")
        return status, {"content-type": "application/json"}, raw


def fake_client(engine: FakeOpenSearch) -> OpenSearch:
    """A real client whose only connection is ``engine``."""
    bound = type("BoundFakeConnection", (FakeConnection,), {"engine": engine})
    return OpenSearch(hosts=[{"host": "fake-opensearch", "port": 443}], connection_class=bound, max_retries=0)
