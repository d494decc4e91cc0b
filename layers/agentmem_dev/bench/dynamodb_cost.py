"""The DynamoDB section of ``agentmem bench cost``: read and write units per ingested turn and
per context call, for a user holding ``memories`` memories, on moto.

The real services run over the real DynamoDB adapters (memory, session and audit tables on
moto) with the embedded search index and graph (OpenSearch and Neptune have no moto) and the
hashed embedder at Titan v2's 1024 dimensions (the deployed default, so items have their real
size). One user is filled straight through the table and the index (not priced), then turns go
through ``IngestService.handle`` — as the ingest function calls it — and context requests
through ``ContextService.build``; each new memory is projected into the index after its turn.

Two figures per call, side by side:

* ``rules``: units by AWS's documented rules from the sizes of the items each call touched
  (:mod:`agentmem_dev.bench.dynamodb_units`) — the figures to read;
* ``moto_reported``: what the adapters got back from ``ReturnConsumedCapacity`` and recorded
  in their :class:`~agentmem.adapters.aws.dynamodb_base.CapacityMeter`. moto's figures are fixed
  per call (and absent for transactions and deletes): shown to prove the plumbing, not the cost.

The write pipeline's neighbour pool is measured with the access pattern of its rework
(docs/performance.md, "Ingest (the write path)"): the search index plus the **20 newest** records, not the 200 newest; while the pipeline
still reads 200, the bench sets its ``NEIGHBOURS_FROM_STORE`` to 20 for the run and says so.
Each figure is also split by what it pays for (``by_purpose``, from the units per port call): a
turn's bookkeeping — the L0 line and its session-index entry, the processed mark, the scene log,
the consolidation counter, written whether or not the turn yields a memory — apart from its memory
writes and its audit line; a context call's newest-memories window apart from its reads by id
(``get_many``: the batch that confirms the memories it shows, and any candidate the index holds
no card of). The report prints both beside the targets.
Same-run baselines: the access patterns as they were (the 200-newest neighbour listing, the
slot listings walking the partition, float32 items) priced on the same data, and "store every
raw turn" (one PutItem of the L0 line and its session-index entry per turn).
"""

from __future__ import annotations

import contextlib
import random
import statistics
import tempfile
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters import Adapters
from agentmem.adapters.aws.dynamodb_audit import DynamoAuditLog
from agentmem.adapters.aws.dynamodb_audited import DynamoAuditedWrites
from agentmem.adapters.aws.dynamodb_base import CapacityMeter
from agentmem.adapters.aws.dynamodb_runtime_state import DynamoRuntimeState
from agentmem.adapters.aws.dynamodb_schema import (
    SLOT_CATEGORIES,
    audit_table_request,
    memory_table_request,
    session_table_request,
)
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore, memory_item
from agentmem.adapters.aws.dynamodb_summaries import DynamoSummaryStore
from agentmem.adapters.aws.dynamodb_turn_log import DynamoTurnLog
from agentmem.adapters.aws.dynamodb_vectors import vector_item
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.embedded.conflict_store import SqliteConflictStore
from agentmem.adapters.embedded.graph_store import LocalGraphStore
from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.adapters.embedded.turn_queue import SqliteTurnQueue
from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import bootstrap
from agentmem.clock import ManualClock
from agentmem.domain import ids
from agentmem.domain.context import Mode
from agentmem.domain.models import Category, MemoryRecord, Scope, SourceRefs
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.bench.common import (
    T0,
    say,
    synthetic_entities,
    synthetic_facts,
    synthetic_queries,
    synthetic_turns,
)
from agentmem_dev.bench.dynamodb_patterns import access_patterns
from agentmem_dev.bench.dynamodb_units import (
    Attributed,
    Priced,
    RulesClient,
    item_size,
    write_units,
)
from agentmem_dev.harness import quiet_metrics

DEFAULT_MEMORIES = 1_000
DEFAULT_TURNS = 20
DEFAULT_CONTEXTS = 10
GOAL_MEMORIES = 10_000  # docs/design.md "Performance targets": the walk is extrapolated to it
DIMENSION = 1024  # Titan v2's default (settings.bedrock_embed_dimension)
TARGETS = {"turn_read_units": 10.0, "turn_write_units": 5.0, "context_read_units": 5.0}
TABLES = {"memory": "bench-memories", "session": "bench-sessions", "audit": "bench-audit"}
USER = Scope("bench", "dynamo-user")
# the recall bench's category mix (half facts, a tenth preferences, ...)
_CATEGORY_MIX = ("fact", "episodic", "preference", "identity", "general")
_CATEGORY_WEIGHTS = (0.5, 0.3, 0.1, 0.05, 0.05)


@contextlib.contextmanager
def _recent_neighbours() -> Iterator[str]:
    """How the write pipeline reads its neighbours from the store (for the report)."""
    from agentmem.services import neighbours

    yield f"{neighbours.RECENT} newest + the search index's hits (as the write pipeline reads them)"


def _records(scope: Scope, count: int, embedder: HashEmbedder) -> list[MemoryRecord]:
    rng = random.Random(zlib.crc32(scope.key.encode()))
    texts = synthetic_facts(count, seed=5)
    vectors = embedder.embed_documents(texts)
    out = []
    for number, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        at = T0 - timedelta(minutes=count - number)
        out.append(
            MemoryRecord(
                scope=scope,
                memory_id=ids.memory_id(at, f"bench:{scope.user_id}:{number}"),
                content=text,
                category=Category(rng.choices(_CATEGORY_MIX, _CATEGORY_WEIGHTS)[0]),
                key=f"k{number}" if rng.random() < 0.5 else None,
                value=f"v{number}",
                importance=round(rng.uniform(0.3, 0.9), 2),
                source_refs=SourceRefs(f"bench-s{number // 25}", (f"bench-m{number}",)),
                embedding=tuple(float(x) for x in vector),
                embedding_model=embedder.model_id,
                created_at=at,
                updated_at=at,
                valid_from=at,
                entities=synthetic_entities(rng),
            )
        )
    return out


def _per_call(ledger_rows: dict[tuple[str, str], Any], calls: int) -> list[dict[str, Any]]:
    rows = []
    for (table, operation), priced in sorted(ledger_rows.items()):
        rows.append(
            {
                "table": table,
                "operation": operation,
                "calls": round(priced.calls / calls, 2),
                "read_units": round(priced.read_units / calls, 2),
                "write_units": round(priced.write_units / calls, 2),
            }
        )
    return rows


def _per_port_call(rows: dict[tuple[str, str, str], Priced], calls: int) -> list[dict[str, Any]]:
    """Units per port call (``store.scan_active``: its queries, ...), most expensive first."""
    out = [
        {
            "port_call": caller,
            "table": table.removeprefix("bench-"),
            "operation": operation,
            "calls": round(priced.calls / calls, 2),
            "read_units": round(priced.read_units / calls, 2),
            "write_units": round(priced.write_units / calls, 2),
        }
        for (caller, table, operation), priced in rows.items()
    ]
    return sorted(
        out, key=lambda r: (-(r["read_units"] + 5 * r["write_units"]), r["port_call"], r["operation"])
    )


# What a port call's units pay for, for the ``by_purpose`` split: a turn's bookkeeping is written
# whether or not the turn yields a memory, each item for one guarantee (docs/performance.md).
BOOKKEEPING = {
    "turn_log.append_raw": "L0 line and its session-index entry",
    "turn_log.mark_processed": "processed mark",
    "summaries.record_turn": "scene log",
    "ledger.mark_pending": "consolidation counter",
}
WINDOW, BY_ID = "store.scan_active", "store.get_many"


def _by_purpose(rows: list[dict[str, Any]], shown: float | None = None) -> dict[str, Any]:
    """A turn's or a context call's units split by what they pay for (from ``by_port_call``)."""

    def units(kind: str, wanted: Callable[[str], bool]) -> float:
        return round(sum(float(r[kind]) for r in rows if wanted(str(r["port_call"]))), 2)

    bookkeeping = {label: units("write_units", name.__eq__) for name, label in BOOKKEEPING.items()}
    out: dict[str, Any] = {
        "write_units": {
            "bookkeeping": round(sum(bookkeeping.values()), 2),
            "bookkeeping_items": bookkeeping,
            "memories": units("write_units", lambda c: c.startswith("store.") and c not in BOOKKEEPING),
            "audit": units("write_units", lambda c: c.startswith("audit.")),
        },
        "read_units": {
            "newest_memories_window": units("read_units", lambda c: c == WINDOW),
            "reads_by_id": units("read_units", lambda c: c == BY_ID),
            "other": units("read_units", lambda c: c not in (WINDOW, BY_ID)),
        },
    }
    if shown is not None:
        out["memories_shown"] = round(shown, 2)
    return out


def _add(totals: dict[Any, Priced], rows: dict[Any, Priced]) -> None:
    for key, priced in rows.items():
        row = totals.setdefault(key, Priced())
        row.calls += priced.calls
        row.read_units += priced.read_units
        row.write_units += priced.write_units


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


class _Run:
    def __init__(self, inner: Any, tmp: Path, memories: int) -> None:
        self.inner = inner
        requests = {
            TABLES["memory"]: memory_table_request(TABLES["memory"]),
            TABLES["session"]: session_table_request(TABLES["session"]),
            TABLES["audit"]: audit_table_request(TABLES["audit"]),
        }
        for request in requests.values():
            inner.create_table(**request)
        self.rules = RulesClient(inner, requests)
        self.meter = CapacityMeter()
        self.clock = ManualClock(T0)
        lazy: LazyClient[Any] = LazyClient(lambda: self.rules)
        self.embedder = HashEmbedder(DIMENSION)
        self.store = DynamoMemoryStore(TABLES["memory"], client=lazy, clock=self.clock.now, meter=self.meter)
        # each adapter names its port calls, so the units can be read per call (by_port_call)
        adapters = Adapters(
            store=Attributed(self.store, "store"),
            ledger=Attributed(self.store.ledger, "ledger"),
            turn_log=Attributed(DynamoTurnLog(TABLES["session"], client=lazy, meter=self.meter), "turn_log"),
            runtime_state=Attributed(
                DynamoRuntimeState(TABLES["session"], clock=self.clock.now, client=lazy, meter=self.meter),
                "runtime_state",
            ),
            audit=Attributed(DynamoAuditLog(TABLES["audit"], client=lazy, meter=self.meter), "audit"),
            embedder=self.embedder,
            index=LocalSearchIndex(tmp / "search.db"),
            graph=LocalGraphStore(tmp / "graph.db"),
            queue=SqliteTurnQueue(tmp / "queue.db"),
            conflicts=SqliteConflictStore(":memory:"),  # kept off the DynamoDB bill, as before
            summaries=Attributed(  # session memory
                DynamoSummaryStore(TABLES["session"], client=lazy, meter=self.meter), "summaries"
            ),
            # as build_aws wires it: a change and its audit lines in one transaction across tables
            audited_writes=Attributed(DynamoAuditedWrites(self.store, TABLES["audit"]), "store"),
        )
        self.container = bootstrap(
            load_settings(data_dir=tmp, embedder="hash"), adapters=adapters, clock=self.clock
        )
        self.memories = memories

    def fill(self) -> dict[str, Any]:
        records = _records(USER, self.memories, self.embedder)
        self.rules.paused = True
        try:
            self.store.create(records[0])  # registers the scope
            for start in range(1, len(records), 12):  # 12 records, 24 items (the batch limit 25)
                batch = records[start : start + 12]
                items = [memory_item(r) for r in batch]
                items += [v for v in (vector_item(r, "float16") for r in batch) if v is not None]
                self.inner.batch_write_item(
                    RequestItems={TABLES["memory"]: [{"PutRequest": {"Item": i}} for i in items]}
                )
                for item in items:
                    self.rules.remember(TABLES["memory"], item)
            for record in records:
                self.container.index.upsert(record)
        finally:
            self.rules.paused = False
        sample = records[:500]
        mem = [item_size(memory_item(r, "float16")) for r in sample]
        f16 = [item_size(vector_item(r, "float16")) for r in sample]
        f32 = [item_size(vector_item(r, "float32")) for r in sample]
        return {
            "memories": len(records),
            "slot_records": sum(1 for r in records if r.category.value in SLOT_CATEGORIES),
            "item_bytes_mean": {
                "memory_item": round(statistics.fmean(mem)),
                "vector_item_float16": round(statistics.fmean(f16)),
                "vector_item_float32": round(statistics.fmean(f32)),
            },
        }

    def _priced(self) -> tuple[float, float, float, float]:
        reads, writes = self.rules.ledger.totals()
        return reads, writes, self.meter.units("read"), self.meter.units("write")

    def _reset(self) -> None:
        self.rules.ledger.reset()
        self.meter.reset()

    def ingest(self, turns: int) -> dict[str, Any]:
        sessions = synthetic_turns(turns, users=1, seed=19)
        figures: dict[str, list[float]] = defaultdict(list)
        totals: dict[tuple[str, str], Priced] = {}
        callers: dict[tuple[str, str, str], Priced] = {}
        raw_turn_units: list[int] = []
        facts = 0
        now = T0 + timedelta(days=1)
        with _recent_neighbours() as neighbours:
            for session in sessions:
                for position, base in enumerate(session):
                    turn = replace(
                        base, scope=USER, at=now + timedelta(minutes=len(raw_turn_units) + position)
                    )
                    self.clock.set(turn.at)
                    self._reset()
                    outcome = self.container.ingest.handle(
                        TurnMessage.from_turn(turn).to_body(), now=turn.at, queue_message_id=turn.message_id
                    )
                    reads, writes, moto_reads, moto_writes = self._priced()
                    figures["read"].append(reads)
                    figures["write"].append(writes)
                    figures["moto_read"].append(moto_reads)
                    figures["moto_write"].append(moto_writes)
                    _add(totals, self.rules.ledger.snapshot())
                    _add(callers, self.rules.ledger.by_caller())
                    facts += len(outcome.written)
                    raw_turn_units.append(self._raw_turn_units(turn.message_id))
                    self._project(outcome.written)
        count = len(figures["read"])
        by_port_call = _per_port_call(callers, max(1, count))
        return {
            "turns": count,
            "memories_written_per_turn": round(facts / max(1, count), 2),
            "neighbour_pool": neighbours,
            "read_units_mean": _mean(figures["read"]),
            "read_units_max": max(figures["read"], default=0.0),
            "write_units_mean": _mean(figures["write"]),
            "write_units_max": max(figures["write"], default=0.0),
            "moto_reported": {
                "read_units_mean": _mean(figures["moto_read"]),
                "write_units_mean": _mean(figures["moto_write"]),
            },
            "by_operation": _per_call(totals, max(1, count)),
            "by_port_call": by_port_call,
            "by_purpose": _by_purpose(by_port_call),
            "baseline_store_every_raw_turn_write_units": _mean([float(u) for u in raw_turn_units]),
        }

    def _raw_turn_units(self, message_id: str) -> int:
        """Units of the one PutItem "store every raw turn" would make: the L0 item and its
        ``by_session`` entry (projection ALL)."""
        item = self.inner.get_item(
            TableName=TABLES["session"], Key={"pk": {"S": USER.key}, "sk": {"S": "TURN#" + message_id}}
        ).get("Item")
        return 2 * write_units(item_size(item)) if item else 0

    def _project(self, memory_ids: list[str]) -> None:
        """What the projector would do after the turn (unpriced: stream reads cost no units)."""
        self.rules.paused = True
        try:
            for record in self.store.get_many(USER, memory_ids).values():
                self.container.index.upsert(record)
                for superseded in record.supersedes:
                    old = self.store.get(USER, superseded)
                    if old is not None:
                        self.container.index.upsert(old)
        finally:
            self.rules.paused = False

    def context(self, calls: int) -> dict[str, Any]:
        now = self.clock.now() + timedelta(hours=1)
        self.clock.set(now)
        reads: list[float] = []
        writes: list[float] = []  # the audit line of what was injected
        moto: list[float] = []
        totals: dict[tuple[str, str], Priced] = {}
        callers: dict[tuple[str, str, str], Priced] = {}
        shown: list[int] = []
        for query in synthetic_queries(calls, seed=29):
            self._reset()
            built = self.container.context.build(USER, query, mode=Mode.CHAT, now=now)
            shown.append(len(built.context.used_memory_ids))
            priced_reads, priced_writes, moto_reads, _ = self._priced()
            reads.append(priced_reads)
            writes.append(priced_writes)
            moto.append(moto_reads)
            _add(totals, self.rules.ledger.snapshot())
            _add(callers, self.rules.ledger.by_caller())
        by_port_call = _per_port_call(callers, max(1, len(reads)))
        return {
            "calls": len(reads),
            "read_units_mean": _mean(reads),
            "read_units_max": max(reads, default=0.0),
            "write_units_mean": _mean(writes),
            "moto_reported": {"read_units_mean": _mean(moto)},
            "by_operation": _per_call(totals, max(1, len(reads))),
            "by_port_call": by_port_call,
            "by_purpose": _by_purpose(by_port_call, statistics.fmean(shown) if shown else 0.0),
        }

    def access_patterns(self) -> dict[str, Any]:
        """The old and the new shape of the reads that grew with the user, on the same data."""
        return access_patterns(self.rules, self.store, TABLES["memory"], USER, self.memories, DIMENSION)


def run_dynamodb(
    *,
    memories: int = DEFAULT_MEMORIES,
    turns: int = DEFAULT_TURNS,
    contexts: int = DEFAULT_CONTEXTS,
    progress: bool = True,
) -> dict[str, Any]:
    """The DynamoDB units section (module docstring); needs moto (the dev extras)."""
    import boto3
    from moto import mock_aws

    from agentmem_dev.engines.stack import REGION, aws_environment

    started = time.monotonic()
    with (
        aws_environment(),
        mock_aws(),
        tempfile.TemporaryDirectory(prefix="agentmem-ddb-") as tmp,
        quiet_metrics(),
    ):
        run = _Run(boto3.client("dynamodb", region_name=REGION), Path(tmp), memories)
        say(progress, f"cost/dynamodb: filling one user with {memories} memories on moto ...")
        filled = run.fill()
        say(progress, "cost/dynamodb: access patterns ...")
        patterns = run.access_patterns()
        say(progress, f"cost/dynamodb: ingesting {turns} turns ...")
        per_turn = run.ingest(turns)
        say(progress, f"cost/dynamodb: {contexts} context calls ...")
        per_context = run.context(contexts)
    checks = {
        "turn_read_units": per_turn["read_units_mean"],
        "turn_write_units": per_turn["write_units_mean"],
        "context_read_units": per_context["read_units_mean"],
    }
    return {
        "figures": "rules = AWS's documented capacity rules applied to the items each call touched (the figures to"
        " read); moto_reported = what ReturnConsumedCapacity returned on moto (fixed per call, not size-based)",
        "fill": filled,
        "per_turn": per_turn,
        "per_context_call": per_context,
        "access_patterns": patterns,
        "targets": {
            name: {"target": target, "measured": checks[name], "met": checks[name] <= target}
            for name, target in TARGETS.items()
        },
        "settings": {
            "dimension": DIMENSION,
            "embedding_storage": "float16, in an item of its own (VEC#)",
            "embedder": "hash (1024 dims)",
        },
        "duration_s": round(time.monotonic() - started, 1),
    }
