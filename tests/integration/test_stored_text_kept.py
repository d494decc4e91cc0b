"""Stored text keeps its characters through every entrance (issue 37): the guards judge a
normalised view, the store gets what was written minus its redactions — a Russian user's
"Москва" is not folded to Latin look-alikes, full-width text is not narrowed."""

from __future__ import annotations

from typing import Any

from agentmem.bootstrap import Container
from agentmem.domain.models import Scope, Status
from agentmem_dev.emulator.runner import LocalRunner

S = Scope("t1", "u1")
TEXTS = ["Я переехал в Москва-Сити", "Пиши мне на русском языке", "Ｗｉｄｅ ｔｅｘｔ ｏｆ ｍｉｎｅ"]


def test_explicit_writes_and_patches_keep_the_characters(api: Any, container: Container) -> None:
    for text in TEXTS:
        status, body = api("POST", "/v1/memories", {"content": text, "tags": ["Москва"]})
        assert status == 201, body
        assert body["memory"]["content"] == text and body["memory"]["tags"] == ["Москва"]
    status, body = api("POST", "/v1/memories", {"content": "Мой номер １３８１２３４５６７８, город Москва"})
    assert status == 201 and body["memory"]["content"] == "Мой номер [PHONE], город Москва"
    status, body = api("PATCH", f"/v1/memories/{body['memory']['id']}", {"content": "Город: Москва"})
    assert status == 200 and body["content"] == "Город: Москва"


def test_a_turn_keeps_the_characters(api: Any, runner: LocalRunner, container: Container) -> None:
    turn = {"session_id": "s1", "message_id": "m1", "user": "Я живу в Москва-Сити и пишу на русском языке."}
    assert api("POST", "/v1/turns", turn)[0] == 202
    runner.drain()
    raw = container.turn_log.recent_turns(S, "s1", 10)
    assert raw and raw[0].user == turn["user"]
    active = container.store.list(S, statuses=(Status.ACTIVE,), limit=20).items
    assert all("Mockba" not in r.content and "pycckom" not in r.content for r in active)
