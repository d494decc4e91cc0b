"""Local mode's event sources: a queue poller (SQS semantics -> ``functions/ingest``), a stream
reader (the SQLite outbox as DynamoDB Streams batches -> ``functions/projector``), the webhook
deliveries (events.db -> each tenant's webhooks, docs/events.md) and a timer (scheduled events ->
``functions/consolidate`` / ``functions/reconcile``).

Threads in the server (with ``agentmem serve --workers N``, in one process of their own, once for
all the api workers: :class:`agentmem_dev.emulator.workers.EventSources`); ``drain()`` runs the
same steps synchronously (eval, tests, CLI).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from agentmem.bootstrap import Container
from agentmem.errors import ConfigurationError
from agentmem.ports import PROJECTOR_CHECKPOINT, ChangeFeed, QueueConsumer
from agentmem_dev.emulator import events, lambdas

log = logging.getLogger(__name__)

BATCH = 10
STREAM_BATCH = 100
VISIBILITY_S = 30
CHECKPOINT = PROJECTOR_CHECKPOINT


@dataclass
class PumpStats:
    ingest_batches: int = 0
    ingest_failures: int = 0
    stream_batches: int = 0
    stream_failures: int = 0
    consolidations: int = 0
    reconciliations: int = 0
    retention_passes: int = 0
    webhook_deliveries: int = 0
    webhook_failures: int = 0


@dataclass
class LocalRunner:
    container: Container
    poll_interval_s: float = 0.1
    consolidate_every_s: float = 60.0
    reconcile_every_s: float = 600.0
    retention_every_s: float | None = None  # None: the container's settings.retention_every_s
    stats: PumpStats = field(default_factory=PumpStats)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)  # queue and checkpoint bookkeeping
    _webhook_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        queue, feed = self.container.queue, self.container.adapters.changes
        if not isinstance(queue, QueueConsumer) or feed is None:
            raise ConfigurationError(
                "the local runner needs a queue it can consume and a store with a change feed"
                " (the embedded backend); in AWS, Lambda's event sources do this"
            )
        self._queue: QueueConsumer = queue
        self._feed: ChangeFeed = feed

    # ------------------------------------------------------------------ one step each
    def pump_queue(self) -> int:
        """Receive one batch, hand it to the ingest λ, delete successes, release failures."""
        queue = self._queue
        with self._lock:
            messages = queue.receive(BATCH, VISIBILITY_S)
            if not messages:
                return 0
            records = [
                events.sqs_record(
                    m.message_id, m.receipt_handle, m.body, receive_count=m.receive_count, sent_at=m.sent_at
                )
                for m in messages
            ]
            try:
                response = lambdas.invoke("ingest", events.sqs_event(records), self.container)
                failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
            except Exception:  # the whole invocation failed: every message is retried
                log.exception("local.ingest_invocation_failed")
                failed = {m.message_id for m in messages}
            for m in messages:
                if m.message_id in failed:
                    queue.release(m.receipt_handle, min(2**m.receive_count, 60) * 0.05, error="ingest_failed")
            # one acknowledgement per batch: one transaction and one WAL checkpoint (no raw body
            # stays on disk after its ack)
            queue.delete_batch([m.receipt_handle for m in messages if m.message_id not in failed])
            self.stats.ingest_batches += 1
            self.stats.ingest_failures += len(failed)
            return len(messages)

    def pump_stream(self) -> int:
        """Read the outbox after the checkpoint, hand it to the projector λ as a DynamoDB
        Streams batch; advance the checkpoint to just before the first failed record."""
        store = self._feed
        with self._lock:
            after = store.outbox_checkpoint(CHECKPOINT)
            rows = store.read_outbox(after, STREAM_BATCH)
            if not rows:
                return 0
            records = [
                events.stream_record(
                    event_name=r.event_name,
                    sequence=r.seq,
                    keys={"pk": {"S": r.pk}, "sk": {"S": r.sk}},
                    new_image=r.new_image,
                    old_image=r.old_image,
                    created_at=r.created_at,
                )
                for r in rows
            ]
            try:
                response = lambdas.invoke("projector", {"Records": records}, self.container)
                failed = [int(f["itemIdentifier"]) for f in (response or {}).get("batchItemFailures", [])]
            except Exception:
                log.exception("local.projector_invocation_failed")
                failed = [rows[0].seq]
            checkpoint = (min(failed) - 1) if failed else rows[-1].seq
            if checkpoint > after:
                store.set_outbox_checkpoint(CHECKPOINT, checkpoint)
            self.stats.stream_batches += 1
            self.stats.stream_failures += len(failed)
            return len(rows) if not failed else max(0, checkpoint - after)

    def pump_webhooks(self) -> int:
        """Fan the published events out to their webhooks and attempt the due deliveries (no
        λ: on AWS, EventBridge does this). Its own lock: a slow receiver holds up no batch."""
        delivery = self.container.webhook_delivery
        if delivery is None:
            return 0
        with self._webhook_lock:
            report = delivery.run(self.container.clock.now())
        self.stats.webhook_deliveries += report.delivered
        self.stats.webhook_failures += report.retried + report.dead
        return report.fanned + report.delivered

    def retain(self) -> Any:
        """One retention pass over the embedded stores (no λ: in AWS, TTLs do this)."""
        with self._lock:  # not while a batch moves the checkpoint
            report = self.container.retention.run(self.container.clock.now())
        self.stats.retention_passes += 1
        return report

    def tick(self, rule: str) -> Any:
        if rule == "retention":
            return self.retain()
        name = "consolidate" if rule == "consolidate" else "reconcile"
        event = events.scheduled_event(rule, at=self.container.clock.now())
        result = lambdas.invoke(name, event, self.container)
        if name == "consolidate":
            self.stats.consolidations += 1
        else:
            self.stats.reconciliations += 1
        return result

    def drain(self, max_rounds: int = 10_000) -> None:
        """Process the queue and the stream until both are empty (or nothing moves)."""
        for _ in range(max_rounds):
            moved = self.pump_queue() + self.pump_stream() + self.pump_webhooks()
            if moved == 0:
                return

    # ------------------------------------------------------------------ threads
    def start(self) -> None:
        self._stop.clear()
        self._threads = [
            threading.Thread(
                target=self._loop,
                args=(self.pump_queue, self.poll_interval_s),
                name="local-queue",
                daemon=True,
            ),
            threading.Thread(
                target=self._loop,
                args=(self.pump_stream, self.poll_interval_s),
                name="local-stream",
                daemon=True,
            ),
            threading.Thread(
                target=self._loop,
                args=(self.pump_webhooks, self.poll_interval_s),
                name="local-webhooks",
                daemon=True,
            ),
            threading.Thread(target=self._timer, name="local-timer", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def down(self) -> list[str]:
        """The event-source threads that are not running though they were started."""
        if self._stop.is_set():
            return []
        return [f"the {t.name} thread has stopped" for t in self._threads if not t.is_alive()]

    def stop(self, timeout_s: float = 50.0) -> None:
        """Stop polling; each thread finishes the batch in hand first (up to ``timeout_s``)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=timeout_s)

    def _loop(self, step: Any, idle_s: float) -> None:
        while not self._stop.is_set():
            try:
                moved = step()
            except Exception:  # keep the local event source alive; the failure is logged
                log.exception("local.pump_failed")
                moved = 0
            if not moved:
                self._stop.wait(idle_s)

    def _timer(self) -> None:
        elapsed = {"consolidate": 0.0, "reconcile": 0.0, "retention": 0.0}
        period = {
            "consolidate": self.consolidate_every_s,
            "reconcile": self.reconcile_every_s,
            "retention": self.retention_every_s or self.container.settings.retention_every_s,
        }
        step = 1.0
        while not self._stop.wait(step):
            for rule in elapsed:
                elapsed[rule] += step
                if elapsed[rule] >= period[rule]:
                    elapsed[rule] = 0.0
                    try:
                        self.tick(rule)
                    except Exception:
                        log.exception("local.timer_failed", extra={"rule": rule})
