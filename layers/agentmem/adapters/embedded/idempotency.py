"""SQLite :class:`agentmem.ports.IdempotencyStore`: the answers of explicit writes by
``Idempotency-Key``, in ``memory.db`` beside the memories they stored (table ``idempotency_keys``,
keyed by scope and key, so one user's key never meets another's). A record lives until its
``expires_at`` (``AGENTMEM_IDEMPOTENCY_TTL_HOURS`` after the first request); expired records are
replaced by the next claim of their key and pruned by the event sources' retention pass, as
DynamoDB's TTL deletes them in AWS. Records hold a hash of the request and the JSON answer
(which may name memory ids and redacted content, as the memory itself does); an erase deletes
the scope's records (:meth:`SqliteIdempotencyStore.erase_scope`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agentmem.adapters.codec import format_sortable, parse_datetime
from agentmem.adapters.embedded.sqlite_base import SqliteDatabase
from agentmem.domain.models import Scope
from agentmem.ports import IdempotencyRecord, RetentionPolicy

SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_keys (
    pk TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    request_id TEXT NOT NULL,
    first_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    status INTEGER,
    body TEXT,
    PRIMARY KEY (pk, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_by_expiry ON idempotency_keys (expires_at);
"""


class SqliteIdempotencyStore:
    """:class:`agentmem.ports.IdempotencyStore` over one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path, SCHEMA, name="idempotency")

    def close(self) -> None:
        self._db.close()

    def claim(self, scope: Scope, candidate: IdempotencyRecord, now: datetime) -> IdempotencyRecord:
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT fingerprint, request_id, first_at, expires_at, status, body FROM idempotency_keys"
                " WHERE pk = ? AND key = ?",
                (scope.key, candidate.key),
            ).fetchone()
            if row is not None and str(row[3]) > format_sortable(now):
                fingerprint, request_id, first_at, expires_at, status, body = row
                return IdempotencyRecord(
                    key=candidate.key,
                    fingerprint=str(fingerprint),
                    request_id=str(request_id),
                    first_at=parse_datetime(str(first_at)),
                    expires_at=parse_datetime(str(expires_at)),
                    status=None if status is None else int(status),
                    body=None if body is None else str(body),
                )
            conn.execute(
                "INSERT OR REPLACE INTO idempotency_keys"
                " (pk, key, fingerprint, request_id, first_at, expires_at, status, body)"
                " VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)",
                (
                    scope.key,
                    candidate.key,
                    candidate.fingerprint,
                    candidate.request_id,
                    format_sortable(candidate.first_at),
                    format_sortable(candidate.expires_at),
                ),
            )
        return candidate

    def complete(self, scope: Scope, key: str, status: int, body: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE idempotency_keys SET status = ?, body = ? WHERE pk = ? AND key = ?",
                (int(status), body, scope.key, key),
            )

    def prune_idempotency(self, now: datetime) -> int:
        with self._db.write() as conn:
            return int(
                conn.execute(
                    "DELETE FROM idempotency_keys WHERE expires_at <= ?", (format_sortable(now),)
                ).rowcount
            )

    def apply_retention(self, policy: RetentionPolicy, now: datetime) -> dict[str, int]:
        """:class:`agentmem.ports.Retained`: expired records."""
        return {"idempotency_keys": self.prune_idempotency(now)}

    def erase_scope(self, scope: Scope) -> int:
        """Drop the scope's records (an erase: their answers may quote its memories)."""
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM idempotency_keys WHERE pk = ?", (scope.key,)).rowcount)
