"""OpenSearch :class:`~agentmem.ports.SearchIndex`: k-NN + BM25 projection of active memories.

Requests are built by :mod:`.opensearch_dsl` (mapping, documents, queries — every query scoped).
Versioning follows :class:`~agentmem.ports.ProjectionOutcome` with OpenSearch's external versions:

* upsert of an active record: ``PUT _doc/<id>?version=v&version_type=external`` — an older or
  equal version is refused with 409; on a 409 the stored version and hash are read (``GET``) to
  tell a replay (STALE) from drift (same version, another hash: CONFLICT). A 409 with no stored
  document is a delete tombstone holding an equal or newer version: STALE;
* upsert of a non-active record: ``DELETE _doc/<id>?version=v&version_type=external`` (the same
  rules, so an older "superseded" image cannot remove a newer active document);
* ``delete(scope, id, v)``: ``version_type=external_gte`` — the index may hold exactly ``v``
  (deleting the version it shows is the point), not more.

Deleted versions are remembered only for ``index.gc_deletes`` (60 s by default): a replay of an
older version arriving later than that can re-create a deleted document. The projector's
read-through of the source of truth (services/projector.py) refuses such replays, and the
reconciler removes any orphan that slips through; ``erase_scope`` uses ``_delete_by_query``
whose internal-version deletes hold re-adds of erased ids back for the same window.

Serverless (``aoss``): requests are signed for the ``aoss`` service, but Serverless *vector*
collections do not accept caller-chosen document ids, so this adapter's versioned writes need a
managed domain (``es``) or a collection type that keeps ids — see docs/aws.md.

``knn_many`` sends a turn's or a batch's k-NN searches as one ``_msearch`` request.

Any transport error (429, 5xx, connection, authorisation) leaves as
:class:`~agentmem.errors.StoreUnavailable`; the client retries timeouts and 502/503/504 itself.

The module runs over 400 lines: the versioned writes and every query of the port over one client.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

import numpy as np
from opensearchpy.exceptions import (
    ConflictError,
    ImproperlyConfigured,
    NotFoundError,
    OpenSearchException,
    TransportError,
)

from agentmem.adapters.aws import opensearch_dsl as dsl
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.aws.opensearch_client import build_client
from agentmem.adapters.aws.opensearch_setup import IndexSpec, index_body, index_template
from agentmem.domain.models import MemoryRecord, Scope
from agentmem.errors import ConfigurationError, StoreUnavailable
from agentmem.ports import Hit, ProjectionOutcome, ProjectionState, Reading

__all__ = ["OpenSearchIndex", "build_client"]

log = logging.getLogger(__name__)
R = TypeVar("R")
PAGE_SIZE = 500
MGET_CHUNK = 500


def _store_error(exc: OpenSearchException, operation: str) -> StoreUnavailable:
    details: dict[str, object] = {"store": "opensearch", "operation": operation}
    if isinstance(exc, TransportError):
        details.update(status=exc.status_code, error=str(exc.error)[:200])
    return StoreUnavailable(
        f"opensearch unavailable during {operation}: {type(exc).__name__}", details=details
    )


class OpenSearchIndex:
    """:class:`agentmem.ports.SearchIndex` on one OpenSearch index.

    ``client`` builds the ``opensearchpy.OpenSearch`` client on first use; ``refresh`` is passed
    on writes (``False`` in production: near-real-time within ``refresh_interval``; tests and
    live checks use ``True``).
    """

    def __init__(
        self,
        client: LazyClient[Any] | Callable[[], Any],
        *,
        index: str,
        dimension: int,
        refresh: bool | str = False,
        engine: str = dsl.KNN_ENGINE,
        create_index: bool = True,
        replicas: int | None = None,
    ) -> None:
        self._client = client if isinstance(client, LazyClient) else LazyClient(client)
        self.index = index
        self.dimension = dimension
        self._refresh = str(refresh).lower() if isinstance(refresh, bool) else refresh
        self._engine = engine
        self._spec = IndexSpec(index, dimension, 1 if replicas is None else replicas)
        self._ready = not create_index  # a deployed stack's index is set up at deploy time
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    def _call(self, operation: str, fn: Callable[[Any], R]) -> R:
        self.ensure_index()
        try:
            return fn(self._client.get())
        except ImproperlyConfigured as exc:
            raise ConfigurationError(f"opensearch client misconfigured: {exc}") from exc
        except (ConflictError, NotFoundError):
            raise
        except OpenSearchException as exc:
            raise _store_error(exc, operation) from exc

    def ensure_index(self) -> None:
        """Create the index template and the index once per process (idempotent), unless the
        deploy does it (``create_index=False``: ``AGENTMEM_OPENSEARCH_CREATE_INDEX``)."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            try:
                client = self._client.get()
                client.indices.put_index_template(name=self.index, body=index_template(self._spec))
                if not client.indices.exists(index=self.index):
                    try:
                        client.indices.create(index=self.index, body=index_body(self._spec))
                    except TransportError as exc:
                        if exc.status_code != 400 or "resource_already_exists" not in str(exc.error):
                            raise
                else:  # an index made before a field was added gets it (idempotent)
                    mapping = client.indices.get_mapping(index=self.index).get(self.index) or {}
                    if missing := dsl.missing_fields(mapping):
                        client.indices.put_mapping(index=self.index, body=missing)
            except ImproperlyConfigured as exc:
                raise ConfigurationError(f"opensearch client misconfigured: {exc}") from exc
            except OpenSearchException as exc:
                raise _store_error(exc, "ensure_index") from exc
            self._ready = True

    def _stored(self, scope: Scope, memory_id: str) -> tuple[int, str] | None:
        """(version, hash) of the stored document, None if absent."""
        try:
            doc = self._call(
                "get",
                lambda c: c.get(
                    index=self.index,
                    id=dsl.document_id(scope, memory_id),
                    routing=dsl.routing(scope),
                    _source_includes="version,content_hash",
                ),
            )
        except NotFoundError:
            return None
        except ConflictError as exc:
            raise _store_error(exc, "get") from exc
        if not doc.get("found"):
            return None
        return int(doc["_version"]), str((doc.get("_source") or {}).get("content_hash", ""))

    def _refused(self, record: MemoryRecord) -> ProjectionOutcome:
        stored = self._stored(record.scope, record.memory_id)
        if stored is not None and stored[0] == record.version and stored[1] != record.content_hash:
            return ProjectionOutcome.CONFLICT
        return ProjectionOutcome.STALE

    # ------------------------------------------------------------------ writes

    def upsert(self, record: MemoryRecord) -> ProjectionOutcome:
        scope = record.scope
        if not record.is_active:
            return self._delete(scope, record.memory_id, record.version, "external", record)
        try:
            self._call(
                "index",
                lambda c: c.index(
                    index=self.index,
                    id=dsl.document_id(scope, record.memory_id),
                    body=dsl.document(record, self.dimension),
                    routing=dsl.routing(scope),
                    version=record.version,
                    version_type="external",
                    refresh=self._refresh,
                ),
            )
        except ConflictError:
            return self._refused(record)
        except NotFoundError as exc:
            raise _store_error(exc, "index") from exc
        return ProjectionOutcome.APPLIED

    def _delete(
        self, scope: Scope, memory_id: str, version: int, version_type: str, record: MemoryRecord | None
    ) -> ProjectionOutcome:
        try:
            self._call(
                "delete",
                lambda c: c.delete(
                    index=self.index,
                    id=dsl.document_id(scope, memory_id),
                    routing=dsl.routing(scope),
                    version=version,
                    version_type=version_type,
                    refresh=self._refresh,
                ),
            )
        except ConflictError:
            return self._refused(record) if record is not None else ProjectionOutcome.STALE
        except NotFoundError as exc:
            if isinstance(exc.info, dict) and exc.info.get("result") == "not_found":
                return ProjectionOutcome.STALE  # nothing indexed; the delete left a tombstone
            raise _store_error(exc, "delete") from exc
        return ProjectionOutcome.APPLIED

    def delete(self, scope: Scope, memory_id: str, version: int) -> ProjectionOutcome:
        return self._delete(scope, memory_id, version, "external_gte", None)

    def upsert_many(self, records: Sequence[MemoryRecord]) -> list[ProjectionOutcome | None]:
        """One ``_bulk`` request: ``index`` for active records, ``delete`` for the others, each
        with its external version. Per item: created/updated/deleted -> APPLIED, 409 -> the same
        STALE/CONFLICT reading as :meth:`upsert`, a delete of nothing -> STALE, anything else
        (429, 5xx) -> None, left to a single retry. The whole request failing leaves all None."""
        if not records:
            return []
        lines: list[dict[str, Any]] = []
        for record in records:
            meta = {
                "_index": self.index,
                "_id": dsl.document_id(record.scope, record.memory_id),
                "routing": dsl.routing(record.scope),
                "version": record.version,
                "version_type": "external",
            }
            if record.is_active:
                lines += [{"index": meta}, dsl.document(record, self.dimension)]
            else:
                lines.append({"delete": meta})
        try:
            result = self._call("bulk", lambda c: c.bulk(body=lines, refresh=self._refresh))
        except (StoreUnavailable, ConflictError, NotFoundError) as exc:
            log.warning("opensearch.bulk_failed", extra={"error": type(exc).__name__, "items": len(records)})
            return [None] * len(records)
        items = result.get("items") or []
        outcomes: list[ProjectionOutcome | None] = []
        for record, item in zip(records, items, strict=False):
            reply: dict[str, Any] = next(iter(item.values()), {}) if isinstance(item, dict) else {}
            status = int(reply.get("status", 0))
            if 200 <= status < 300:
                outcomes.append(ProjectionOutcome.APPLIED)
            elif status == 409:
                outcomes.append(self._refused(record))
            elif status == 404 and not record.is_active:
                outcomes.append(ProjectionOutcome.STALE)  # nothing indexed; the delete left a tombstone
            else:
                outcomes.append(None)
        return outcomes + [None] * (len(records) - len(outcomes))

    def erase_scope(self, scope: Scope) -> int:
        result = self._call(
            "delete_by_query",
            lambda c: c.delete_by_query(
                index=self.index,
                body=dsl.scope_delete_query(scope),
                routing=dsl.routing(scope),
                conflicts="proceed",
                refresh="true",
            ),
        )
        return int(result.get("deleted", 0))

    # ------------------------------------------------------------------ queries

    def _search(self, scope: Scope, body: dict[str, Any], operation: str) -> list[dict[str, Any]]:
        try:
            result = self._call(
                operation, lambda c: c.search(index=self.index, body=body, routing=dsl.routing(scope))
            )
        except (ConflictError, NotFoundError) as exc:
            raise _store_error(exc, operation) from exc
        return list((result.get("hits") or {}).get("hits") or [])

    def _knn_body(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> dict[str, Any] | None:
        """The k-NN search of ``vector`` (None: a vector no search can answer)."""
        query = np.asarray(vector, dtype=np.float32).ravel()
        if k <= 0 or query.size != self.dimension or not np.all(np.isfinite(query)):
            return None
        norm = float(np.linalg.norm(query))
        if norm == 0 or not math.isfinite(norm):
            return None
        return dsl.knn_query(scope, (query / norm).tolist(), k, model)

    def _hits(self, hits: list[dict[str, Any]]) -> list[Hit]:
        return [
            Hit(str(h["_source"]["memory_id"]), dsl.score_to_cosine(float(h["_score"]), self._engine))
            for h in hits
        ]

    def knn(self, scope: Scope, vector: np.ndarray, k: int, model: str) -> list[Hit]:
        body = self._knn_body(scope, vector, k, model)
        return [] if body is None else self._hits(self._search(scope, body, "knn"))

    def knn_many(self, scope: Scope, vectors: Sequence[np.ndarray], k: int, model: str) -> list[list[Hit]]:
        """One ``_msearch`` request; a failed search in it fails the call, as a failed ``knn`` would."""
        bodies = [self._knn_body(scope, v, k, model) for v in vectors]
        asked = [i for i, body in enumerate(bodies) if body is not None]
        out: list[list[Hit]] = [[] for _ in bodies]
        if not asked:
            return out
        header = {"index": self.index, "routing": dsl.routing(scope)}
        lines = [line for i in asked for line in (header, bodies[i])]
        try:
            result = self._call("knn", lambda c: c.msearch(body=lines, index=self.index))
        except (ConflictError, NotFoundError) as exc:
            raise _store_error(exc, "knn") from exc
        responses = list(result.get("responses") or [])
        if len(responses) != len(asked) or any("error" in r for r in responses):
            raise StoreUnavailable(
                "search index unavailable: a k-NN search of the batch failed",
                details={"store": "opensearch", "operation": "knn"},
            )
        for i, response in zip(asked, responses, strict=True):
            out[i] = self._hits(list((response.get("hits") or {}).get("hits") or []))
        return out

    def similarities(
        self, scope: Scope, vector: np.ndarray, memory_ids: Sequence[str], model: str
    ) -> dict[str, float]:
        query = np.asarray(vector, dtype=np.float32).ravel()
        ids = list(dict.fromkeys(memory_ids))
        if not ids or query.size != self.dimension or not np.all(np.isfinite(query)):
            return {}
        norm = float(np.linalg.norm(query))
        if norm == 0 or not math.isfinite(norm):
            return {}
        body = dsl.similarity_query(scope, (query / norm).tolist(), ids, model)
        hits = self._search(scope, body, "similarities")
        return {str(h["_source"]["memory_id"]): max(-1.0, min(1.0, float(h["_score"]) - 1.0)) for h in hits}

    def keyword(self, scope: Scope, text: str, k: int) -> list[Hit]:
        if k <= 0 or not text.strip():
            return []
        hits = self._search(scope, dsl.keyword_query(scope, text, k), "keyword")
        return [Hit(str(h["_source"]["memory_id"]), float(h["_score"])) for h in hits]

    def _found_docs(
        self, scope: Scope, memory_ids: Sequence[str], fields: Sequence[str]
    ) -> Iterator[dict[str, Any]]:
        """The found documents of ``memory_ids``, ``_source`` limited to ``fields``: one ``_mget``
        per :data:`MGET_CHUNK` ids."""
        wanted = list(dict.fromkeys(memory_ids))
        for start in range(0, len(wanted), MGET_CHUNK):
            body = {
                "docs": [
                    {"_id": dsl.document_id(scope, m), "routing": dsl.routing(scope)}
                    for m in wanted[start : start + MGET_CHUNK]
                ]
            }
            try:
                result = self._call("mget", partial(self._mget, body, fields=fields))
            except (ConflictError, NotFoundError) as exc:
                raise _store_error(exc, "mget") from exc
            yield from (doc for doc in result.get("docs", []) if doc.get("found"))

    def _mget(self, body: dict[str, Any], client: Any, fields: Sequence[str] = dsl.SOURCE_FIELDS) -> Any:
        return client.mget(index=self.index, body=body, _source_includes=",".join(fields))

    def states(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ProjectionState]:
        found: dict[str, ProjectionState] = {}
        for doc in self._found_docs(scope, memory_ids, dsl.SOURCE_FIELDS):
            source = doc.get("_source") or {}
            memory_id = str(source.get("memory_id", ""))
            found[memory_id] = ProjectionState(
                memory_id, int(doc["_version"]), str(source.get("content_hash", ""))
            )
        return {m: found[m] for m in dict.fromkeys(memory_ids) if m in found}

    def readings(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, Reading]:
        found: dict[str, Reading] = {}
        for doc in self._found_docs(scope, memory_ids, ("memory_id", "reading")):
            source = doc.get("_source") or {}
            if (reading := dsl.parse_document_reading(source)) is not None:
                found[str(source.get("memory_id", ""))] = reading
        return {m: found[m] for m in dict.fromkeys(memory_ids) if m in found}

    def cards(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for doc in self._found_docs(scope, memory_ids, ("memory_id", "card")):
            source = doc.get("_source") or {}
            if (card := dsl.parse_card(scope, source)) is not None:
                found[card.memory_id] = card
        return {m: found[m] for m in dict.fromkeys(memory_ids) if m in found}

    def listing(self, scope: Scope, category: str, limit: int) -> list[MemoryRecord] | None:
        """One search (near-real-time: a document is listed from the index's next refresh on;
        the caller merges what it read of the store's newest)."""
        if limit <= 0:
            return []
        hits = self._search(scope, dsl.listing_query(scope, category, limit), "listing")
        cards = [dsl.parse_card(scope, h.get("_source") or {}) for h in hits]
        if any(card is None for card in cards):
            return None  # a document indexed before cards: the store answers
        return [card for card in cards if card is not None]

    def stating(self, scope: Scope, keys: Sequence[str], k: int) -> list[str]:
        body = dsl.stating_query(scope, keys, k)
        if body is None:
            return []
        return [str(h["_source"]["memory_id"]) for h in self._search(scope, body, "stating")]

    def all_states(self, scope: Scope) -> list[ProjectionState]:
        states: list[ProjectionState] = []
        after: list[Any] | None = None
        while True:
            hits = self._search(scope, dsl.scope_states_query(scope, PAGE_SIZE, after), "all_states")
            for h in hits:
                source = h.get("_source") or {}
                version = int(h.get("_version", source.get("version", 0)))
                states.append(
                    ProjectionState(str(source["memory_id"]), version, str(source.get("content_hash", "")))
                )
            if len(hits) < PAGE_SIZE:
                return states
            after = list(hits[-1]["sort"])
