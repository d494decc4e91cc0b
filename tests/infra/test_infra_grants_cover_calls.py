"""Every AWS call a function makes is allowed by **its own role's policy in the synthesized
template** — derived from the calls, not compared with ``config.ACCESS``.

The run: the real handlers (``functions/*``) on moto's DynamoDB and SQS (OpenSearch and Neptune
replaced by the embedded adapters, whose calls are HTTP, not SDK), driven through a user's life:
turns in English and Chinese, the projector on the stream, every api route family, consolidation,
reconciliation, an erase, and a turn that arrives after its user's erase. Each SDK call is
recorded with the function that made it (:mod:`iam_calls`), turned into the IAM requests AWS
authorises for it, and evaluated against that function's resolved statements. A missing action,
a grant on the wrong table or an environment variable the template forgets fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from iam_calls import CallRecorder, Request, TemplatePolicies, denied, event_bus_arn, requests_of, table_arn
from infra_helpers import Synth

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.dynamodb_stream import StreamReader
from agentmem_dev.emulator import events, lambdas
from support.aws import REGION, Tables, moto_tables

pytestmark = pytest.mark.xdist_group("cdk")

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
FUNCTIONS = ("ingest", "api", "projector", "consolidate", "reconcile", "reindex")


class NewModel(HashEmbedder):
    """The model the reindex function moves to (another id and dimension than the stack's)."""

    model_id = "hash/ngram-64"

    def __init__(self) -> None:
        super().__init__(64)


WRITE = "memory:read,memory:write,memory:permanent"
OPERATOR = WRITE + ",webhooks:manage"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Tables, Container, ManualClock]]:
    with moto_tables() as tables:
        clock = ManualClock(T0)
        queue_url = tables.sqs.create_queue(QueueName="agentmem-ingest")["QueueUrl"]
        dlq_url = tables.sqs.create_queue(QueueName="agentmem-ingest-dlq")["QueueUrl"]
        bus = "agentmem-dev-events"
        boto3.client("events", region_name=REGION).create_event_bus(Name=bus)
        settings = load_settings(
            backend="aws",
            embedder="hash",
            search_backend="local",
            graph_backend="local",
            local_projection_dir=tmp_path / "projections",
            queue_url=queue_url,
            dlq_url=dlq_url,
            event_bus_name=bus,
            webhook_role_arn="arn:aws:iam::123456789012:role/agentmem-dev-webhook-delivery",
            webhook_dlq_arn="arn:aws:sqs:eu-west-1:123456789012:agentmem-webhook-dlq",
            aws_region=REGION,
        )
        yield tables, bootstrap(settings, clock=clock, embedder=HashEmbedder()), clock


def api(
    container: Container,
    scope: Scope,
    method: str,
    path: str,
    body: Any = None,
    key: str | None = None,
    perms: str = WRITE,
) -> Any:
    event = events.api_event_as(scope.tenant_id, scope.user_id, method, path, body, perms)
    if key is not None:  # Idempotency-Key: the keyed write's own reads and writes are checked too
        event["headers"]["Idempotency-Key"] = key
        event["multiValueHeaders"]["Idempotency-Key"] = [key]
    result = lambdas.invoke("api", event, container)
    status = int(result["statusCode"])
    assert status < 400, (method, path, status, result.get("body"))
    text = result.get("body") or ""
    try:
        return json.loads(text)
    except ValueError:  # NDJSON (export), an empty body
        return text


def drain(tables: Tables, queue_url: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while batch := tables.sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]
    ).get("Messages"):
        found.extend(batch)
    return found


def ingest(tables: Tables, container: Container, turns: list[Turn]) -> None:
    queue_url = container.settings.queue_url
    assert queue_url
    container.queue.send([TurnMessage.from_turn(t) for t in turns])
    messages = drain(tables, queue_url)
    assert lambdas.invoke("ingest", events.sqs_event_of(messages), container) == {"batchItemFailures": []}
    for m in messages:
        tables.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])


def project(reader: StreamReader, container: Container) -> None:
    records = reader.read()
    assert lambdas.invoke("projector", {"Records": records}, container) == {"batchItemFailures": []}


def live(tables: Tables, container: Container, clock: ManualClock, recorder: CallRecorder) -> None:
    """A user's life through every function (each step must succeed, or the run proves nothing)."""
    reader = StreamReader(tables.streams, tables.stream_arn)
    ingest(
        tables,
        container,
        [
            Turn(ALICE, "s-1", "I live in Glasgow and I work as a pilot.", "Nice!", T0, "m-1"),
            Turn(BOB, "s-7", "我住在杭州西湖區，電話 13812345678，最近在學潛水。", "好！", T0, "m-2"),
        ],
    )
    project(reader, container)
    created = api(container, ALICE, "POST", "/v1/memories", {"content": "I prefer window seats."})
    memory_id = created["memory"]["id"]
    api(container, ALICE, "GET", "/v1/memories")
    api(container, ALICE, "GET", f"/v1/memories/{memory_id}")
    api(container, ALICE, "PATCH", f"/v1/memories/{memory_id}", {"content": "I prefer aisle seats."})
    api(container, ALICE, "GET", f"/v1/memories/{memory_id}/history")
    api(container, ALICE, "POST", "/v1/import", {"memories": [{"content": "I am allergic to peanuts."}]})
    for _ in range(2):  # a keyed write and its retry (the answer replayed)
        api(container, ALICE, "POST", "/v1/memories", {"content": "I drive a blue van."}, key="k-1")
    project(reader, container)
    api(container, ALICE, "POST", "/v1/context", {"query": "Where do I live?"})
    api(container, ALICE, "POST", "/v1/recall", {"query": "seats"})
    api(container, ALICE, "GET", "/v1/export")
    api(container, ALICE, "GET", "/v1/audit")
    api(container, ALICE, "GET", "/v1/conflicts")
    api(container, ALICE, "PUT", "/v1/sessions/s-1/state", {"task_memory": ["book a flight to Leeds"]})
    api(container, ALICE, "GET", "/v1/sessions/s-1/state")
    api(container, ALICE, "POST", "/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    hook = api(
        container, ALICE, "POST", "/v1/webhooks", {"url": "https://chat.example.com/h"}, perms=OPERATOR
    )
    api(container, ALICE, "GET", "/v1/webhooks", perms=OPERATOR)
    api(container, ALICE, "DELETE", f"/v1/webhooks/{hook['id']}", perms=OPERATOR)
    sent = api(
        container,
        ALICE,
        "POST",
        "/v1/turns",
        {"session_id": "s-1", "user": "I moved to Leeds.", "assistant": "Noted."},
    )
    api(container, ALICE, "GET", f"/v1/turns/{sent['message_ids'][0]}")
    dlq_url = container.settings.dlq_url
    assert dlq_url
    letter_body = TurnMessage.from_turn(Turn(ALICE, "s-1", "I drink tea.", "Ok.", T0, "m-dlq")).to_body()
    tables.sqs.send_message(QueueUrl=dlq_url, MessageBody=letter_body)
    letters = api(container, ALICE, "GET", "/v1/dead-letters")["dead_letters"]
    assert letters
    for letter in letters:
        api(container, ALICE, "POST", f"/v1/dead-letters/{letter['message_id']}/redrive")
    api(container, ALICE, "DELETE", f"/v1/memories/{memory_id}")
    project(reader, container)
    clock.advance(timedelta(hours=1))
    at = clock.now()
    scheduled = events.scheduled_event("consolidate", at=at, detail={"force": True})
    assert lambdas.invoke("consolidate", scheduled, container)

    # a turn of Bob's, sent before his erase and delivered after it
    queue_url = container.settings.queue_url
    assert queue_url
    container.queue.send([TurnMessage.from_turn(Turn(BOB, "s-7", "我養了一隻貓。", "好。", at, "m-late"))])
    late = drain(tables, queue_url)
    api(container, BOB, "DELETE", "/v1/users/bob")
    project(reader, container)
    assert lambdas.invoke("ingest", events.sqs_event_of(late), container) == {"batchItemFailures": []}

    # a turn of Carol's whose user's erase begins while it is being written: the erase has set
    # its barrier and not yet swept the partition (the operator's call: kept out of ingest's record)
    carol = Scope("acme", "carol")
    pipeline = container.ingest.pipeline
    write = pipeline.ingest

    def erased_meanwhile(turn: Turn) -> Any:
        outcome = write(turn)
        previous, recorder.current = recorder.current, None
        try:
            container.ledger.set_erase_barrier(carol, clock.now())
        finally:
            recorder.current = previous
        return outcome

    pipeline.ingest = erased_meanwhile  # type: ignore[method-assign]
    try:
        clock.advance(timedelta(minutes=1))
        ingest(tables, container, [Turn(carol, "s-9", "I live in York.", "Ok.", clock.now(), "m-race")])
    finally:
        del pipeline.ingest

    # Dave's record outlived the sweep of his erase (the barrier is set, the record predates it):
    # the reconciler removes it
    dave = Scope("acme", "dave")
    api(container, dave, "POST", "/v1/memories", {"content": "I live in Bath."})
    project(reader, container)
    clock.advance(timedelta(minutes=1))
    container.ledger.set_erase_barrier(dave, clock.now())
    report = lambdas.invoke("reconcile", {"segment": 0, "segments": 1}, container)
    assert report["erased"] >= 1 and report["failed"] == 0, report

    # the operator moves the stack to a new model: the reindex function (its own embedder and
    # index, the same tables) stages every memory, then switches them
    reindex = bootstrap(
        container.settings.model_copy(
            update={"local_projection_dir": container.settings.local_projection_dir.parent / "new-index"}
        ),
        clock=clock,
        embedder=NewModel(),
    )
    staged = lambdas.invoke("reindex", {"step": "stage"}, reindex)
    assert staged["pass_completed"] and staged["staged"] > 0, staged
    api(container, ALICE, "POST", "/v1/memories", {"content": "I collect stamps."})  # after staging
    switched = lambdas.invoke("reindex", {"step": "switch"}, reindex)
    assert switched["switched"] > 0 and switched["caught_up"] == 1 and switched["conflicts"] == 0, switched


@pytest.fixture
def recorded(world: tuple[Tables, Container, ManualClock]) -> tuple[CallRecorder, Container]:
    tables, container, clock = world
    recorder = CallRecorder()
    with recorder.recording(lambdas):
        live(tables, container, clock, recorder)
    return recorder, container


def test_every_call_of_every_function_is_granted_by_its_own_role(
    reindexing: Synth, recorded: tuple[CallRecorder, Container]
) -> None:
    recorder, container = recorded
    requests = recorder.requests(REGION)
    assert set(requests) == set(FUNCTIONS), "every function ran and called AWS"
    s = reindexing
    policies = TemplatePolicies(s.template, REGION, container.settings)
    missing: dict[str, list[Request]] = {}
    for name in FUNCTIONS:
        function_id = policies.function_id(f"agentmem {name}:")
        policies.bind(function_id)
        gaps = denied(policies.statements(function_id), requests[name])
        if gaps:
            missing[name] = gaps
    assert not missing, "calls the template's roles do not allow:\n" + "\n".join(
        f"  {fn}: {r.action} on {r.resource}" for fn, gaps in missing.items() for r in gaps
    )


def test_the_run_reaches_the_calls_a_first_deploy_broke_on(recorded: tuple[CallRecorder, Container]) -> None:
    """The calls the deploy review found ungranted are made by this run, so the check above sees
    them: the erase barrier's ConditionCheck in every create (ingest, api), and the DeleteItems
    of a turn that meets its user's erase (ingest): its L0 line on the session table, and the
    records it wrote in the race on the memory table; and the reconciler's removal of a record
    that predates its user's erase barrier (memory DeleteItem)."""
    recorder, container = recorded
    requests = recorder.requests(REGION)
    memory = table_arn(REGION, container.settings.table_memory)
    session = table_arn(REGION, container.settings.table_session)
    assert Request("dynamodb:ConditionCheckItem", memory) in requests["ingest"]
    assert Request("dynamodb:ConditionCheckItem", memory) in requests["api"]
    assert Request("dynamodb:DeleteItem", session) in requests["ingest"]
    assert Request("dynamodb:DeleteItem", memory) in requests["ingest"]
    assert Request("dynamodb:DeleteItem", memory) in requests["reconcile"]
    bus = event_bus_arn(REGION, str(container.settings.event_bus_name))
    for publisher in ("ingest", "api", "projector"):  # turn outcomes, the erase, memory changes
        assert Request("events:PutEvents", bus) in requests[publisher], publisher
    made = {r.action for r in requests["api"]}  # the webhook registry's calls (POST/GET/DELETE /v1/webhooks)
    assert {"events:CreateConnection", "events:PutTargets", "iam:PassRole", "events:DeleteRule"} <= made


def test_a_call_nobody_mapped_fails_instead_of_passing_unseen() -> None:
    from iam_calls import Call, UnknownCall

    with pytest.raises(UnknownCall):
        requests_of(Call("api", "s3", "GetObject", {"Bucket": "b", "Key": "k"}), REGION)
    transact = Call(
        "api",
        "dynamodb",
        "TransactWriteItems",
        {"TransactItems": [{"ConditionCheck": {"TableName": "t"}}, {"Put": {"TableName": "t"}}]},
    )
    assert [r.action for r in requests_of(transact, REGION)] == [
        "dynamodb:ConditionCheckItem",
        "dynamodb:PutItem",
    ]


def test_the_evaluator_refuses_what_a_statement_does_not_name() -> None:
    arn = table_arn(REGION, "t")
    statements = [{"Effect": "Allow", "Action": ["dynamodb:PutItem"], "Resource": [arn, f"{arn}/index/*"]}]
    assert denied(statements, {Request("dynamodb:PutItem", arn)}) == []
    assert denied(statements, {Request("dynamodb:ConditionCheckItem", arn)})
    assert denied(statements, {Request("dynamodb:PutItem", table_arn(REGION, "other"))})
    assert denied(statements, {Request("dynamodb:Query", f"{arn}/index/by_key")})
