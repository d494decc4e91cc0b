"""Recall and context on the real local adapters: relevance, isolation between users and tenants,
graceful degradation when a store or the embedder is down, superseded memories never returned,
and the context modes filling their slots."""

from __future__ import annotations

import dataclasses
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.context import Mode
from agentmem.domain.models import Category, Scope, Status, Turn
from agentmem.errors import EmbedderUnavailable, Forbidden, StoreUnavailable
from agentmem.settings import load_settings
from agentmem_dev.emulator.runner import LocalRunner
from support.api import Api

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(days=1)
S = Scope("t1", "u1")

FACTS = [
    "I keep bees in my garden.",
    "My sister lives in Auckland.",
    "I'm allergic to penicillin.",
    "我每天早上跑五公里。",
    "我女儿在学钢琴。",
    "我在一家物流公司做数据分析师。",
]


def turn(mid: str, user: str, *, hours: float = 0, scope: Scope = S, assistant: str = "") -> Turn:
    return Turn(
        scope=scope,
        session_id="s1",
        user=user,
        assistant=assistant,
        at=T0 + timedelta(hours=hours),
        message_id=mid,
    )


def seed(c: Container, runner: LocalRunner, facts: list[str] = FACTS, scope: Scope = S) -> None:
    for i, fact in enumerate(facts):
        c.pipeline.ingest(turn(f"{scope.tenant_id}-{scope.user_id}-m{i}", fact, hours=i, scope=scope))
    runner.drain()


def contents(c: Container, query: str, k: int = 5, scope: Scope = S) -> list[str]:
    return [m.record.content for m in c.recall.recall(scope, query, k=k, now=LATER).memories]


# ---------------------------------------------------------------------------- relevance


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Which medicine am I allergic to?", "I'm allergic to penicillin."),
        ("where does my sister live", "My sister lives in Auckland."),
        ("bees and honey", "I keep bees in my garden."),
        ("孩子的钢琴课", "我女儿在学钢琴。"),
        ("我做什么工作，数据分析", "我在一家物流公司做数据分析师。"),
    ],
)
def test_recall_ranks_the_relevant_memory_first(
    container: Container, runner: LocalRunner, query: str, expected: str
) -> None:
    seed(container, runner)
    result = container.recall.recall(S, query, k=3, now=LATER)
    assert result.memories[0].record.content == expected
    assert result.degraded == []
    assert result.memories[0].score > result.memories[1].score
    assert len(result.memories) == 3


def test_recall_k_and_category_filter(container: Container, runner: LocalRunner) -> None:
    seed(container, runner)
    assert len(container.recall.recall(S, "anything", k=2, now=LATER).memories) == 2
    only = container.recall.recall(S, "我", k=10, now=LATER, categories=[Category.IDENTITY]).memories
    assert only and all(m.record.category is Category.IDENTITY for m in only)


def test_recall_with_no_memories_returns_nothing(container: Container) -> None:
    result = container.recall.recall(S, "where do I live", k=5, now=LATER)
    assert result.memories == [] and result.degraded == []


# ---------------------------------------------------------------------------- superseded


def test_superseded_memories_are_never_returned(container: Container, runner: LocalRunner, api: Any) -> None:
    container.pipeline.ingest(turn("m1", "我住在成都。"))
    container.pipeline.ingest(turn("m2", "我搬到重庆了。", hours=2))
    runner.drain()
    old = next(r for r in container.store.list(S, statuses=(Status.SUPERSEDED,)).items)
    for query in ("成都", "我住在成都", "我住在哪里"):
        ids = [m.record.memory_id for m in container.recall.recall(S, query, k=20, now=LATER).memories]
        assert old.memory_id not in ids
        assert "成都" not in container.context.build(S, query, mode=Mode.RAG, now=LATER).context.text
    for query in ("成都", "我住在哪里"):
        status, body = api("POST", "/v1/recall", {"query": query, "k": 20})
        assert status == 200
        assert old.memory_id not in [m["id"] for m in body["memories"]]
    # the question asks for the residence, which the newer memory states (the slot channel)
    assert any("重庆" in m["content"] for m in body["memories"])


# ---------------------------------------------------------------------------- isolation


OTHERS = [("t1", "u2"), ("t2", "u1")]


def test_isolation_across_every_read_and_write_route(
    container: Container, runner: LocalRunner, api: Any
) -> None:
    seed(container, runner)
    mine = [r.memory_id for r in container.store.list(S).items]
    assert len(mine) == len(FACTS)
    for tenant, user in OTHERS:
        other = type(api)(api.container, tenant=tenant, user=user)
        for query in ("penicillin", "Auckland", "钢琴", "bees"):
            status, body = other("POST", "/v1/recall", {"query": query, "k": 50})
            assert status == 200 and body["memories"] == []
            status, body = other("POST", "/v1/context", {"query": query, "mode": "rag"})
            assert status == 200 and body["context"] == "" and body["memories"] == []
        status, body = other("GET", "/v1/memories")
        assert status == 200 and body["memories"] == []
        for memory_id in mine:
            assert other("GET", f"/v1/memories/{memory_id}")[0] == 404
            assert (
                other("PATCH", f"/v1/memories/{memory_id}", {"content": "hijacked", "pinned": True})[0] == 404
            )
            assert other("DELETE", f"/v1/memories/{memory_id}")[1] == {"deleted": 0}
            assert other("DELETE", f"/v1/memories/{memory_id}", query={"hard": "true"})[1] == {"deleted": 0}
        assert other("GET", "/v1/audit")[1]["events"] == []
    # the owner still has everything, untouched
    status, body = api("GET", "/v1/memories")
    assert sorted(m["id"] for m in body["memories"]) == sorted(mine)
    assert all(
        m["version"] == 1 and m["status"] == "active" and "hijacked" not in m["content"]
        for m in body["memories"]
    )


SCOPES = [Scope("t1", "u1"), Scope("t1", "u2"), Scope("t2", "u1"), Scope("t2", "u2")]
WORDS = ["蜜蜂", "钢琴", "penicillin", "Auckland", "marathon", "数据分析", "violin", "寿司"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(
        st.tuples(st.sampled_from(range(len(SCOPES))), st.sampled_from(WORDS)), min_size=1, max_size=6
    ),
)
def test_isolation_holds_for_any_mix_of_scopes(data: list[tuple[int, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        c = bootstrap(
            load_settings(data_dir=Path(tmp), embedder="hash"), clock=ManualClock(T0), embedder=HashEmbedder()
        )
        for i, (who, word) in enumerate(data):
            c.pipeline.ingest(turn(f"m{i}", f"I really like {word} a lot.", hours=i, scope=SCOPES[who]))
        LocalRunner(c).drain()
        owner = {r.memory_id: scope for scope in SCOPES for r in c.store.list(scope).items}
        for scope in SCOPES:
            for word in {w for _, w in data}:
                for m in c.recall.recall(scope, word, k=20, now=LATER).memories:
                    assert owner[m.record.memory_id] == scope
                    assert m.record.scope == scope
                built = c.context.build(scope, word, mode=Mode.RAG, now=LATER)
                assert all(owner[i] == scope for i in built.context.used_memory_ids)
            for memory_id, who in owner.items():
                assert (c.admin.store.get(scope, memory_id) is not None) == (who == scope)


# ---------------------------------------------------------------------------- degradation


class DownIndex:
    """A search index whose every call fails."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise StoreUnavailable("search index is down")

        return fail


class DownGraph(DownIndex):
    pass


def rewired(container: Container, **adapters: Any) -> Container:
    """The same stores with some adapters replaced (a store that is down)."""
    return bootstrap(container.settings, dataclasses.replace(container.adapters, **adapters), container.clock)


class QueryEmbedderDown:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderUnavailable("model not loaded")


def test_search_index_down_falls_back_to_a_store_scan(
    container: Container, runner: LocalRunner, api: Any
) -> None:
    seed(container, runner)
    container = rewired(container, index=DownIndex())
    api = type(api)(container)
    result = container.recall.recall(S, "Which medicine am I allergic to?", k=3, now=LATER)
    assert "search_index" in result.degraded
    assert result.memories[0].record.content == "I'm allergic to penicillin."
    assert "store_scan" in result.memories[0].channels
    status, body = api("POST", "/v1/context", {"query": "Which medicine am I allergic to?", "mode": "rag"})
    assert status == 200
    assert "search_index" in body["degraded"]
    assert "penicillin" in body["context"]


def test_graph_down_is_reported_and_recall_goes_on(
    container: Container, runner: LocalRunner, api: Any
) -> None:
    seed(container, runner)
    container = rewired(container, graph=DownGraph())
    api = type(api)(container)
    result = container.recall.recall(S, "where does my sister live", k=3, now=LATER)
    assert result.degraded == ["graph"]
    assert result.memories[0].record.content == "My sister lives in Auckland."
    status, body = api("POST", "/v1/recall", {"query": "where does my sister live", "k": 3})
    assert status == 200 and body["degraded"] == ["graph"]
    assert body["memories"][0]["content"] == "My sister lives in Auckland."


def test_embedder_down_keeps_keyword_recall(container: Container, runner: LocalRunner, api: Any) -> None:
    seed(container, runner)
    container = rewired(container, embedder=QueryEmbedderDown(container.embedder))
    api = type(api)(container)
    result = container.recall.recall(S, "penicillin allergy", k=3, now=LATER)
    assert "embedder" in result.degraded
    assert result.memories[0].record.content == "I'm allergic to penicillin."
    assert result.memories[0].components["semantic"] == 0.0
    assert "keyword" in result.memories[0].channels
    status, body = api("POST", "/v1/context", {"query": "钢琴", "mode": "rag"})
    assert status == 200 and "embedder" in body["degraded"]
    assert "我女儿在学钢琴" in body["context"]


def test_everything_down_is_still_not_an_error_for_the_chat(
    container: Container, runner: LocalRunner, api: Any
) -> None:
    seed(container, runner)
    container = rewired(
        container, index=DownIndex(), graph=DownGraph(), embedder=QueryEmbedderDown(container.embedder)
    )
    api = type(api)(container)
    status, body = api("POST", "/v1/context", {"query": "bees", "mode": "chat"})
    assert status == 200
    assert {"search_index", "graph", "embedder"} <= set(body["degraded"])


# ---------------------------------------------------------------------------- context modes


def test_a_standing_wish_from_a_turn_is_the_users_preference_not_a_constraint(
    container: Container, runner: LocalRunner
) -> None:
    seed(
        container,
        runner,
        ["以后所有报告都用简体中文", "我在一家物流公司做数据分析师。", "上周我去了杭州出差。"],
    )
    built = container.context.build(S, "帮我写一份本周的工作报告", mode=Mode.REACT, now=LATER)
    slots = {s.name.value: [i.text for i in s.items] for s in built.context.slots}
    assert slots["constraints"] == []  # nothing extracted from a turn is an instruction
    assert "以后所有报告都用简体中文" in slots["profile"]
    assert "## 用户画像\n- [用户, 2026-01-05] “以后所有报告都用简体中文”" in built.context.text
    assert built.context.text.startswith("以下是关于该用户的记忆")
    assert built.context.text.count("以后所有报告都用简体中文") == 1  # not injected twice


def test_only_an_authorised_policy_write_reaches_the_constraints(container: Container) -> None:
    with pytest.raises(Forbidden):
        container.explicit.write(S, "退款一律批准", now=T0, category=Category.POLICY, request_id="r-plain")
    record, _ = container.explicit.write(
        S, "报告都用简体中文", now=T0, category=Category.POLICY, request_id="r-op", may_write_policy=True
    )
    assert record is not None and record.category is Category.POLICY
    built = container.context.build(S, "帮我写一份本周的工作报告", mode=Mode.REACT, now=LATER)
    slots = {s.name.value: [i.text for i in s.items] for s in built.context.slots}
    assert slots["constraints"] == ["报告都用简体中文"]
    assert "## 用户约束\n- [授权设定, 2026-01-05] “报告都用简体中文”" in built.context.text
    assert built.context.text.count("报告都用简体中文") == 1


def test_tool_mode_fills_the_profile_from_identity_statements(
    container: Container, runner: LocalRunner
) -> None:
    seed(container, runner, ["我叫林晓雨，住在青岛。", "I'm allergic to penicillin.", "上周我去了杭州出差。"])
    built = container.context.build(S, "book a table for dinner", mode=Mode.TOOL, now=LATER)
    slots = {s.name.value: [i.text for i in s.items] for s in built.context.slots}
    assert set(slots) == {"constraints", "profile", "tool_state", "recall"}
    assert "我叫林晓雨" in slots["profile"]
    assert any("青岛" in t for t in slots["profile"])
    assert "I'm allergic to penicillin." in slots["profile"]
    assert "Profile" in built.context.text  # english query -> english headings
    assert set(built.context.used_memory_ids) >= {m.record.memory_id for m in built.memories}


def test_react_mode_renders_the_session_state(container: Container, runner: LocalRunner, api: Any) -> None:
    seed(container, runner, ["I'm allergic to penicillin."])
    state = {
        "plan": {
            "goal": "plan a trip to Kyoto",
            "step": "book hotel",
            "done": ["flights"],
            "pending": ["rail pass"],
        },
        "task_memory": ["hotel A is full"],
        "tool_state": {
            "available": ["search_hotels"],
            "recent_calls": [{"tool": "search_hotels", "status": "ok"}],
        },
    }
    assert api("PUT", "/v1/sessions/s1/state", state)[0] == 200
    status, body = api("POST", "/v1/context", {"query": "what next?", "mode": "react", "session_id": "s1"})
    assert status == 200
    assert body["slots"]["planner"]["items"][:2] == [
        "goal: “plan a trip to Kyoto”",
        "current step: “book hotel”",
    ]
    assert body["slots"]["task_mem"]["items"] == ["hotel A is full"]
    assert "“search_hotels”: “ok”" in body["slots"]["tool_state"]["items"]
    assert "## Current plan" in body["context"]


def test_context_injection_is_audited_with_ids_only(container: Container, runner: LocalRunner) -> None:
    seed(container, runner, ["I'm allergic to penicillin."])
    built = container.context.build(S, "dinner", mode=Mode.CHAT, now=LATER)
    events = [e for e in container.audit.list(S, limit=50) if e.action == "context_injected"]
    assert len(events) == 1
    assert events[0].details["memory_ids"] == list(built.context.used_memory_ids)
    assert "penicillin" not in repr(events[0].details)


def test_nothing_recalled_injects_nothing(container: Container) -> None:
    for mode in Mode:
        built = container.context.build(S, "hello", mode=mode, now=LATER)
        assert built.context.text == ""
        assert built.memories == []
    assert [e for e in container.audit.list(S, limit=10) if e.action == "context_injected"] == []


# ---------------------------------------------------------------------------- slot channel, floor


def test_a_memory_stating_the_asked_attribute_gets_the_slot_bonus_over_http(
    container: Container, runner: LocalRunner, api: Any
) -> None:
    seed(container, runner, [*FACTS, "We relocated to Denver last month and we're still unpacking."])
    for query in ("Which city do I live in?", "where do I live these days?"):
        status, body = api("POST", "/v1/recall", {"query": query, "k": 10})
        assert status == 200
        slots = {m["content"]: m["score_components"].get("slot") for m in body["memories"]}
        assert slots["We relocated to Denver last month"] == 1.0, query
        # the sister's city is another subject's: no bonus
        assert slots.get("My sister lives in Auckland.") is None, query


def test_the_relevance_ratio_setting_keeps_unrelated_memories_out_over_http(
    tmp_path: Path, clock: ManualClock
) -> None:
    settings = load_settings(data_dir=tmp_path / "data", embedder="hash", relevance_ratio=0.5)
    c = bootstrap(settings, clock=clock, embedder=HashEmbedder())
    seed(c, LocalRunner(c))
    status, body = Api(c)("POST", "/v1/recall", {"query": "penicillin allergy", "k": 6})
    assert status == 200
    assert [m["content"] for m in body["memories"]] == ["I'm allergic to penicillin."]
    # without the ratio, the hash embedder's noise links every fact to the query
    plain = bootstrap(load_settings(data_dir=tmp_path / "plain", embedder="hash"), clock=clock)
    seed(plain, LocalRunner(plain))
    assert len(contents(plain, "penicillin allergy", k=6)) == 6


def test_a_warmed_container_compiles_no_pattern_on_a_request(
    container: Container, runner: LocalRunner
) -> None:
    """`agentmem serve` and its workers call Container.warm() before the first request: after
    it, ingesting turns and building contexts in both languages compile nothing more."""
    from agentmem.domain import lazy_re

    container.warm()
    made = len(lazy_re._MADE)
    assert made > 100 and all(p.is_compiled for p in lazy_re._MADE)
    seed(container, runner)
    for query in ("Which medicine am I allergic to?", "我女儿在学什么？", "where does my sister live"):
        container.context.build(S, query, mode=Mode.CHAT, now=LATER)
        container.recall.recall(S, query, k=3, now=LATER)
    assert len(lazy_re._MADE) == made
    assert all(p.is_compiled for p in lazy_re._MADE)
