"""A per-user and per-tenant share of the local server's concurrency, like an API Gateway usage
plan: a caller beyond its share gets 429 with ``Retry-After`` at once instead of queueing in front
of everyone else, so one user's flood of heavy calls cannot take the server from the others.

In-process the api function runs one invocation at a time (one Lambda execution environment, see
:mod:`agentmem_dev.emulator.lambdas`), so what another user waits for is what is in flight before
it: at most ``per_user`` calls of any one user and ``per_tenant`` of any one tenant. With worker
processes (``agentmem serve --workers N``) the front keeps this share for all of them and caps
``per_user`` at ``N - 1`` (:func:`agentmem_dev.emulator.server.make_front`): one user never holds
every worker, so another user's call finds one free.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["ConcurrencyShare"]


@dataclass
class ConcurrencyShare:
    per_user: int
    per_tenant: int
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _users: Counter[tuple[str, str]] = field(default_factory=Counter, repr=False)
    _tenants: Counter[str] = field(default_factory=Counter, repr=False)

    @contextmanager
    def slot(self, tenant: str | None, user: str | None) -> Iterator[str | None]:
        """Hold a slot for one request; yields None when admitted, else the share that was full
        (``user`` or ``tenant``). A request without a scope is not counted (the API refuses it)."""
        if not tenant or not user:
            yield None
            return
        key = (tenant, user)
        with self._lock:
            if self._users[key] >= self.per_user:
                refused: str | None = "user"
            elif self._tenants[tenant] >= self.per_tenant:
                refused = "tenant"
            else:
                refused = None
                self._users[key] += 1
                self._tenants[tenant] += 1
        if refused is not None:
            yield refused
            return
        try:
            yield None
        finally:
            with self._lock:
                self._users[key] -= 1
                self._tenants[tenant] -= 1
                if not self._users[key]:
                    del self._users[key]
                if not self._tenants[tenant]:
                    del self._tenants[tenant]
