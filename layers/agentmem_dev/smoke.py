"""``agentmem smoke --moto | --engines``: the whole AWS write and read path through the real
handlers.

A laptop stack (:mod:`agentmem_dev.engines.stack`: DynamoDB tables with the stream, the ingest
queue and its dead-letter queue) is created on moto in process (``--moto``, with the embedded
search index and graph) or on the engines (``--engines``: moto's server, OpenSearch with k-NN,
the Gremlin server); the container is :func:`~agentmem.adapters.aws.wiring.build_aws` with the
deterministic hashed embedder. Turns go out through the SQS adapter; the event sources
(:class:`~agentmem_dev.engines.sources.AwsEventSources`) hand received batches to
``functions/ingest`` and the table's stream to ``functions/projector``; ``functions/api``
answers ``POST /v1/context`` and ``POST /v1/recall`` for each user. Then the same batches and
stream records are replayed to check that nothing is created twice, and drift is injected into
the projections and repaired by ``functions/reconcile`` (:mod:`agentmem_dev.smoke_drift`).

With ``turns >= 3`` two of the turns are deliberate failures so every accounting path runs: one
malformed message (rejected with a reason, audited) and one "poison" turn whose embedding always
fails (retried, then dead-lettered). A turn is *accounted* when it was processed (its outcome is
recorded: memories written, nothing worth keeping, or quarantined), rejected with a reason, or is
in the dead-letter queue.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.adapters.embedders import HashEmbedder
from agentmem.domain.models import Scope, Turn
from agentmem.errors import ConfigurationError, EmbedderUnavailable
from agentmem.messages import TurnMessage
from agentmem_dev.engines.sources import AwsEventSources
from agentmem_dev.engines.stack import aws_environment, clients, create_stack
from agentmem_dev.smoke_drift import Drift

POISON = "Poisonville"
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


def _plan(turns: int, now: datetime, tenant: str) -> _Plan:
    plan = _Plan()
    regular = turns - 2 if turns >= 3 else turns
    for i in range(regular):
        template, question, values = FACTS[i % len(FACTS)]
        scope = Scope(tenant, f"user-{i % 4}")
        value = values[(i // len(FACTS)) % len(values)]
        text = template.format(city=value, job=value)
        plan.turns.append(Turn(scope, f"s-{i % 4}", text, "Noted.", now, f"smoke-{i:04d}"))
        plan.questions.setdefault(scope, question)
    if turns >= 3:
        plan.poison = Turn(
            Scope(tenant, "user-poison"), "s-p", f"I live in {POISON}.", "Noted.", now, "smoke-poison"
        )
        plan.turns.append(plan.poison)
        plan.malformed_body = json.dumps({"tenant_id": tenant, "user_id": "user-x"})[:-1] + ', "user": 42'

    return plan


def run_smoke(turns: int = 20, engines: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run the end-to-end path with ``turns`` turns; returns the JSON-ready summary:
    ``turns_sent``, ``turns_accounted``, ``memories_written`` (distinct memories, superseded
    included), ``memories_active``, ``memories_projected`` (active memories present in the search
    index), ``recall_ok``, ``context_ok``, ``reconcile`` (the drift injected, what the first run
    found and repaired, what the second found), ``engines``, ``failures`` (empty when everything
    held), ``breakdown`` and ``duration_s``.

    ``engines`` (the ``AGENTMEM_*_URL`` of :mod:`agentmem_dev.engines`): DynamoDB and SQS on that
    server, the index on OpenSearch, the graph on the Gremlin server. Without: moto in process,
    with the embedded index and graph. Environment changes are undone on return."""
    if turns < 1:
        raise ConfigurationError("--turns must be at least 1")
    started = time.monotonic()
    dynamodb_url = (engines or {}).get("AGENTMEM_DYNAMODB_URL")
    if engines is not None and not dynamodb_url:
        raise ConfigurationError("agentmem smoke --engines needs the DynamoDB engine (AGENTMEM_DYNAMODB_URL)")
    try:
        from moto import mock_aws
    except ImportError as exc:
        raise ConfigurationError("agentmem smoke needs moto (install the dev extras)") from exc
    mocked = nullcontext() if dynamodb_url else mock_aws()
    with (
        aws_environment(dynamodb_url),
        mocked,
        tempfile.TemporaryDirectory(prefix="agentmem-smoke-") as tmp,
    ):
        summary = _Smoke(clients(dynamodb_url), Path(tmp), engines).run(turns)
    summary["duration_s"] = round(time.monotonic() - started, 2)
    return summary


class _Smoke:
    def __init__(self, clients: dict[str, Any], tmp: Path, engines: Mapping[str, str] | None) -> None:
        self.c = clients
        self.tmp = tmp
        self.engines = dict(engines or {})
        self.prefix = f"smoke-{uuid.uuid4().hex[:8]}"
        self.failures: list[str] = []

    def _setup(self) -> Any:
        from agentmem.bootstrap import bootstrap
        from agentmem.settings import load_settings

        stack = create_stack(self.c, self.prefix, self.engines)
        self.queue, self.dlq = stack.queue_url, stack.dlq_url
        settings = load_settings(
            embedder="hash", local_projection_dir=self.tmp / "projections", **stack.settings
        )
        container = bootstrap(settings, embedder=PoisonEmbedder())
        self.container = container
        self.sources = AwsEventSources(
            container,
            sqs=self.c["sqs"],
            streams=self.c["dynamodbstreams"],
            queue_url=stack.queue_url,
            stream_arn=stack.stream_arn,
        )
        self.failures = self.sources.failures
        return container

    def run(self, turns: int) -> dict[str, Any]:
        container = self._setup()
        plan = _plan(turns, container.clock.now(), self.prefix)
        container.queue.send([TurnMessage.from_turn(t) for t in plan.turns])
        malformed_id = None
        if plan.malformed_body is not None:
            malformed_id = self.c["sqs"].send_message(QueueUrl=self.queue, MessageBody=plan.malformed_body)[
                "MessageId"
            ]
        self.sources.drain()
        written_before = self._written(container, plan)
        self._replay()
        written = self._written(container, plan)
        if written != written_before:
            self.failures.append("replayed deliveries changed the stored memories")
        summary = self._summary(container, plan, written, malformed_id)
        summary["reconcile"] = Drift(container, self.sources, self.engines).check(
            self._written(container, plan, ("active",)), self.failures
        )
        summary["engines"] = self._engines()
        return summary

    def _replay(self) -> None:
        """Duplicate SQS delivery and a replayed stream: nothing may be created twice."""
        from agentmem_dev.emulator import lambdas

        for event in list(self.sources.batches):
            lambdas.invoke("ingest", event, self.container)
        records = list(self.sources.stream_records)
        for start in range(0, len(records), 100):
            lambdas.invoke("projector", {"Records": records[start : start + 100]}, self.container)
        self.sources.drain()  # whatever the replays wrote (nothing, when idempotent)

    def _engines(self) -> dict[str, str]:
        if not self.engines:
            return {"dynamodb": "moto (in process)", "search": "embedded", "graph": "embedded"}
        from agentmem_dev.engines.servers import KINDS

        return {name: kind(0).describe() for name, kind in KINDS.items()}

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
            audit = container.audit.list(Scope(self.prefix, "user-x"), 50, "rejected") + container.audit.list(
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
            "recall_ok": self._ask(plan, active, "/v1/recall"),
            "context_ok": self._ask(plan, active, "/v1/context"),
            "failures": self.failures,
            "breakdown": breakdown,
        }

    def _ask(self, plan: _Plan, written: dict[Scope, set[str]], path: str) -> bool:
        from agentmem_dev.emulator import events, lambdas

        checked = 0
        for scope, question in plan.questions.items():
            if not written.get(scope):
                continue
            checked += 1
            event = events.api_event_as(
                scope.tenant_id, scope.user_id, "POST", path, {"query": question}, "memory:read"
            )
            response = lambdas.invoke("api", event, self.container)
            body = json.loads(response.get("body") or "{}")
            got = {m.get("id") for m in body.get("memories", [])}
            if response.get("statusCode") != 200 or not got & written[scope]:
                self.failures.append(
                    f"{path} missed the memories of {scope.user_id}: {response.get('statusCode')} {str(body)[:300]}"
                )
        return checked > 0 and not any(f.startswith(path) for f in self.failures)
