"""The Lambda handlers with AWS-shaped events: ingest (SQS partial batch failures), projector
(DynamoDB Streams, replays and reordering), consolidate and reconcile (EventBridge schedule)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentmem.bootstrap import Container
from agentmem.domain.models import Category, MemoryRecord, Scope, Status, Turn
from agentmem.errors import StoreUnavailable
from agentmem.messages import TurnMessage
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.runner import LocalRunner

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
S = Scope("t1", "u1")
REJECTED = Scope("_rejected", "_rejected")


def body_of(t: Turn) -> str:
    return TurnMessage.from_turn(t).to_body()


def turn(mid: str, user: str, *, hours: float = 0, scope: Scope = S) -> Turn:
    return Turn(
        scope=scope, session_id="s1", user=user, assistant="", at=T0 + timedelta(hours=hours), message_id=mid
    )


def sqs(*bodies: tuple[str, str]) -> dict[str, Any]:
    return events.sqs_event(
        [events.sqs_record(qid, f"rh-{qid}", body, receive_count=1, sent_at=T0) for qid, body in bodies]
    )


def failures(response: dict[str, Any]) -> set[str]:
    return {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}


def index_state(c: Container, scope: Scope = S) -> dict[str, tuple[int, str]]:
    return {s.memory_id: (s.version, s.content_hash) for s in c.index.all_states(scope)}


def graph_state(c: Container, scope: Scope = S) -> dict[str, tuple[int, str]]:
    return {s.memory_id: (s.version, s.content_hash) for s in c.graph.all_states(scope)}


def active_truth(c: Container, scope: Scope = S) -> dict[str, tuple[int, str]]:
    return {r.memory_id: (r.version, r.content_hash) for r in c.store.list(scope, limit=500).items}


# ---------------------------------------------------------------------------- ingest


@pytest.mark.parametrize(
    ("body", "scope", "reason"),
    [
        ("this is not json", REJECTED, "malformed_json"),
        ("[1, 2, 3]", REJECTED, "invalid_fields"),
        (
            json.dumps(
                {"tenant_id": "t1", "user_id": "u1", "session_id": "s1", "at": "2026-01-05T09:00:00Z"}
            ),
            S,
            "invalid_fields",
        ),
        (
            json.dumps(
                {
                    "tenant_id": "t1",
                    "user_id": "u1",
                    "session_id": "s1",
                    "user": "hi",
                    "at": "soon",
                    "message_id": "m",
                }
            ),
            S,
            "at",
        ),
        (
            json.dumps(
                {
                    "tenant_id": "t1",
                    "user_id": "u1",
                    "session_id": "s1",
                    "user": "",
                    "at": "2026-01-05T09:00:00Z",
                    "message_id": "m",
                }
            ),
            S,
            "user",
        ),
        (
            json.dumps(
                {
                    "user": "I live in Oslo.",
                    "session_id": "s1",
                    "at": "2026-01-05T09:00:00Z",
                    "message_id": "m",
                }
            ),
            REJECTED,
            "tenant_id",
        ),
    ],
)
def test_malformed_messages_are_rejected_audited_and_not_retried(
    container: Container, body: str, scope: Scope, reason: str
) -> None:
    good = body_of(turn("ok-1", "I keep bees in my garden."))
    response = lambdas.invoke("ingest", sqs(("q-bad", body), ("q-good", good)), container)
    assert failures(response) == set()
    rejected = [e for e in container.audit.list(scope, limit=20) if e.action == "rejected"]
    assert len(rejected) == 1
    assert reason in (rejected[0].reason or "")
    assert rejected[0].details.get("queue_message_id") == "q-bad"
    assert [r.content for r in container.store.list(S).items] == ["I keep bees in my garden."]


class DownForUser:
    """The memory store, unreachable for one user's scope (a throttled partition, say)."""

    def __init__(self, inner: Any, user: str) -> None:
        self._inner = inner
        self._user = user

    def _check(self, args: tuple[Any, ...]) -> None:
        for arg in args:
            scope = arg if isinstance(arg, Scope) else getattr(arg, "scope", None)
            if isinstance(scope, Scope) and scope.user_id == self._user:
                raise StoreUnavailable("throttled")

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._check(args)
            return attr(*args, **kwargs)

        return call


def test_a_transient_failure_fails_only_its_message(container: Container) -> None:
    container.pipeline.store = DownForUser(container.store, "u-down")  # type: ignore[assignment]
    down = Scope("t1", "u-down")
    response = lambdas.invoke(
        "ingest",
        sqs(
            ("q-1", body_of(turn("a", "I keep bees in my garden."))),
            ("q-2", body_of(turn("b", "I live in Bergen.", scope=down))),
            ("q-3", body_of(turn("c", "My sister lives in Auckland."))),
        ),
        container,
    )
    assert failures(response) == {"q-2"}
    assert len(container.store.list(S).items) == 2
    # redelivered once the store is back: processed, nothing doubled
    container.pipeline.store = container.store
    response = lambdas.invoke(
        "ingest",
        sqs(("q-2", body_of(turn("b", "I live in Bergen.", scope=down)))),
        container,
    )
    assert failures(response) == set()
    assert [r.content for r in container.store.list(down).items] == ["I live in Bergen."]


def test_the_local_runner_retries_a_failed_message_until_it_succeeds(
    container: Container, runner: LocalRunner
) -> None:
    container.pipeline.store = DownForUser(container.store, "u1")  # type: ignore[assignment]
    container.queue.send([TurnMessage.from_turn(turn("m1", "I live in Bergen."))])
    assert runner.pump_queue() == 1
    assert runner.stats.ingest_failures == 1
    assert container.store.list(S).items == []
    container.pipeline.store = container.store
    container.clock.set(T0 + timedelta(minutes=5))  # past the retry delay
    runner.drain()
    assert [r.content for r in container.store.list(S).items] == ["I live in Bergen."]


# ---------------------------------------------------------------------------- projector


def stream_records(c: Container) -> list[dict[str, Any]]:
    return [row.to_stream_record() for row in c.adapters.changes.read_outbox(0, 100)]  # type: ignore[union-attr]


def test_projector_handles_insert_modify_remove_and_replays_converge(
    container: Container, clock: Any
) -> None:
    container.pipeline.ingest(turn("m1", "我住在成都。我养了一只柯基。"))
    container.pipeline.ingest(turn("m2", "我搬到重庆了。", hours=1))  # MODIFY (superseded) + INSERT
    container.pipeline.ingest(turn("m3", "I keep bees in my garden.", hours=2))
    bees = next(r for r in container.store.list(S).items if "bees" in r.content)
    container.admin.delete(S, bees.memory_id, now=clock.now(), actor="test", hard=True)  # REMOVE
    records = stream_records(container)
    assert {r["eventName"] for r in records} == {"INSERT", "MODIFY", "REMOVE"}

    response = lambdas.invoke("projector", {"Records": records}, container)
    assert failures(response) == set()
    expected = active_truth(container)
    assert set(expected) and all("bees" not in r.content for r in container.store.list(S).items)
    assert index_state(container) == expected
    assert graph_state(container) == expected

    # delivered again (at least once), and again in reverse order
    assert failures(lambdas.invoke("projector", {"Records": records}, container)) == set()
    assert index_state(container) == expected and graph_state(container) == expected
    assert failures(lambdas.invoke("projector", {"Records": list(reversed(records))}, container)) == set()
    assert index_state(container) == expected and graph_state(container) == expected
    hits = container.recall.recall(S, "成都 重庆 柯基 bees", k=10, now=T0 + timedelta(days=1)).memories
    assert {h.record.memory_id for h in hits} <= set(expected)


def test_projector_reverse_order_on_an_empty_projection_reaches_the_same_state(container: Container) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    container.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))
    records = stream_records(container)
    assert failures(lambdas.invoke("projector", {"Records": list(reversed(records))}, container)) == set()
    assert index_state(container) == active_truth(container)
    assert graph_state(container) == active_truth(container)


def test_projector_ignores_non_memory_items_and_fails_only_the_broken_record(container: Container) -> None:
    container.pipeline.ingest(turn("m1", "I play the cello."))
    good = stream_records(container)[0]
    not_memory = json.loads(json.dumps(good))
    not_memory["dynamodb"]["Keys"]["sk"]["S"] = "TURN#m1"
    broken = json.loads(json.dumps(good))
    broken["eventID"] = "999"
    broken["dynamodb"]["SequenceNumber"] = "999"
    broken["dynamodb"]["NewImage"] = {"pk": {"S": S.key}, "sk": {"S": good["dynamodb"]["Keys"]["sk"]["S"]}}
    response = lambdas.invoke("projector", {"Records": [not_memory, broken, good]}, container)
    assert failures(response) == {"999"}
    assert index_state(container) == active_truth(container)


# ---------------------------------------------------------------------------- schedules


def write_five(c: Container) -> None:
    for i in range(2):
        c.explicit.write(S, "I play the cello on Sundays", now=T0, request_id=f"r{i}")
    for i, other in enumerate(
        ["I keep bees in my garden", "My sister lives in Auckland", "Penicillin gives me a rash"]
    ):
        c.explicit.write(S, other, now=T0, request_id=f"u{i}")


def test_consolidate_handler_returns_its_report(
    container: Container, clock: Any, runner: LocalRunner
) -> None:
    write_five(container)
    runner.drain()
    clock.set(T0 + timedelta(days=10))
    report = lambdas.invoke("consolidate", events.scheduled_event("consolidate", at=clock.now()), container)
    assert set(report) >= {"scopes", "decayed", "merged", "deduplicated", "evicted", "conflicts"}
    assert report["scopes"] == 1
    # the two identical cello memories fold into one; the other four decay
    assert report["deduplicated"] == 1
    assert report["decayed"] == 4  # 0.7 x 0.995^10 = 0.6658: moved more than 0.01
    assert report["evicted"] == 0 and report["conflicts"] == 0
    assert [r.importance for r in container.store.list(S).items] == [
        pytest.approx(0.7 * 0.995**10, abs=1e-4)
    ] * 4
    # nothing pending any more: a second run does nothing
    again = lambdas.invoke("consolidate", events.scheduled_event("consolidate", at=clock.now()), container)
    assert again["scopes"] == 0


def test_consolidate_deduplicates_exact_duplicates(
    container: Container, clock: Any, runner: LocalRunner
) -> None:
    write_five(container)
    runner.drain()
    clock.set(T0 + timedelta(days=10))
    report = lambdas.invoke("consolidate", events.scheduled_event("consolidate", at=clock.now()), container)
    assert report["deduplicated"] == 1
    assert len([r for r in container.store.list(S).items if "cello" in r.content]) == 1


def test_consolidate_below_the_trigger_waits_unless_forced(container: Container, clock: Any) -> None:
    container.explicit.write(S, "I play the cello", now=T0, request_id="r1")
    assert (
        lambdas.invoke("consolidate", events.scheduled_event("consolidate", at=T0), container)["scopes"] == 0
    )
    forced = lambdas.invoke(
        "consolidate",
        events.scheduled_event("consolidate", at=T0, detail={"force": True}),
        container,
    )
    assert forced["scopes"] == 1


def test_reconcile_handler_reports_a_clean_state(container: Container, runner: LocalRunner) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    runner.drain()
    report = lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    assert set(report) >= {"checked", "missing", "stale", "orphan", "repaired", "failed", "repair_keys"}
    assert (report["missing"], report["stale"], report["orphan"], report["repaired"], report["failed"]) == (
        0,
        0,
        0,
        0,
        0,
    )
    assert report["checked"] == 4  # two memories, two projections


def test_reconcile_removes_an_orphan(container: Container, runner: LocalRunner) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    runner.drain()
    real = container.store.list(S).items[0]
    ghost = MemoryRecord(
        scope=S,
        memory_id="01KE6P4YM0ZZZZZZZZZZZZZZZZ",
        content="a memory the store never had",
        category=Category.FACT,
        embedding=real.embedding,
        embedding_model=real.embedding_model,
        created_at=T0,
    )
    container.index.upsert(ghost)
    container.graph.upsert_memory(ghost)
    report = lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    assert report["orphan"] == 2
    assert "index:01KE6P4YM0ZZZZZZZZZZZZZZZZ:1:orphan" in report["repair_keys"]
    assert index_state(container) == active_truth(container)
    assert graph_state(container) == active_truth(container)
    assert lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)["orphan"] == 0


def test_reconcile_removes_a_projection_of_a_superseded_memory(
    container: Container, runner: LocalRunner
) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto."))
    runner.drain()
    old = container.store.list(S).items[0]
    container.pipeline.ingest(turn("m2", "I moved to Lisbon.", hours=1))
    # the projector never saw the supersede: the index still shows Porto
    container.index.upsert(container.store.get(S, container.store.list(S).items[0].memory_id))  # type: ignore[arg-type]
    assert old.memory_id in index_state(container)
    lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    assert old.memory_id not in index_state(container)
    assert container.store.get(S, old.memory_id).status is Status.SUPERSEDED  # type: ignore[union-attr]


def test_reconcile_restores_a_deleted_index_document(container: Container, runner: LocalRunner) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto. I play the cello."))
    runner.drain()
    victim = container.store.list(S).items[0]
    container.index.delete(S, victim.memory_id, victim.version)  # leaves a tombstone at that version
    assert victim.memory_id not in index_state(container)
    report = lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    # The tombstone refuses the same version, so the source of truth writes the record again as
    # a new version (requeued, not repaired in place) and the change stream projects it.
    assert (report["missing"], report["repaired"], report["requeued"], report["failed"]) == (1, 0, 1, 0)
    assert container.store.get(S, victim.memory_id).version == victim.version + 1  # type: ignore[union-attr]
    runner.drain()
    assert index_state(container) == active_truth(container)
    assert graph_state(container) == active_truth(container)
    again = lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    assert (again["missing"], again["stale"], again["orphan"], again["requeued"]) == (0, 0, 0, 0)


def test_reconcile_projects_memories_the_stream_never_delivered(container: Container) -> None:
    container.pipeline.ingest(
        turn("m1", "I live in Porto. I play the cello.")
    )  # no runner: nothing projected
    report = lambdas.invoke("reconcile", events.scheduled_event("reconcile", at=T0), container)
    assert report["missing"] == 4
    assert index_state(container) == active_truth(container)
    assert graph_state(container) == active_truth(container)


def test_reconcile_handler_walks_the_segment_of_its_event_and_saves_the_cursor(
    container: Container, runner: LocalRunner
) -> None:
    container.pipeline.ingest(turn("m1", "I live in Porto."))
    runner.drain()
    reports = [
        lambdas.invoke(
            "reconcile",
            {**events.scheduled_event("reconcile", at=T0), "segment": i, "segments": 2},
            container,
        )
        for i in range(2)
    ]
    assert [(r["segment"], r["segments"]) for r in reports] == [(0, 2), (1, 2)]
    assert all(r["pass_completed"] and not r["budget_exhausted"] and r["cursor"] is None for r in reports)
    assert sum(int(r["scopes_checked"]) for r in reports) == 1  # the one user, in one segment only
    assert all(r["last_pass"] is not None for r in reports)
    for segment in range(2):
        saved = container.store.ledger.reconcile_cursor(segment, 2)
        assert saved is not None and saved.last_pass is not None


class Ticking:
    """A Lambda context whose remaining time shrinks by ``step_ms`` each time it is read."""

    function_name = "ingest"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:ingest"
    aws_request_id = "req-1"

    def __init__(self, remaining_ms: int, step_ms: int) -> None:
        self.remaining_ms, self.step_ms = remaining_ms, step_ms

    def get_remaining_time_in_millis(self) -> int:
        self.remaining_ms -= self.step_ms
        return self.remaining_ms


def test_ingest_leaves_the_records_it_has_no_time_for_to_redelivery(container: Container) -> None:
    """Near its timeout the ingest function starts no more records: they fail alone and come back,
    instead of the batch timing out and every message of it being received again."""
    margin_ms = int(container.settings.ingest_margin_s * 1000)
    handler = lambdas.load("ingest").handler
    bodies = [(f"q-{i}", body_of(turn(f"m-{i}", f"I visited city number {i}."))) for i in range(4)]
    # two records fit before the remaining time falls under the margin
    response = handler(sqs(*bodies), Ticking(margin_ms + 2500, 1000), container=container)
    assert failures(response) == {"q-2", "q-3"}
    processed = {m for m in ("m-0", "m-1", "m-2", "m-3") if container.turn_log.is_processed(S, m)}
    assert processed == {"m-0", "m-1"}
    response = handler(sqs(*bodies[2:]), Ticking(600_000, 1), container=container)
    assert failures(response) == set()
    assert all(container.turn_log.is_processed(S, m) for m in ("m-2", "m-3"))
