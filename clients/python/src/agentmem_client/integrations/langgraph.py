"""agentmem as a LangGraph long-term memory store (``agentmem-client[langgraph]``; docs/integrations/langgraph.md).

Mapping, and what does not map:

- a namespace is a scope: ``(tenant_id, user_id)``; each gets its own client (the scope travels
  as headers; with a bearer token the server may pin the tenant);
- ``put(ns, key, value)`` writes a memory whose text is ``value["content"]`` (``category``,
  ``importance``, ``pinned``, ``tags`` also map), tagged ``lg:<key>``; a second put of the key
  patches that memory (one memory per key); ``put(ns, key, None)`` and ``delete`` soft-delete it;
- ``get(ns, key)`` finds the memory tagged with the key: the server has no lookup by tag, so this
  walks the scope's active memories page by page (cost grows with the user's memories; recall is
  the read path agentmem is built for);
- ``search(ns, query=...)`` is agentmem's recall (scored; ``limit`` its ``k``); without a query,
  the newest memories; ``filter`` matches the returned value's fields exactly;
- what does not map raises ``NotImplementedError`` saying why: ``list_namespaces`` (a caller sees
  its own scope only; the API does not enumerate users), per-item ``ttl`` (retention is the
  server's policy), namespaces of another depth.

The value a memory reads back as is ``{"content", "category", "importance", "pinned", "tags",
"memory_id"}``: agentmem stores the text (PII redacted), not arbitrary JSON.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from agentmem_client.clients import AgentMemClient
from agentmem_client.wire.models import MemoryOut

KEY_TAG = "lg:"
PAGE = 200
WRITABLE = ("category", "importance", "pinned", "tags")


class AgentMemStore(BaseStore):
    """A LangGraph ``BaseStore`` over the agentmem API. ``client_for(tenant, user)`` builds the
    client of a scope (default: :class:`AgentMemClient` on ``base_url`` with ``token``)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        *,
        token: str | None = None,
        client_for: Callable[[str, str], AgentMemClient] | None = None,
    ) -> None:
        self._client_for = client_for or (
            lambda tenant, user: AgentMemClient(base_url, token=token, tenant_id=tenant, user_id=user)
        )
        self._clients: dict[tuple[str, str], AgentMemClient] = {}

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    # ------------------------------------------------------------------ the operations
    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            if op.ttl is not None:
                raise NotImplementedError(
                    "agentmem keeps memories by its own retention policy; a per-item ttl cannot be set"
                )
            self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            raise NotImplementedError(
                "agentmem scopes a caller to its own tenant/user; the API does not enumerate users,"
                " so namespaces cannot be listed"
            )
        raise NotImplementedError(f"unknown store operation {type(op).__name__}")

    def _client(self, namespace: tuple[str, ...]) -> AgentMemClient:
        if len(namespace) != 2 or not all(namespace):
            raise NotImplementedError(
                "an agentmem namespace is exactly (tenant_id, user_id): memory is scoped per user,"
                f" not by deeper paths (got {namespace!r})"
            )
        scope = (namespace[0], namespace[1])
        if scope not in self._clients:
            self._clients[scope] = self._client_for(*scope)
        return self._clients[scope]

    def _find(self, client: AgentMemClient, key: str) -> MemoryOut | None:
        tag = KEY_TAG + key
        cursor: str | None = None
        while True:
            page = client.list_memories(limit=PAGE, cursor=cursor)
            for memory in page.memories:
                if tag in memory.tags:
                    return memory
            cursor = page.next_cursor
            if cursor is None:
                return None

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        memory = self._find(self._client(namespace), key)
        return None if memory is None else _item(namespace, key, memory)

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None) -> None:
        client = self._client(namespace)
        found = self._find(client, key)
        if value is None:
            if found is not None:
                client.delete_memory(found.id)
            return
        content = value.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ValueError('an agentmem memory is text: the value needs a non-empty "content" string')
        unknown = set(value) - {"content", "memory_id", *WRITABLE}
        if unknown:
            raise ValueError(
                f"agentmem stores text and these fields only: content, {', '.join(WRITABLE)}; not {sorted(unknown)}"
            )
        fields = {k: value[k] for k in WRITABLE if value.get(k) is not None}
        tags = [KEY_TAG + key, *[t for t in fields.pop("tags", []) if not str(t).startswith(KEY_TAG)]]
        if found is None:
            client.create_memory(content, tags=tags, **fields)
        else:
            client.patch_memory(found.id, content=content, tags=tags, **fields)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        client = self._client(op.namespace_prefix)
        wanted = op.limit + op.offset
        if op.query:
            memories = client.recall(op.query, k=min(max(wanted, 1), 50)).memories
        else:
            memories = client.list_memories(limit=min(max(wanted, 1), PAGE)).memories
        items = [_item(op.namespace_prefix, _key(m), m, search=True) for m in memories]
        if op.filter:
            items = [i for i in items if all(i.value.get(k) == v for k, v in op.filter.items())]
        return items[op.offset : op.offset + op.limit]  # type: ignore[return-value]


def _key(memory: MemoryOut) -> str:
    return next((t[len(KEY_TAG) :] for t in memory.tags if t.startswith(KEY_TAG)), memory.id)


def _item(namespace: tuple[str, ...], key: str, memory: MemoryOut, *, search: bool = False) -> Item:
    value = {
        "content": memory.content,
        "category": memory.category,
        "importance": memory.importance,
        "pinned": memory.pinned,
        "tags": [t for t in memory.tags if not t.startswith(KEY_TAG)],
        "memory_id": memory.id,
    }
    created = memory.created_at or datetime.now(UTC)
    updated = memory.updated_at or created
    if search:
        return SearchItem(namespace, key, value, created, updated, score=memory.score)
    return Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)


__all__ = ["AgentMemStore"]
