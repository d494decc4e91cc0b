"""Idempotent explicit writes: an ``Idempotency-Key`` makes a retried request return the first
request's answer instead of doing the work again (the convention of payment APIs).

The key is the caller's (1–255 printable ASCII characters, no comma), scoped to the caller's tenant and user.
The first request with a key claims it with a fingerprint of the request (method, path, body) and
its request id and time; the answer is kept once the request succeeds. A retry with the key:

* the first request has answered — that answer again (``Idempotent-Replayed: true``);
* it has not (in flight, or its worker died before answering) — the work runs again with the
  first request's id and time, so it writes the same memory ids, and the store's existing record
  is found instead of a second one being created;
* the fingerprint differs (another body with the same key) — 422 ``idempotency_key_reused``.

An error (a refused write, a store down) keeps no answer: a retry runs again and gets its own. A
record lives ``idempotency_ttl_hours`` from the first request; after that the key is free again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentmem.domain.models import Scope
from agentmem.errors import IdempotencyKeyReused, ValidationFailed
from agentmem.ports import IdempotencyRecord, IdempotencyStore

MAX_KEY_CHARS = 255


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: str
    replayed: bool = False


def fingerprint(method: str, path: str, body: str) -> str:
    """What makes two requests the same request."""
    return hashlib.sha256(f"{method.upper()} {path}\n{body}".encode()).hexdigest()


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_CHARS or not all(" " <= ch <= "~" and ch != "," for ch in key):
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} printable ASCII characters, no comma",
            details={"header": "Idempotency-Key"},
        )
    return key


@dataclass
class IdempotentRequests:
    """``store`` None (a backend that keeps no keys): every request runs, the key is ignored."""

    store: IdempotencyStore | None
    ttl: timedelta

    def run(
        self,
        scope: Scope,
        key: str | None,
        request_fingerprint: str,
        *,
        request_id: str,
        now: datetime,
        work: Callable[[str, datetime], tuple[int, str]],
    ) -> Answer:
        """``work(request_id, now)`` -> (status, JSON body), run once per key (see the module)."""
        if key is None or self.store is None:
            return Answer(*work(request_id, now))
        candidate = IdempotencyRecord(
            key=check_key(key),
            fingerprint=request_fingerprint,
            request_id=request_id,
            first_at=now,
            expires_at=now + self.ttl,
        )
        record = self.store.claim(scope, candidate, now)
        if record.fingerprint != request_fingerprint:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was used with another request; use a new key for a new request",
                details={"header": "Idempotency-Key"},
            )
        if record.status is not None and record.body is not None:
            return Answer(record.status, record.body, replayed=True)
        status, body = work(record.request_id, record.first_at)
        if 200 <= status < 300:
            self.store.complete(scope, record.key, status, body)
        return Answer(status, body)
