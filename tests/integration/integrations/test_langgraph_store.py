"""The LangGraph store against a live ``agentmem serve``: a namespace is a user's scope; put
writes a memory (a second put of the key changes it, not a second memory), get finds it by key,
search is recall, delete removes it; what cannot map says why."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("langgraph")

from agentmem_client.integrations.langgraph import AgentMemStore


def _eventually(check, timeout_s: float = 10.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_put_get_search_delete_map_to_a_users_memories(served: str) -> None:
    store = AgentMemStore(served)
    ns = ("acme", "lin")
    store.put(ns, "home", {"content": "I live in Qingdao.", "category": "fact"})
    store.put(ns, "home", {"content": "I live in Qingdao, near the old town."})  # the same memory, changed
    item = store.get(ns, "home")
    assert item is not None and item.key == "home" and item.value["content"].endswith("old town.")
    assert [i.key for i in store.search(ns) if i.key == "home"] == ["home"]  # one memory per key
    store.put(ns, "drink", {"content": "我喜欢喝乌龙茶。", "category": "preference"})

    hits = _eventually(lambda: [i for i in store.search(ns, query="乌龙茶", limit=3) if i.key == "drink"])
    assert hits and hits[0].score is not None
    assert store.get(("acme", "someone-else"), "home") is None  # another user's scope sees nothing

    store.delete(ns, "home")
    assert store.get(ns, "home") is None
    store.close()


def test_what_does_not_map_raises_not_implemented_with_why(served: str) -> None:
    store = AgentMemStore(served)
    with pytest.raises(NotImplementedError, match="does not enumerate users"):
        store.list_namespaces()
    with pytest.raises(NotImplementedError, match=r"exactly \(tenant_id, user_id\)"):
        store.get(("acme", "lin", "notes"), "k")
    with pytest.raises(ValueError, match="content"):
        store.put(("acme", "lin"), "k", {"text": "no content field"})
    store.close()
