"""``agentmem smoke --moto``: the whole AWS write and read path, in process, on moto.

DynamoDB tables (with stream), the ingest queue and its dead-letter queue are created on moto;
the container is :func:`~agentmem.adapters.aws.wiring.build_aws` with the embedded search index
and graph (OpenSearch and Neptune have no moto) and the deterministic hashed embedder. Turns go
out through the SQS adapter; received batches go to ``functions/ingest`` as SQS events (failed
records made visible again, as SQS does after the visibility timeout, until the redrive policy
dead-letters them); the table's stream goes to ``functions/projector``; ``functions/api``
answers ``POST /v1/context`` for each user. Then the same batches and stream records are replayed
to check that nothing is created twice.

With ``turns >= 3`` two of the turns are deliberate failures so every accounting path runs: one
malformed message (rejected with a reason, audited) and one "poison" turn whose embedding always
fails (retried, then dead-lettered). A turn is *accounted* when it was processed (its outcome is
recorded: memories written, nothing worth keeping, or quarantined), rejected with a reason, or is
in the dead-letter queue.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.adapters.aws.dynamodb_schema import create_tables
from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import Scope, Turn
from agentmem.errors import ConfigurationError, EmbedderUnavailable
from agentmem.messages import TurnMessage
from agentmem_dev.dynamodb_stream import StreamReader

REGION = "us-east-1"
POISON = "Poisonville"
MAX_RECEIVE = 2
DRAIN_ROUNDS = 20
FACTS = (
    ("I live in {city}.", "Where do I live?", ("Glasgow", "Lisbon", "Osaka", "Nairobi", "Quito")),
    ("I work as a {job}.", "What is my job?", ("pilot", "nurse", "carpenter", "chemist", "lawyer")),
    ("我住在{city}。", "我住在哪里？", ("杭州", "成都", "大连", "厦门", "昆明")),
)


class PoisonEmbedder(HashEmbedder):
    """The hashed embedder, failing on purpose for texts naming :data:`POISON`."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any(POISON in t for t in texts):
            raise EmbedderUnavailable("smoke: deliberate embedding failure")
        return super().embed_documents(texts)


@dataclass
class _Plan:
    turns: list[Turn] = field(default_factory=list)
    questions: dict[Scope, str] = field(default_factory=dict)
    poison: Turn | None = None
    malformed_body: str | None = None


@contextmanager
def moto_environment() -> Iterator[None]:
    """Fake credentials and region for moto (and no EMF metric lines); undone on exit."""
    wanted = {
        "AWS_ACCESS_KEY_ID": "smoke",
        "AWS_SECRET_ACCESS_KEY": "smoke",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _plan(turns: int, now: datetime) -> _Plan:
    plan = _Plan()
    regular = turns - 2 if turns >= 3 else turns
    for i in range(regular):
        template, question, values = FACTS[i % len(FACTS)]
        scope = Scope("smoke", f"user-{i % 4}")
        value = values[(i // len(FACTS)) % len(values)]
        text = template.format(city=value, job=value)
        plan.turns.append(Turn(scope, f"s-{i % 4}", text, "Noted.", now, f"smoke-{i:04d}"))
        plan.questions.setdefault(scope, question)
    if turns >= 3:
        plan.poison = Turn(
            Scope("smoke", "user-poison"), "s-p", f"I live in {POISON}.", "Noted.", now, "smoke-poison"
        )
        plan.turns.append(plan.poison)
        plan.malformed_body = '{"tenant_id": "smoke", "user_id": "user-x", "user": 42'
    return plan


def run_smoke(turns: int = 20) -> dict[str, Any]:
    """Run the moto end-to-end path with ``turns`` turns; returns the JSON-ready summary:
    ``turns_sent``, ``turns_accounted``, ``memories_written`` (distinct memories, superseded
    included), ``memories_active``, ``memories_projected`` (active memories present in the search
    index), ``recall_ok``, ``failures`` (empty when everything held), ``breakdown`` and
    ``duration_s``. Needs moto (the dev extras); environment changes are undone on return."""
    try:
        import boto3
        from moto import mock_aws
    except ImportError as exc:
        raise ConfigurationError("agentmem smoke --moto needs moto (install the dev extras)") from exc
    if turns < 1:
        raise ConfigurationError("--turns must be at least 1")
    started = time.monotonic()
    with moto_environment(), mock_aws(), tempfile.TemporaryDirectory(prefix="agentmem-smoke-") as tmp:
        clients = {
            name: boto3.client(name, region_name=REGION) for name in ("dynamodb", "dynamodbstreams", "sqs")
        }
        summary = _Smoke(clients, Path(tmp)).run(turns)
    summary["duration_s"] = round(time.monotonic() - started, 2)
    return summary


class _Smoke:
    def __init__(self, clients: dict[str, Any], tmp: Path) -> None:
        self.c = clients
        self.tmp = tmp
        self.failures: list[str] = []
        self.batches: list[dict[str, Any]] = []
        self.stream_records: list[dict[str, Any]] = []

    def _setup(self) -> Any:
        from agentmem.bootstrap import bootstrap
        from agentmem.settings import load_settings

        arns = create_tables(
            self.c["dynamodb"], memory="smoke-memories", session="smoke-sessions", audit="smoke-audit"
        )
        sqs = self.c["sqs"]
        self.dlq = sqs.create_queue(QueueName="smoke-ingest-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=self.dlq, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE)})
        self.queue = sqs.create_queue(QueueName="smoke-ingest", Attributes={"RedrivePolicy": redrive})[
            "QueueUrl"
        ]
        settings = load_settings(
            backend="aws",
            embedder="hash",
            search_backend="local",
            graph_backend="local",
            local_projection_dir=self.tmp / "projections",
            queue_url=self.queue,
            aws_region=REGION,
            table_memory="smoke-memories",
            table_session="smoke-sessions",
            table_audit="smoke-audit",
        )
        container = bootstrap(settings, embedder=PoisonEmbedder())
        self.container = container
        self.stream = StreamReader(self.c["dynamodbstreams"], arns["memory_stream_arn"])
        return container

    def run(self, turns: int) -> dict[str, Any]:
        container = self._setup()
        plan = _plan(turns, container.clock.now())
        container.queue.send([TurnMessage.from_turn(t) for t in plan.turns])
        malformed_id = None
        if plan.malformed_body is not None:
            malformed_id = self.c["sqs"].send_message(QueueUrl=self.queue, MessageBody=plan.malformed_body)[
                "MessageId"
            ]
        self._drain_queue()
        self._project()
        written_before = self._written(container, plan)
        self._replay()
        written = self._written(container, plan)
        if written != written_before:
            self.failures.append("replayed deliveries changed the stored memories")
        return self._summary(container, plan, written, malformed_id)

    # ------------------------------------------------------------------ event sources

    def _drain_queue(self) -> None:
        from agentmem_dev.emulator import events, lambdas

        sqs = self.c["sqs"]
        for _ in range(DRAIN_ROUNDS):
            messages = sqs.receive_message(
                QueueUrl=self.queue, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=30
            ).get("Messages", [])
            if not messages:
                return
            records = [
                events.sqs_record(
                    m["MessageId"],
                    m["ReceiptHandle"],
                    m["Body"],
                    receive_count=int(m["Attributes"]["ApproximateReceiveCount"]),
                    sent_at=datetime.fromtimestamp(int(m["Attributes"]["SentTimestamp"]) / 1000, UTC),
                )
                for m in messages
            ]
            event = events.sqs_event(records)
            self.batches.append(event)
            response = lambdas.invoke("ingest", event, self.container) or {}
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            for m in messages:
                if m["MessageId"] in failed:  # SQS would redeliver after the visibility timeout
                    sqs.change_message_visibility(
                        QueueUrl=self.queue, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                    )
                else:
                    sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=m["ReceiptHandle"])
        self.failures.append(f"queue not drained after {DRAIN_ROUNDS} rounds")

    def _project(self) -> None:
        from agentmem_dev.emulator import lambdas

        records = self.stream.read()
        self.stream_records.extend(records)
        for start in range(0, len(records), 100):
            response = (
                lambdas.invoke("projector", {"Records": records[start : start + 100]}, self.container) or {}
            )
            if response.get("batchItemFailures"):
                self.failures.append(f"projector failed {len(response['batchItemFailures'])} stream records")

    def _replay(self) -> None:
        """Duplicate SQS delivery and a replayed stream: nothing may be created twice."""
        from agentmem_dev.emulator import lambdas

        for event in self.batches:
            lambdas.invoke("ingest", event, self.container)
        for start in range(0, len(self.stream_records), 100):
            lambdas.invoke("projector", {"Records": self.stream_records[start : start + 100]}, self.container)
        self._project()  # whatever the replays wrote (nothing, when idempotent)

    # ------------------------------------------------------------------ accounting

    @staticmethod
    def _written(
        container: Any, plan: _Plan, statuses: tuple[str, ...] = ("active", "superseded")
    ) -> dict[Scope, set[str]]:
        out: dict[Scope, set[str]] = {}
        for scope in {t.scope for t in plan.turns}:
            page = container.store.list(scope, statuses=statuses, limit=1000)
            out[scope] = {r.memory_id for r in page.items}
        return out

    def _dead_lettered(self) -> set[str]:
        ids: set[str] = set()
        for _ in range(10):
            messages = (
                self.c["sqs"].receive_message(QueueUrl=self.dlq, MaxNumberOfMessages=10).get("Messages", [])
            )
            if not messages:
                break
            for m in messages:
                try:
                    ids.add(str(json.loads(m["Body"]).get("message_id")))
                except ValueError:
                    ids.add(m["MessageId"])
        return ids

    def _summary(
        self, container: Any, plan: _Plan, written: dict[Scope, set[str]], malformed_id: str | None
    ) -> dict[str, Any]:
        from agentmem.services.ingest import REJECTED_SCOPE

        breakdown = {"written": 0, "nothing_to_keep": 0, "quarantined": 0, "rejected": 0, "dead_lettered": 0}
        dead = self._dead_lettered()
        accounted = 0
        for turn in plan.turns:
            outcome = container.turn_log.processed_outcome(turn.scope, turn.message_id)
            if outcome is not None:
                kind = (
                    "quarantined"
                    if outcome.get("status") == "quarantined"
                    else (
                        "written"
                        if outcome.get("written") or outcome.get("reinforced")
                        else "nothing_to_keep"
                    )
                )
                breakdown[kind] += 1
                accounted += 1
            elif turn.message_id in dead:
                breakdown["dead_lettered"] += 1
                accounted += 1
            else:
                self.failures.append(f"turn {turn.message_id} is unaccounted for")
        if malformed_id is not None:
            audit = container.audit.list(Scope("smoke", "user-x"), 50, "rejected") + container.audit.list(
                REJECTED_SCOPE, 50, "rejected"
            )
            if any(e.reason and e.details.get("queue_message_id") == malformed_id for e in audit):
                breakdown["rejected"] += 1
                accounted += 1
            elif malformed_id in dead:
                breakdown["dead_lettered"] += 1
                accounted += 1
            else:
                self.failures.append(
                    "the malformed message was neither rejected with a reason nor dead-lettered"
                )
        all_ids = {(scope, m) for scope, ids in written.items() for m in ids}
        active = self._written(container, plan, ("active",))
        projected = sum(len(container.index.states(scope, sorted(ids))) for scope, ids in active.items())
        if projected != sum(len(ids) for ids in active.values()):
            self.failures.append(
                f"{sum(len(i) for i in active.values()) - projected} active memories are not projected"
            )
        return {
            "turns_sent": len(plan.turns) + (1 if malformed_id is not None else 0),
            "turns_accounted": accounted,
            "memories_written": len(all_ids),
            "memories_projected": projected,
            "memories_active": sum(len(ids) for ids in active.values()),
            "recall_ok": self._recall(plan, active),
            "failures": self.failures,
            "breakdown": breakdown,
        }

    def _recall(self, plan: _Plan, written: dict[Scope, set[str]]) -> bool:
        from agentmem_dev.emulator import events, lambdas

        checked = 0
        for scope, question in plan.questions.items():
            if not written.get(scope):
                continue
            checked += 1
            event = events.api_gateway_event(
                "POST",
                "/v1/context",
                body=json.dumps({"query": question}, ensure_ascii=False),
                authorizer={
                    "tenant_id": scope.tenant_id,
                    "user_id": scope.user_id,
                    "permissions": "memory:read",
                },
                headers={"Content-Type": "application/json"},
            )
            response = lambdas.invoke("api", event, self.container)
            body = json.loads(response.get("body") or "{}")
            got = {m.get("id") for m in body.get("memories", [])}
            if response.get("statusCode") != 200 or not got & written[scope]:
                self.failures.append(
                    f"recall missed the memories of {scope.user_id}: {response.get('statusCode')} {str(body)[:300]}"
                )
        return checked > 0 and not any(f.startswith("recall") for f in self.failures)
