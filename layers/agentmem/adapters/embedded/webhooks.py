"""SQLite events outbox and webhook registry (``events.db`` in the data directory):
:class:`~agentmem.webhook_ports.EventPublisher`, :class:`~agentmem.webhook_ports.WebhookRegistry`
and :class:`~agentmem.webhook_ports.DeliveryOutbox` over one file.

``publish`` appends to ``events`` (committed before it returns: a server killed afterwards loses
nothing); the delivery loop fans each event out to one ``deliveries`` row per matching webhook
(unique per webhook and event id, so a repeated event is owed once) and works through the due
rows. Times are epoch seconds. The webhooks' secrets are kept here in clear, since every delivery
is signed with them: the data directory is the operator's, like the memories in it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem.adapters.embedded.sqlite_base import SqliteDatabase, placeholders
from agentmem.domain.events import Event, wanted
from agentmem.ports import RetentionPolicy
from agentmem.webhook_ports import Delivery, DeliveryStatus, Webhook

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
    event_type TEXT NOT NULL, body BLOB NOT NULL, fanned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_unfanned ON events (fanned, seq);
CREATE TABLE IF NOT EXISTS webhooks (
    tenant_id TEXT NOT NULL, webhook_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
    secret TEXT NOT NULL, created_at REAL NOT NULL, description TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, webhook_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deliveries (
    delivery_id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
    event_id TEXT NOT NULL, event_type TEXT NOT NULL, body BLOB NOT NULL, status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL, last_error TEXT NOT NULL DEFAULT '',
    last_attempt_at REAL, UNIQUE (webhook_id, event_id)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS deliveries_tenant ON deliveries (tenant_id, status);
"""

_DELIVERY_COLUMNS = (
    "delivery_id, webhook_id, tenant_id, event_id, event_type, body, status, attempts, next_attempt_at,"
    " last_error, last_attempt_at"
)


def _ts(at: datetime) -> float:
    return at.timestamp()


def _at(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


class SqliteWebhooks:
    """The embedded events outbox, webhook registry and deliveries, over one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, _SCHEMA, name="events")

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ Retained, Compactable
    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """Delivered rows are kept as long as turns (``turn_days``: a turn redelivered within
        that time announces the same event id, which they keep from being delivered twice);
        dead ones until redriven or their webhook is removed."""
        cutoff = _ts(now) - policy.turn_days * 86400
        with self._db.write() as conn:
            gone = conn.execute(
                "DELETE FROM deliveries WHERE status = ? AND last_attempt_at < ?",
                (DeliveryStatus.DELIVERED.value, cutoff),
            ).rowcount
        return {"webhook_deliveries": int(gone)} if gone else {}

    def compact(self, min_free_fraction: float) -> bool:
        return self._db.compact(min_free_fraction)

    # ------------------------------------------------------------------ EventPublisher
    def publish(self, events: Sequence[Event]) -> None:
        if not events:
            return
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO events (event_id, tenant_id, event_type, body) VALUES (?, ?, ?, ?)",
                [(e.event_id, e.tenant_id, e.event_type.value, e.body()) for e in events],
            )

    # ------------------------------------------------------------------ WebhookRegistry
    def add(self, hook: Webhook) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO webhooks (tenant_id, webhook_id, url, events, secret, created_at, description)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    hook.tenant_id,
                    hook.webhook_id,
                    hook.url,
                    json.dumps(list(hook.events)),
                    hook.secret,
                    _ts(hook.created_at),
                    hook.description,
                ),
            )

    def list_hooks(self, tenant_id: str) -> list[Webhook]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT tenant_id, webhook_id, url, events, secret, created_at, description FROM webhooks"
                " WHERE tenant_id = ? ORDER BY created_at, webhook_id",
                (tenant_id,),
            ).fetchall()
        return [_hook(r) for r in rows]

    def remove(self, tenant_id: str, webhook_id: str) -> bool:
        with self._db.write() as conn:
            gone = conn.execute(
                "DELETE FROM webhooks WHERE tenant_id = ? AND webhook_id = ?", (tenant_id, webhook_id)
            ).rowcount
            conn.execute(
                "DELETE FROM deliveries WHERE tenant_id = ? AND webhook_id = ? AND status = ?",
                (tenant_id, webhook_id, DeliveryStatus.PENDING.value),
            )
        return gone == 1

    # ------------------------------------------------------------------ DeliveryOutbox
    def fan_out(self, limit: int) -> int:
        with self._db.write() as conn:
            rows = conn.execute(
                "SELECT seq, event_id, tenant_id, event_type, body FROM events WHERE fanned = 0"
                " ORDER BY seq LIMIT ?",
                (limit,),
            ).fetchall()
            if not rows:
                return 0
            hooks: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
            for _, _, tenant, _, _ in rows:
                if tenant not in hooks:
                    found = conn.execute(
                        "SELECT webhook_id, events FROM webhooks WHERE tenant_id = ?", (tenant,)
                    ).fetchall()
                    hooks[tenant] = [(h[0], tuple(json.loads(h[1]))) for h in found]
            owed = [
                (
                    uuid.uuid4().hex,
                    hook_id,
                    tenant,
                    event_id,
                    event_type,
                    body,
                    DeliveryStatus.PENDING.value,
                    0.0,
                )
                for _, event_id, tenant, event_type, body in rows
                for hook_id, filters in hooks[tenant]
                if wanted(filters, event_type)
            ]
            conn.executemany(
                "INSERT OR IGNORE INTO deliveries (delivery_id, webhook_id, tenant_id, event_id, event_type,"
                " body, status, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                owed,
            )
            seqs = [r[0] for r in rows]
            # an event's body is kept in its deliveries; the outbox row is not needed once fanned
            conn.execute(f"DELETE FROM events WHERE seq IN ({placeholders(len(seqs))})", seqs)
        return len(rows)

    def due(self, now: datetime, limit: int) -> list[Delivery]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_DELIVERY_COLUMNS} FROM deliveries WHERE status = ? AND next_attempt_at <= ?"
                " ORDER BY next_attempt_at, rowid LIMIT ?",
                (DeliveryStatus.PENDING.value, _ts(now), limit),
            ).fetchall()
        return [_delivery(r) for r in rows]

    def delivered(self, delivery_id: str, now: datetime) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_error = ''"
                " WHERE delivery_id = ?",
                (DeliveryStatus.DELIVERED.value, _ts(now), delivery_id),
            )

    def failed(self, delivery_id: str, now: datetime, error: str, retry_at: datetime | None) -> None:
        status = DeliveryStatus.PENDING if retry_at is not None else DeliveryStatus.DEAD
        with self._db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_error = ?,"
                " next_attempt_at = ? WHERE delivery_id = ?",
                (status.value, _ts(now), error[:300], _ts(retry_at or now), delivery_id),
            )

    def dead(self, tenant_id: str | None, limit: int) -> list[Delivery]:
        where, args = ("status = ?", [DeliveryStatus.DEAD.value])
        if tenant_id is not None:
            where, args = where + " AND tenant_id = ?", [*args, tenant_id]
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_DELIVERY_COLUMNS} FROM deliveries WHERE {where}"
                " ORDER BY last_attempt_at DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [_delivery(r) for r in rows]

    def redrive(self, tenant_id: str | None, delivery_ids: Sequence[str] | None, now: datetime) -> int:
        where, args = "status = ?", [DeliveryStatus.DEAD.value]
        if tenant_id is not None:
            where, args = where + " AND tenant_id = ?", [*args, tenant_id]
        if delivery_ids is not None:
            if not delivery_ids:
                return 0
            where += f" AND delivery_id IN ({placeholders(len(delivery_ids))})"
            args += list(delivery_ids)
        with self._db.write() as conn:
            return int(
                conn.execute(
                    f"UPDATE deliveries SET status = ?, attempts = 0, next_attempt_at = ? WHERE {where}",
                    (DeliveryStatus.PENDING.value, _ts(now), *args),
                ).rowcount
            )


def _hook(row: Any) -> Webhook:
    return Webhook(
        tenant_id=row[0],
        webhook_id=row[1],
        url=row[2],
        events=tuple(json.loads(row[3])),
        secret=row[4],
        created_at=_at(row[5]),
        description=row[6],
    )


def _delivery(row: Any) -> Delivery:
    return Delivery(
        delivery_id=row[0],
        webhook_id=row[1],
        tenant_id=row[2],
        event_id=row[3],
        event_type=row[4],
        body=bytes(row[5]),
        status=DeliveryStatus(row[6]),
        attempts=int(row[7]),
        next_attempt_at=_at(row[8]),
        last_error=row[9],
        last_attempt_at=None if row[10] is None else _at(row[10]),
    )
