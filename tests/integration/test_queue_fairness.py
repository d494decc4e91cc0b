"""Fairness of the local queue (issue 9): a tenant at its share of the queue gets 429 and no other
tenant ever does because of it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.adapters.embedded.wiring import build_embedded
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.errors import QueueFull
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def turns(tenant: str, count: int, user: str = "u1", start: int = 0) -> list[TurnMessage]:
    scope = Scope(tenant, user)
    return [
        TurnMessage.from_turn(
            Turn(
                scope=scope,
                session_id="s1",
                user="hi",
                assistant="",
                at=T0,
                message_id=f"{tenant}-{user}-{i}",
            )
        )
        for i in range(start, start + count)
    ]


def test_a_flooding_tenant_hits_its_share_and_the_others_keep_theirs(tmp_path: Path) -> None:
    queue = SqliteTurnQueue(tmp_path / "q.db", capacity=100, tenant_capacity=25, clock=ManualClock(T0).now)
    for user in ("u1", "u2", "u3"):  # the share is the tenant's, whichever of its users floods
        queue.send(turns("flood", 8, user))
    with pytest.raises(QueueFull) as caught:
        queue.send(turns("flood", 2, "u4"))
    assert caught.value.details["limit"] == "tenant" and caught.value.details["tenant_capacity"] == 25
    queue.send(turns("flood", 1, "u4"))  # exactly its share
    for tenant in ("quiet", "other", "flood2"):  # every other tenant still gets its whole share
        assert len(queue.send(turns(tenant, 25))) == 25
    with pytest.raises(QueueFull) as caught:  # now the queue itself is full (four full shares)
        queue.send(turns("fifth", 1))
    assert caught.value.details["limit"] == "queue"
    assert queue.stats()["refused"] == 3
    # a tenant's share frees as its turns are processed
    while received := queue.receive(10, 30):
        queue.delete_batch([m.receipt_handle for m in received])
    assert len(queue.send(turns("flood", 25, "u9"))) == 25


def test_tenant_names_that_share_a_prefix_are_counted_apart(tmp_path: Path) -> None:
    queue = SqliteTurnQueue(tmp_path / "q.db", capacity=10, tenant_capacity=3, clock=ManualClock(T0).now)
    queue.send(turns("t1", 3))
    queue.send(turns("t10", 3))  # "t1" is a prefix of "t10": separate shares
    queue.send(turns("t1-x", 3))
    with pytest.raises(QueueFull):
        queue.send(turns("t1", 1, start=9))


def test_through_the_api_one_tenants_flood_never_gives_another_a_429(tmp_path: Path, api: Any) -> None:
    settings = load_settings(data_dir=tmp_path, embedder="hash", queue_capacity=40)
    assert settings.tenant_queue_capacity() == 10  # a quarter by default
    assert load_settings(queue_capacity=40, queue_tenant_capacity=99).tenant_queue_capacity() == 40
    clock = ManualClock(T0)
    adapters = build_embedded(settings, clock, HashEmbedder())
    queue = SqliteTurnQueue(
        tmp_path / "fair-queue.db",
        capacity=40,
        tenant_capacity=settings.tenant_queue_capacity(),
        clock=clock.now,
    )
    container = bootstrap(settings, replace(adapters, queue=queue), clock)
    Api = type(api)  # the shared fixture's caller, on this container
    flood, quiet = Api(container, tenant="flood"), Api(container, tenant="quiet", user="u7")
    statuses = [flood("POST", "/v1/turns", {"session_id": "s1", "user": f"turn {i}"})[0] for i in range(30)]
    assert statuses.count(202) == 10 and statuses.count(429) == 20
    status, body = flood("POST", "/v1/turns", {"session_id": "s1", "user": "again"})
    assert status == 429 and body["error"] == "queue_full" and body["details"]["limit"] == "tenant"
    assert [quiet("POST", "/v1/turns", {"session_id": "s1", "user": f"q {i}"})[0] for i in range(10)] == [
        202
    ] * 10
