"""A durable, bounded local queue of turns with SQS semantics (the embedded ingest queue).

``messages`` holds what is pending or in flight. :meth:`SqliteTurnQueue.receive` hides a message
for ``visibility_timeout_s`` behind a fresh receipt handle; :meth:`~SqliteTurnQueue.delete` with
that handle acknowledges it; :meth:`~SqliteTurnQueue.release` (a failure) makes it visible again
after a delay, and a message whose visibility simply expires is received again. Once a message has
been received ``max_receives`` times without being deleted it moves to ``dead_letters`` (on the
failing release, or on the next receive), keeping its last error — SQS's redrive policy.

The queue is bounded and fair: :meth:`~SqliteTurnQueue.send` refuses the whole batch with
:class:`~agentmem.errors.QueueFull` when pending + in-flight messages would exceed ``capacity``, or
when one tenant's would exceed ``tenant_capacity`` (its share: a tenant at its limit is refused,
and one tenant alone can never fill the queue for the others), and counts the refused turns;
nothing is dropped silently.

No raw text at rest: the file runs with ``secure_delete`` and every acknowledgement
(:meth:`~SqliteTurnQueue.delete`, :meth:`~SqliteTurnQueue.delete_batch`), dead-lettering and purge
checkpoints the WAL with ``TRUNCATE`` (:meth:`~.sqlite_base.SqliteDatabase.checkpoint`), so a
processed body is in neither the database pages nor the WAL. The dead-letter table keeps the
body with its user and assistant texts redacted (:func:`agentmem.domain.guards.redact`).
:meth:`~SqliteTurnQueue.purge_scope` drops a scope's queued, in-flight and dead-lettered turns
(an erase).

It is also the local :class:`~agentmem.ports.QueuedTurns` (:meth:`~SqliteTurnQueue.queued_at`
reads ``messages``) and :class:`~agentmem.ports.DeadLetterQueue`: dead letters are listed per
scope (the scope their body names) oldest failure first, and
:meth:`~SqliteTurnQueue.redrive` moves them back to ``messages`` (receive count 0, visible now,
the original ``sent_at`` kept so the erase barrier still judges them). Message ids are the turns' message
ids; a turn already queued for the same scope is not queued twice. Time comes from the injected
clock, so tests move time instead of sleeping. Bodies are the SQS message JSON
(:meth:`agentmem.messages.TurnMessage.to_body`).

The module runs over 400 lines on purpose: the queue and its dead-letter table share one SQLite
file and one transaction (dead-lettering, redrive and purge each move rows between the two).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.scope_ledger import decode_cursor, encode_cursor
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.guards import redact
from agentmem.domain.models import Scope
from agentmem.errors import QueueFull, ValidationFailed
from agentmem.event_ports import BacklogState
from agentmem.messages import TurnMessage, scope_of_body
from agentmem.port_types import DeadLetterEntry, DeadLetterPage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    pk TEXT NOT NULL,
    message_id TEXT NOT NULL,
    body TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    visible_at REAL NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    receipt_handle TEXT UNIQUE,
    last_error TEXT,
    UNIQUE (pk, message_id)
);
CREATE INDEX IF NOT EXISTS messages_by_visibility ON messages (visible_at, seq);
CREATE TABLE IF NOT EXISTS dead_letters (
    seq INTEGER PRIMARY KEY,
    message_id TEXT NOT NULL,
    body TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    receive_count INTEGER NOT NULL,
    last_error TEXT,
    dead_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

_COUNTERS = ("refused", "sent", "deleted")  # stats(); "purged" (erases) is counted too


def tenant_range(tenant_id: str) -> tuple[str, str]:
    """The ``[low, high)`` range of queue partition keys (scope keys) of one tenant."""
    low = Scope(tenant_id, "_").key.removesuffix("_")  # "TENANT#<t>#USER#"
    return low, low[:-1] + chr(ord(low[-1]) + 1)


def redacted_body(body: str) -> str:
    """The body with the turn's texts (``user``, ``assistant``) redacted; a body that is not a
    JSON object is replaced by a note of its size (it cannot be ingested anyway)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return json.dumps({"unparseable_body_bytes": len(body.encode("utf-8", "replace"))})
    for name in ("user", "assistant"):
        if isinstance(data.get(name), str):
            data[name] = redact(data[name]).text
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    message_id: str
    receipt_handle: str
    body: str  # the SQS message JSON of one turn
    receive_count: int
    sent_at: datetime

    def message(self) -> TurnMessage:
        return TurnMessage.from_body(self.body)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    message_id: str
    body: str
    receive_count: int
    last_error: str | None
    sent_at: datetime
    dead_at: datetime


class SqliteTurnQueue:
    """Local :class:`agentmem.ports.TurnQueue` with receive/delete/release and a dead-letter table."""

    def __init__(
        self,
        path: str | Path,
        *,
        capacity: int = 10_000,
        max_receives: int = 5,
        clock: Callable[[], datetime] | None = None,
        tenant_capacity: int | None = None,
    ) -> None:
        """``tenant_capacity`` None: no tenant share (the whole ``capacity``)."""
        if capacity < 1 or max_receives < 1 or (tenant_capacity is not None and tenant_capacity < 1):
            raise ValueError("capacity, tenant_capacity and max_receives must be at least 1")
        self._db = SqliteDatabase(path, _SCHEMA, name="turn_queue")
        self._capacity = capacity
        self._tenant_capacity = min(capacity, tenant_capacity or capacity)
        self._max_receives = max_receives
        self._clock = clock or (lambda: datetime.now(UTC))

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def tenant_capacity(self) -> int:
        return self._tenant_capacity

    def compact(self, min_free_fraction: float) -> bool:
        """:class:`agentmem.ports.Compactable`: this adapter's file."""
        return self._db.compact(min_free_fraction)

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _count(conn: Any, name: str, amount: int) -> None:
        conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
            (name, amount),
        )

    def send(self, turns: Sequence[TurnMessage]) -> list[str]:
        now = self._clock()
        rows = [(t.scope.key, t.message_id, t.to_body()) for t in turns]
        tenant_of = {t.scope.key: t.tenant_id for t in turns}
        with self._db.write() as conn:
            fresh = {
                (pk, message_id)
                for pk, message_id, _ in rows
                if conn.execute(
                    "SELECT 1 FROM messages WHERE pk = ? AND message_id = ?", (pk, message_id)
                ).fetchone()
                is None
            }
            queued = int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
            refusal = self._refusal(conn, queued, fresh, tenant_of, len(rows))
            if refusal is not None:
                self._count(conn, "refused", len(rows))
            else:
                conn.executemany(
                    "INSERT OR IGNORE INTO messages (pk, message_id, body, sent_at, visible_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(pk, m, body, format_sortable(now), now.timestamp()) for pk, m, body in rows],
                )
                self._count(conn, "sent", len(fresh))
        if refusal is not None:  # raised after the commit, so the refusal stays counted
            raise refusal
        return [message_id for _, message_id, _ in rows]

    def _refusal(
        self, conn: Any, queued: int, fresh: set[tuple[str, str]], tenant_of: dict[str, str], requested: int
    ) -> QueueFull | None:
        """The tenant's share first (its own limit, whatever the others do), then the queue's."""
        wanted: dict[str, int] = {}
        for pk, _ in fresh:
            wanted[tenant_of[pk]] = wanted.get(tenant_of[pk], 0) + 1
        for tenant, count in sorted(wanted.items()):
            low, high = tenant_range(tenant)
            held = int(
                conn.execute(
                    "SELECT COUNT(*) FROM messages WHERE pk >= ? AND pk < ?", (low, high)
                ).fetchone()[0]
            )
            if held + count > self._tenant_capacity:
                return QueueFull(
                    "the tenant's share of the turn queue is full",
                    details={
                        "limit": "tenant",
                        "tenant_capacity": self._tenant_capacity,
                        "capacity": self._capacity,
                        "queued": held,
                        "requested": requested,
                    },
                )
        if queued + len(fresh) > self._capacity:
            return QueueFull(
                "turn queue is full",
                details={
                    "limit": "queue",
                    "capacity": self._capacity,
                    "queued": queued,
                    "requested": requested,
                },
            )
        return None

    def receive(self, max_messages: int = 10, visibility_timeout_s: float = 30.0) -> list[QueuedMessage]:
        if max_messages < 1:
            raise ValidationFailed("max_messages must be at least 1")
        now = self._clock()
        received: list[QueuedMessage] = []
        dead = 0
        with self._db.write() as conn:
            while len(received) < max_messages:
                rows = conn.execute(
                    "SELECT seq, message_id, body, sent_at, receive_count FROM messages"
                    " WHERE visible_at <= ? ORDER BY visible_at, seq LIMIT ?",
                    (now.timestamp(), max_messages - len(received)),
                ).fetchall()
                if not rows:
                    break
                for seq, message_id, body, sent_at, count in rows:
                    if count >= self._max_receives:
                        self._dead_letter(conn, seq, now)
                        dead += 1
                        continue
                    handle = uuid4().hex
                    conn.execute(
                        "UPDATE messages SET receive_count = receive_count + 1, receipt_handle = ?,"
                        " visible_at = ? WHERE seq = ?",
                        (handle, now.timestamp() + max(0.0, visibility_timeout_s), seq),
                    )
                    received.append(
                        QueuedMessage(message_id, handle, body, int(count) + 1, parse_datetime(sent_at))
                    )
        if dead:
            self._db.checkpoint()
        return received

    def delete(self, receipt_handle: str) -> bool:
        """Acknowledge a message; False if the handle is unknown or superseded by a later receive."""
        return self.delete_batch([receipt_handle]) == 1

    def delete_batch(self, receipt_handles: Sequence[str]) -> int:
        """Acknowledge several messages in one transaction and one WAL checkpoint (SQS's
        ``DeleteMessageBatch``); returns how many handles were valid."""
        if not receipt_handles:
            return 0
        with self._db.write() as conn:
            deleted = sum(
                conn.execute("DELETE FROM messages WHERE receipt_handle = ?", (handle,)).rowcount
                for handle in receipt_handles
            )
            self._count(conn, "deleted", deleted)
        if deleted:
            self._db.checkpoint()
        return int(deleted)

    def purge_scope(self, scope: Scope) -> int:
        """Drop the scope's queued, in-flight and dead-lettered turns; returns how many."""
        with self._db.write() as conn:
            queued = int(conn.execute("DELETE FROM messages WHERE pk = ?", (scope.key,)).rowcount)
            dead = [
                seq
                for seq, body in conn.execute("SELECT seq, body FROM dead_letters").fetchall()
                if scope_of_body(str(body)) == scope
            ]
            for seq in dead:
                conn.execute("DELETE FROM dead_letters WHERE seq = ?", (seq,))
            self._count(conn, "purged", queued + len(dead))
        self._db.checkpoint()
        return queued + len(dead)

    def release(self, receipt_handle: str, delay_s: float = 0.0, error: str | None = None) -> bool:
        """A failed attempt: visible again after ``delay_s``, or dead-lettered after the last try."""
        now = self._clock()
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT seq, receive_count FROM messages WHERE receipt_handle = ?", (receipt_handle,)
            ).fetchone()
            if row is None:
                return False
            conn.execute("UPDATE messages SET last_error = ? WHERE seq = ?", (error, row[0]))
            dead = row[1] >= self._max_receives
            if dead:
                self._dead_letter(conn, row[0], now)
            else:
                conn.execute(
                    "UPDATE messages SET receipt_handle = NULL, visible_at = ? WHERE seq = ?",
                    (now.timestamp() + max(0.0, delay_s), row[0]),
                )
        if dead:
            self._db.checkpoint()
        return True

    @staticmethod
    def _dead_letter(conn: Any, seq: int, now: datetime) -> None:
        """Move a message to ``dead_letters`` with its texts redacted."""
        row = conn.execute(
            "SELECT message_id, body, sent_at, receive_count, last_error FROM messages WHERE seq = ?", (seq,)
        ).fetchone()
        if row is None:
            return
        message_id, body, sent_at, count, error = row
        conn.execute(
            "INSERT OR REPLACE INTO dead_letters (seq, message_id, body, sent_at, receive_count, last_error,"
            " dead_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                message_id,
                redacted_body(str(body)),
                sent_at,
                count,
                error or "visibility timeout expired",
                format_sortable(now),
            ),
        )
        conn.execute("DELETE FROM messages WHERE seq = ?", (seq,))

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]:
        """Oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT message_id, body, receive_count, last_error, sent_at, dead_at FROM dead_letters"
                " ORDER BY dead_at, seq LIMIT ?",
                (max(0, limit),),
            ).fetchall()
        return [
            DeadLetter(m, body, int(count), error, parse_datetime(sent), parse_datetime(dead))
            for m, body, count, error, sent, dead in rows
        ]

    def queued_at(self, scope: Scope, message_id: str) -> datetime | None:
        """When the turn was sent, while it is pending or in flight (acknowledged: None)."""
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT sent_at FROM messages WHERE pk = ? AND message_id = ?", (scope.key, message_id)
            ).fetchone()
        return None if row is None else parse_datetime(row[0])

    def _dead_rows(self, conn: Any, scope: Scope | None) -> list[tuple[Any, ...]]:
        """(seq, message_id, body, receive_count, last_error, dead_at) of the scope, oldest first."""
        rows = conn.execute(
            "SELECT seq, message_id, body, receive_count, last_error, dead_at FROM dead_letters"
            " ORDER BY dead_at, seq"
        ).fetchall()
        return [r for r in rows if scope is None or scope_of_body(str(r[2])) == scope]

    @staticmethod
    def _entry(row: tuple[Any, ...]) -> DeadLetterEntry:
        _, message_id, body, count, error, dead_at = row
        try:
            session = json.loads(body).get("session_id")
        except (ValueError, AttributeError, RecursionError):
            session = None
        return DeadLetterEntry(
            message_id=str(message_id),
            scope=scope_of_body(str(body)),
            session_id=session if isinstance(session, str) else None,
            reason=str(error or "visibility timeout expired"),
            attempts=int(count),
            failed_at=parse_datetime(dead_at),
        )

    def dead_letters_of(
        self, scope: Scope | None, limit: int = 50, cursor: str | None = None
    ) -> DeadLetterPage:
        """The scope's dead letters (every scope's for None), oldest failure first."""
        after = None
        if cursor is not None:
            dead_at, _, seq = decode_cursor(cursor).partition("|")
            if not seq.isdigit():
                raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
            after = (dead_at, int(seq))
        with self._db.read() as conn:
            rows = [r for r in self._dead_rows(conn, scope) if after is None or (r[5], r[0]) > after]
        page = rows[: max(1, limit)]
        more = len(rows) > len(page)
        return DeadLetterPage(
            [self._entry(r) for r in page], encode_cursor(f"{page[-1][5]}|{page[-1][0]}") if more else None
        )

    def dead_letter(self, scope: Scope, message_id: str) -> DeadLetterEntry | None:
        with self._db.read() as conn:
            rows = [r for r in self._dead_rows(conn, scope) if r[1] == message_id]
        return self._entry(rows[-1]) if rows else None

    def redrive(self, scope: Scope | None, message_ids: Sequence[str] | None = None) -> list[str]:
        """Back to ``messages`` (a turn queued again meanwhile is not queued twice); a dead letter
        whose body names no scope cannot be routed and stays."""
        wanted = None if message_ids is None else set(message_ids)
        now = self._clock()
        redriven: list[str] = []
        with self._db.write() as conn:
            for seq, message_id, body, *_ in self._dead_rows(conn, scope):
                owner = scope_of_body(str(body))
                if owner is None or (wanted is not None and message_id not in wanted):
                    continue
                sent_at = conn.execute("SELECT sent_at FROM dead_letters WHERE seq = ?", (seq,)).fetchone()[0]
                conn.execute(
                    "INSERT OR IGNORE INTO messages (pk, message_id, body, sent_at, visible_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (owner.key, message_id, body, sent_at, now.timestamp()),
                )
                conn.execute("DELETE FROM dead_letters WHERE seq = ?", (seq,))
                redriven.append(str(message_id))
            self._count(conn, "redriven", len(redriven))
        return redriven

    def backlog(self) -> BacklogState:
        """:class:`agentmem.ports.Backlog`: turns not acknowledged yet, and the oldest one's send time."""
        with self._db.read() as conn:
            count, oldest = conn.execute("SELECT COUNT(*), MIN(sent_at) FROM messages").fetchone()
        return BacklogState(int(count), None if oldest is None else parse_datetime(str(oldest)))

    def stats(self) -> dict[str, int]:
        now = self._clock().timestamp()
        with self._db.read() as conn:
            total, inflight = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(receipt_handle IS NOT NULL AND visible_at > ?), 0) FROM messages",
                (now,),
            ).fetchone()
            dead = conn.execute("SELECT COUNT(*) FROM dead_letters").fetchone()[0]
            counters = dict(conn.execute("SELECT name, value FROM counters").fetchall())
        result = {"pending": int(total) - int(inflight), "inflight": int(inflight), "dead": int(dead)}
        result.update({name: int(counters.get(name, 0)) for name in _COUNTERS})
        return result
