"""The smoke run's drift check: break the projections the ways a deployment breaks them, then one
``functions/reconcile`` run must repair everything and a second must find nothing.

The drift, each on a different memory:

* **dropped** — a memory's search document and graph vertex are deleted behind the projector's
  back (on the engines: straight in OpenSearch and on the Gremlin server);
* **stale** — the source of truth moves on (the memory is pinned through the API: a new
  version) and the stream records that would carry it are lost;
* **orphan** — a document and a vertex for a memory the source of truth never had;
* **edges** — on the Gremlin server, every edge of one user's memories is dropped.

Afterwards every active memory must be in the index and the graph at its stored version and
hash, the orphan gone from both, and the user's edges back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentmem.domain.models import MemoryRecord, Scope
from agentmem_dev.emulator import events, lambdas


class Drift:
    def __init__(self, container: Any, sources: Any, engines: Mapping[str, str]) -> None:
        self.container = container
        self.sources = sources
        self.engines = engines

    def check(self, active: Mapping[Scope, set[str]], failures: list[str]) -> dict[str, Any]:
        memories = sorted(((s, m) for s, ids in active.items() for m in ids), key=lambda p: (p[0].key, p[1]))
        if len(memories) < 3:
            return {"skipped": "fewer than 3 active memories"}
        store = self.container.store
        injected: dict[str, Any] = {}
        (s1, dropped), (s2, stale) = memories[0], memories[-1]
        record = store.get(s1, dropped)
        self._drop(record)
        injected["dropped"] = dropped
        self._pin(s2, stale)
        lost = self.sources._reader.read()  # the stream records of the pin: never projected
        injected["stale"] = stale
        injected["stream_records_lost"] = len(lost)
        template = store.get(*memories[1])
        orphan = replace(template, memory_id=f"orphan-{template.memory_id[:12]}", version=1)
        self.container.index.upsert(orphan)
        self.container.graph.upsert_memory(orphan)
        injected["orphan"] = orphan.memory_id
        edge_scope = memories[1][0]
        edges_before = self._edges(edge_scope)
        if edges_before:
            self._drop_edges(edge_scope)
            injected["edges_dropped"] = edges_before
        first = self._reconcile()
        second = self._reconcile()
        self._verify(active, orphan, failures)
        edges_after = self._edges(edge_scope)
        if edges_before and edges_after < edges_before:
            failures.append(f"reconcile left {edges_before - edges_after} of {edges_before} edges missing")
        found = {k: int(second.get(k, 0)) for k in ("missing", "stale", "orphan", "relinked")}
        if any(found.values()):
            failures.append(f"a second reconcile run still found drift: {found}")
        if not first.get("repaired"):
            failures.append(f"the first reconcile run repaired nothing: {first}")
        return {
            "injected": injected,
            "first": {
                k: first.get(k)
                for k in ("checked", "missing", "stale", "orphan", "relinked", "repaired", "failed")
            },
            "second": {
                k: second.get(k)
                for k in ("checked", "missing", "stale", "orphan", "relinked", "repaired", "failed")
            },
            "edges": {"before": edges_before, "after": edges_after} if edges_before else None,
        }

    # ------------------------------------------------------------------ breaking things

    def _drop(self, record: MemoryRecord) -> None:
        url = self.engines.get("AGENTMEM_OPENSEARCH_URL")
        if url:
            from opensearchpy import OpenSearch

            from agentmem.adapters.aws import opensearch_dsl as dsl

            client = OpenSearch(hosts=[url])
            client.delete(  # a stray delete at the document's own version (a buggy writer)
                index=self.container.settings.opensearch_index,
                id=dsl.document_id(record.scope, record.memory_id),
                routing=dsl.routing(record.scope),
                version=record.version,
                version_type="external_gte",
                refresh=True,
            )
        else:
            self.container.index.delete(record.scope, record.memory_id, record.version)
        if self.engines.get("AGENTMEM_GREMLIN_URL"):
            from agentmem.adapters.aws.neptune_traversals import memory_vid

            self._gremlin(lambda g: g.V(memory_vid(record.scope, record.memory_id)).drop().iterate())
        else:
            self.container.graph.delete_memory(record.scope, record.memory_id, record.version)

    def _pin(self, scope: Scope, memory_id: str) -> None:
        response = self._api(scope, "PATCH", f"/v1/memories/{memory_id}", {"pinned": True})
        if response.get("statusCode") != 200:
            raise RuntimeError(f"pinning {memory_id} failed: {response}")

    def _edges(self, scope: Scope) -> int:
        if not self.engines.get("AGENTMEM_GREMLIN_URL"):
            return 0
        return int(self._gremlin(lambda g: g.V().has("pk", scope.key).bothE().dedup().count().next()))

    def _drop_edges(self, scope: Scope) -> None:
        self._gremlin(lambda g: g.V().has("pk", scope.key).bothE().drop().iterate())

    def _gremlin(self, step: Any) -> Any:
        from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
        from gremlin_python.process.anonymous_traversal import traversal

        connection = DriverRemoteConnection(self.engines["AGENTMEM_GREMLIN_URL"], "g")
        try:
            return step(traversal().with_remote(connection))
        finally:
            connection.close()

    # ------------------------------------------------------------------ repairing and checking

    def _refresh(self) -> None:
        """OpenSearch search is near-real-time (1 s): the reconciler lists documents by search,
        and in production runs minutes after the writes it checks, so wait for a refresh."""
        url = self.engines.get("AGENTMEM_OPENSEARCH_URL")
        if url:
            from opensearchpy import OpenSearch

            OpenSearch(hosts=[url]).indices.refresh(index=self.container.settings.opensearch_index)

    def _reconcile(self) -> dict[str, Any]:
        self._refresh()
        event = events.scheduled_event("reconcile", at=self.container.clock.now())
        report = lambdas.invoke("reconcile", event, self.container) or {}
        self.sources.drain()  # requeued repairs travel through the stream
        return dict(report)

    def _verify(self, active: Mapping[Scope, set[str]], orphan: MemoryRecord, failures: list[str]) -> None:
        store, index, graph = self.container.store, self.container.index, self.container.graph
        for scope, ids in active.items():
            truth = {m: store.get(scope, m) for m in ids}
            for name, projection in (("index", index), ("graph", graph)):
                states = projection.states(scope, sorted(ids))
                for memory_id, record in truth.items():
                    if record is None or not record.is_active:
                        continue
                    state = states.get(memory_id)
                    if state is None or (state.version, state.content_hash) != (
                        record.version,
                        record.content_hash,
                    ):
                        failures.append(
                            f"after reconcile, {name} holds {state} for {memory_id} v{record.version}"
                        )
        for name, projection in (("index", index), ("graph", graph)):
            if projection.states(orphan.scope, [orphan.memory_id]):
                failures.append(f"after reconcile, the orphan is still in the {name}")

    def _api(self, scope: Scope, method: str, path: str, body: Any) -> dict[str, Any]:
        event = events.api_event_as(scope.tenant_id, scope.user_id, method, path, body)
        return dict(lambdas.invoke("api", event, self.container) or {})
