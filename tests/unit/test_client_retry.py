"""The client's retries and error mapping over an ``httpx.MockTransport`` (no socket): what is
retried (429 always; 5xx and broken connections only when the call is idempotent), how long it
waits (Retry-After in seconds or as an HTTP date, else jittered backoff), where it stops
(attempts, total time), and the typed error it raises — for the sync and the async client alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from agentmem_client import (
    AgentMemClient,
    AgentMemTransportError,
    AsyncAgentMemClient,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
    RetryPolicy,
    ServiceUnavailableError,
    UnexpectedResponseError,
)
from agentmem_client.errors import AgentMemClientError, AgentMemHTTPError, ClientRequestError, error_from
from agentmem_client.retry import Failure, parse_retry_after

HEALTH = {"status": "ok", "backend": "local", "embedder": "hash"}
ACCEPTED = {"accepted": 1, "message_ids": ["m"]}
MEMORY = {
    "id": "mem-1",
    "content": "I live in Qingdao.",
    "category": "identity",
    "layer": "long_term",
    "importance": 0.5,
    "importance_source": "explicit",
    "confidence": "stated",
    "source": "explicit",
    "source_refs": {},
    "version": 1,
    "status": "active",
    "pinned": False,
}
Answer = httpx.Response | Exception


def script(*answers: Answer) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering the scripted responses (or raising the scripted errors) in turn."""
    seen: list[httpx.Request] = []
    pending = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = pending.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handler), seen


def error(status: int, code: str, headers: dict[str, str] | None = None, **details: Any) -> httpx.Response:
    body = {"error": code, "message": f"{code} happened", "details": details or None}
    return httpx.Response(status, json=body, headers=headers)


class Waits:
    """The sleeps a client asked for, on a clock they advance (nothing really waits)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


POLICY = RetryPolicy(max_attempts=4, base_delay_s=0.5, max_delay_s=4.0, max_total_s=30.0, rng=lambda: 1.0)


def sync_client(transport: httpx.MockTransport, waits: Waits, policy: RetryPolicy = POLICY) -> AgentMemClient:
    return AgentMemClient(
        "http://agentmem.test/prod/",
        token="tok",
        tenant_id="t1",
        user_id="u1",
        retry=policy,
        transport=transport,
        sleep=waits.sleep,
        monotonic=waits.monotonic,
    )


def run_both(
    answers: Callable[[], tuple[Answer, ...]],
    act: str,
    *args: Any,
    policy: RetryPolicy = POLICY,
    **kwargs: Any,
) -> list[tuple[Any, list[httpx.Request], Waits]]:
    """Run ``client.<act>(*args, **kwargs)`` on a sync and an async client, each over its own
    copy of the script: (result or the exception raised, requests seen, waits) per client."""
    out = []
    transport, seen = script(*answers())
    waits = Waits()
    try:
        result: Any = getattr(sync_client(transport, waits, policy), act)(*args, **kwargs)
    except Exception as exc:
        result = exc
    out.append((result, seen, waits))

    transport, seen = script(*answers())
    awaits = Waits()

    async def go() -> Any:
        async with AsyncAgentMemClient(
            "http://agentmem.test/prod/",
            token="tok",
            tenant_id="t1",
            user_id="u1",
            retry=policy,
            transport=transport,
            sleep=awaits.asleep,
            monotonic=awaits.monotonic,
        ) as client:
            try:
                return await getattr(client, act)(*args, **kwargs)
            except Exception as exc:
                return exc

    out.append((asyncio.run(go()), seen, awaits))
    return out


def test_a_429_is_retried_after_its_retry_after_seconds_then_succeeds() -> None:
    for result, seen, waits in run_both(
        lambda: (
            error(429, "queue_full", {"Retry-After": "2"}),
            error(429, "queue_full", {"Retry-After": "3"}),
            httpx.Response(200, json=HEALTH),
        ),
        "health",
    ):
        assert result.status == "ok"
        assert len(seen) == 3
        assert [round(s) for s in waits.slept] == [2, 3]  # the server's waits, plus a little jitter
        assert all(s >= 2 for s in waits.slept)


def test_retry_after_as_an_http_date_is_honoured() -> None:
    when = datetime.now(UTC) + timedelta(seconds=5)
    date = format_datetime(when, usegmt=True)
    for result, _, waits in run_both(
        lambda: (error(503, "store_unavailable", {"Retry-After": date}), httpx.Response(200, json=HEALTH)),
        "health",
    ):
        assert result.status == "ok"
        assert 3 <= waits.slept[0] <= 6


def test_without_retry_after_the_backoff_doubles_up_to_its_ceiling() -> None:
    for result, seen, waits in run_both(
        lambda: (error(502, "bad_gateway"),) * 3 + (httpx.Response(200, json=HEALTH),),
        "health",
    ):
        assert result.status == "ok" and len(seen) == 4
        assert waits.slept == [0.5, 1.0, 2.0]


def test_retries_stop_after_max_attempts_and_raise_the_last_answer() -> None:
    for result, seen, _ in run_both(
        lambda: (error(429, "queue_full", {"Retry-After": "1"}),) * 4,
        "health",
    ):
        assert isinstance(result, RateLimitedError) and isinstance(result, ClientRequestError)
        assert len(seen) == 4
        assert (result.status, result.error, result.retry_after) == (429, "queue_full", 1.0)


def test_retries_stop_when_the_next_wait_would_pass_the_total_time() -> None:
    policy = RetryPolicy(max_attempts=10, max_total_s=5.0, rng=lambda: 1.0)
    for result, seen, waits in run_both(
        lambda: (error(503, "store_unavailable", {"Retry-After": "3"}),) * 10,
        "health",
        policy=policy,
    ):
        assert isinstance(result, ServiceUnavailableError)
        assert len(seen) == 2 and sum(waits.slept) <= 5.0


def test_a_retry_after_longer_than_the_policy_allows_is_raised_at_once() -> None:
    for result, seen, waits in run_both(
        lambda: (error(429, "queue_full", {"Retry-After": "3600"}),), "health"
    ):
        assert isinstance(result, RateLimitedError) and result.retry_after == 3600
        assert len(seen) == 1 and waits.slept == []


def test_turns_are_retried_on_a_5xx_with_the_same_client_generated_message_id() -> None:
    for result, seen, _ in run_both(
        lambda: (error(500, "internal_error"), httpx.ReadTimeout("slow"), httpx.Response(202, json=ACCEPTED)),
        "add_turn",
        "s1",
        "我住在青岛。",
        "好的。",
    ):
        assert result.accepted == 1
        bodies = [json.loads(r.content) for r in seen]
        ids = {b["turns"][0]["message_id"] for b in bodies}
        assert len(seen) == 3 and len(ids) == 1 and next(iter(ids)).startswith("msg-")
        assert bodies[0]["turns"][0]["user"] == "我住在青岛。"


def test_a_create_is_resent_after_a_5xx_or_a_lost_answer_with_the_same_idempotency_key() -> None:
    created = {"memory": MEMORY, "redacted": []}
    for result, seen, _ in run_both(
        lambda: (error(502, "bad_gateway"), httpx.ReadError("reset"), httpx.Response(201, json=created)),
        "create_memory",
        "I like tea.",
    ):
        assert result.memory.id == "mem-1" and len(seen) == 3
        keys = {r.headers["Idempotency-Key"] for r in seen}
        assert len(keys) == 1 and next(iter(keys)).startswith("agentmem-")
    for _result, seen, _ in run_both(
        lambda: (httpx.Response(201, json=created),), "create_memory", "I like tea.", idempotency_key="k-1"
    ):
        assert seen[0].headers["Idempotency-Key"] == "k-1"


def test_two_creates_send_two_keys() -> None:
    created = {"memory": MEMORY, "redacted": []}
    (_, first, _), (_, second, _) = run_both(
        lambda: (httpx.Response(201, json=created),), "create_memory", "a"
    )
    assert first[0].headers["Idempotency-Key"] != second[0].headers["Idempotency-Key"]


def test_a_create_is_resent_after_a_429_or_a_refused_connection() -> None:
    created = {"memory": MEMORY, "redacted": []}
    for result, seen, _ in run_both(
        lambda: (
            error(429, "queue_full", {"Retry-After": "0"}),
            httpx.ConnectError("refused"),
            httpx.Response(201, json=created),
        ),
        "create_memory",
        "I live in Qingdao.",
    ):
        assert result.memory.id == "mem-1" and len(seen) == 3


def test_connection_failures_that_outlast_the_retries_raise_a_transport_error() -> None:
    for result, seen, _ in run_both(lambda: (httpx.ConnectError("refused"),) * 4, "health"):
        assert isinstance(result, AgentMemTransportError) and isinstance(result, AgentMemClientError)
        assert len(seen) == 4 and result.details["attempts"] == 4


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "invalid_request", InvalidRequestError),
        (404, "not_found", NotFoundError),
        (409, "version_conflict", ConflictError),
        (422, "invalid_request", InvalidRequestError),
        (418, "teapot", ClientRequestError),
    ],
)
def test_4xx_answers_are_never_retried_and_raise_their_class(status: int, code: str, cls: type) -> None:
    for result, seen, _ in run_both(lambda: (error(status, code, reasons=["pii"]),), "get_memory", "mem-1"):
        assert type(result) is cls and len(seen) == 1
        assert (result.status, result.error, result.message) == (status, code, f"{code} happened")
        assert result.details == {"reasons": ["pii"]}


def test_a_gateway_page_that_is_not_json_still_maps_to_a_typed_error() -> None:
    exc = error_from(502, b"<html><body>Bad Gateway</body></html>")
    assert isinstance(exc, ServiceUnavailableError)
    assert exc.error == "http_502" and "Bad Gateway" in exc.message
    api_gateway = error_from(403, b'{"message": "Forbidden"}')
    assert (api_gateway.error, api_gateway.message) == ("http_403", "Forbidden")
    schema = error_from(
        422, json.dumps({"error": "invalid_request", "message": "m", "details": [{"loc": ["k"]}]}).encode()
    )
    assert schema.details_raw == [{"loc": ["k"]}] and isinstance(schema, AgentMemHTTPError)


def test_a_success_whose_body_is_not_the_model_is_an_unexpected_response() -> None:
    for result, _, _ in run_both(lambda: (httpx.Response(200, json={"nope": 1}),), "health"):
        assert isinstance(result, UnexpectedResponseError) and result.status == 200


def test_requests_carry_auth_and_scope_headers_and_keep_the_stage_path() -> None:
    for _, seen, _ in run_both(lambda: (httpx.Response(200, json=MEMORY),), "get_memory", "mem/1 é"):
        request = seen[0]
        assert request.url.raw_path == b"/prod/v1/memories/mem%2F1%20%C3%A9"
        assert request.headers["authorization"] == "Bearer tok"
        assert (request.headers["x-tenant-id"], request.headers["x-user-id"]) == ("t1", "u1")


def test_bodies_are_built_by_the_api_input_models_before_anything_is_sent() -> None:
    transport, seen = script()
    client = sync_client(transport, Waits())
    with pytest.raises(ValueError, match="k"):
        client.recall("where?", k=0)  # RecallIn: 1 <= k <= 100
    with pytest.raises(ValueError):
        client.create_memory("x", importance=2.0)  # MemoryIn: importance <= 1
    with pytest.raises(ValueError):
        client.add_turns([{"session_id": "s1", "user": "   "}])  # TurnIn: blank user text
    assert seen == []


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0", 0.0),
        ("7", 7.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("nan", None),
    ],
)
def test_parse_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_parse_retry_after_http_date_counts_from_now_and_is_never_negative() -> None:
    now = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)
    assert parse_retry_after("Tue, 01 Dec 2026 20:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Tue, 01 Dec 2026 19:00:00 GMT", now=now) == 0.0


def test_policy_names_what_it_retries() -> None:
    policy = RetryPolicy()
    assert policy.retryable(status=429, failure=None, idempotent=False)
    assert policy.retryable(status=503, failure=None, idempotent=True)
    assert not policy.retryable(status=503, failure=None, idempotent=False)
    assert not policy.retryable(status=501, failure=None, idempotent=True)  # not implemented: final
    assert not policy.retryable(status=409, failure=None, idempotent=True)
    assert policy.retryable(status=None, failure=Failure.NOT_SENT, idempotent=False)
    assert not policy.retryable(status=None, failure=Failure.MAYBE_SENT, idempotent=False)
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_full_jitter_stays_within_the_exponential_ceiling() -> None:
    for draw in (0.0, 0.3, 0.999):
        policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, rng=lambda draw=draw: draw)
        assert [policy.backoff(n) for n in (1, 2, 3, 4, 5)] == [
            pytest.approx(c * draw) for c in (1, 2, 4, 5, 5)
        ]


def status(state: str) -> httpx.Response:
    return httpx.Response(
        200, json={"message_id": "m1", "status": state, "reason": None, "memory_ids": [], "updated_at": None}
    )


def test_wait_for_turn_polls_until_the_turn_leaves_the_queue() -> None:
    for result, seen, waits in run_both(
        lambda: (error(404, "not_found"), status("queued"), status("queued"), status("processed")),
        "wait_for_turn",
        "m1",
        interval_s=0.5,
    ):
        assert result.status == "processed" and len(seen) == 4
        assert waits.slept == [0.5, 0.5, 0.5]
        assert {r.url.path for r in seen} == {"/prod/v1/turns/m1"}


def test_wait_for_turn_returns_the_last_status_at_its_deadline_and_raises_a_404_then() -> None:
    for result, seen, waits in run_both(
        lambda: (status("queued"),) * 10, "wait_for_turn", "m1", timeout_s=1.0
    ):
        assert result.status == "queued"
        assert sum(waits.slept) == pytest.approx(1.0) and len(seen) == 5
    for result, _, _ in run_both(
        lambda: (error(404, "not_found"),) * 10, "wait_for_turn", "m1", timeout_s=1.0
    ):
        assert isinstance(result, NotFoundError)
