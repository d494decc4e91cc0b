"""Extraction by meaning through the HTTP API (POST /v1/turns -> ingest -> GET /v1/memories), in
Chinese and English: an ordinary answer is kept without repeating the question's words, an
accepted recommendation becomes the user's choice, small talk and the assistant's pleasantries
store nothing, abbreviations do not split a fact, and entities reach the stored memory. Also the
demo: it prints only what a user would want stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import Api

from agentmem.bootstrap import Container
from agentmem.domain.models import Scope, Status
from agentmem_dev.emulator.runner import LocalRunner

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def post_turns(api: Api, runner: LocalRunner, *pairs: tuple[str, str], session: str = "s1") -> None:
    for i, (user, assistant) in enumerate(pairs):
        at = (T0 + timedelta(minutes=i)).isoformat()
        status, _ = api(
            "POST", "/v1/turns", {"session_id": session, "user": user, "assistant": assistant, "at": at}
        )
        assert status == 202
        runner.drain()


def contents(api: Api) -> list[str]:
    status, body = api("GET", "/v1/memories")
    assert status == 200
    return [m["content"] for m in body["memories"]]


def accepted_into(api: Api, container: Container) -> list[str]:
    """The contents of the memories the last turn wrote or reinforced (the test embedder may read
    the choice as a duplicate of the anchored answer it accepts, and reinforce that one)."""
    _, listed = api("GET", "/v1/memories")
    last = container.turn_log.recent_turns(Scope("t1", "u1"), "s1", 1)[0]
    outcome = container.turn_log.processed_outcome(Scope("t1", "u1"), last.message_id) or {}
    ids = set(outcome.get("written") or []) | set(outcome.get("reinforced") or [])
    return [m["content"] for m in listed["memories"] if m["id"] in ids]


def test_an_ordinary_chinese_answer_and_its_acceptance_are_stored(
    api: Api, runner: LocalRunner, container: Container
) -> None:
    post_turns(api, runner, ("我应该用什么数据库?", "你的场景适合PostgreSQL。"))
    assert contents(api) == ["我应该用什么数据库? 你的场景适合PostgreSQL。"]  # no shared word needed
    post_turns(api, runner, ("就装这个", "好的，祝顺利！"))
    chosen = accepted_into(api, container)
    assert chosen and all("PostgreSQL" in c for c in chosen)
    assert not any("祝顺利" in c or c == "就装这个" for c in contents(api))


def test_an_english_acceptance_without_naming_the_choice(
    api: Api, runner: LocalRunner, container: Container
) -> None:
    post_turns(api, runner, ("Which laptop should I buy?", "I'd recommend the MacBook Air M3."))
    post_turns(api, runner, ("Sold.", "Great choice!"))
    chosen = accepted_into(api, container)
    assert chosen and all("MacBook Air M3" in c for c in chosen)
    assert not any("Great choice" in c for c in contents(api))


def test_an_acceptance_in_another_session_accepts_nothing(api: Api, runner: LocalRunner) -> None:
    post_turns(api, runner, ("Which laptop should I buy?", "I'd recommend the MacBook Air M3."), session="a")
    before = contents(api)
    post_turns(api, runner, ("Sold.", "Great!"), session="b")
    assert contents(api) == before


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        ("今天天气不错", "是啊，适合出去走走！"),
        ("哈哈哈", "😄"),
        ("Nice weather today, haha.", "It really is! Enjoy the sunshine."),
        ("Thanks, you're so helpful!", "Happy to help!"),
    ],
)
def test_small_talk_stores_nothing(api: Api, runner: LocalRunner, user: str, assistant: str) -> None:
    post_turns(api, runner, (user, assistant))
    assert contents(api) == []


def test_the_reply_to_a_remember_request_is_not_a_user_fact(api: Api, runner: LocalRunner) -> None:
    post_turns(
        api,
        runner,
        (
            "我的手机号是13812345678，麻烦记一下。另外我养了一只叫豆豆的柯基。",
            "不建议保存手机号。豆豆一定很可爱！",
        ),
    )
    assert contents(api) == ["我养了一只叫豆豆的柯基。"]


def test_abbreviations_keep_a_fact_whole_and_entities_are_stored(
    api: Api, runner: LocalRunner, container: Container
) -> None:
    post_turns(api, runner, ("I moved to St. Louis last year. My doctor is Dr. Patel at Mercy Hospital.", ""))
    stored = contents(api)
    assert "I moved to St. Louis last year." in stored
    assert any(c.startswith("My doctor is Dr. Patel") for c in stored)
    post_turns(api, runner, ("我同事王小明下周去杭州出差。", ""), session="s2")
    records = container.store.list(Scope("t1", "u1"), statuses=(Status.ACTIVE,), limit=50).items
    entities = {e for r in records for e in r.entities}
    assert {"St. Louis", "Dr. Patel", "Mercy Hospital", "王小明", "杭州"} <= entities


def test_the_demo_prints_only_what_a_user_would_want_stored(capsys: pytest.CaptureFixture[str]) -> None:
    from agentmem_dev.demo import run_demo

    assert run_demo(embedder="hash") == 0
    out = capsys.readouterr().out
    memories = out.split("== memories ==")[1].split("== context")[0]
    assert "麻烦记一下" not in memories and "不建议保存手机号" not in memories and "可爱" not in memories
    assert "天气" not in memories and "13812345678" not in memories
    assert "我养了一只叫豆豆的柯基。" in memories and "我选定了PostgreSQL" in memories
    assert "(superseded) 我住在上海浦东。" in memories and "我上个月搬到北京海淀了。" in memories
