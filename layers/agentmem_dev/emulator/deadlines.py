"""One watcher thread for the local server's per-request deadlines.

The server cuts a client that has not finished its request line and headers within
``header_timeout_s`` (a trickle of bytes never trips a per-read socket timeout). A
``threading.Timer`` per request did that at the price of starting a thread for every request,
and waiting for it to be scheduled: ~0.2 ms of each answer on a busy 2-core machine (profiled:
the thread's start and the waits on its start-up lock). :class:`Deadlines` keeps the armed deadlines in a dict and one
daemon thread checks them every ``tick`` seconds, so arming and disarming are a dict operation
under a lock. A deadline fires between ``seconds`` and ``seconds + tick`` after it was armed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
TICK_S = 0.1


class Deadlines:
    """Armed callbacks by key; each runs once, on the watcher thread, when its time is past,
    unless disarmed before."""

    def __init__(self, tick: float = TICK_S) -> None:
        self._tick = tick
        self._lock = threading.Lock()
        self._armed: dict[int, tuple[float, Callable[[], None]]] = {}
        self._thread: threading.Thread | None = None

    def arm(self, key: int, seconds: float, on_expiry: Callable[[], None]) -> None:
        with self._lock:
            self._armed[key] = (time.monotonic() + seconds, on_expiry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="deadlines", daemon=True)
                self._thread.start()

    def disarm(self, key: int) -> None:
        with self._lock:
            self._armed.pop(key, None)

    def _watch(self) -> None:
        while True:
            time.sleep(self._tick)
            now = time.monotonic()
            with self._lock:
                due = [k for k, (at, _) in self._armed.items() if at <= now]
                fire = [self._armed.pop(k)[1] for k in due]
            for callback in fire:
                try:
                    callback()
                except Exception:  # one failed cut must not stop the watcher
                    log.exception("local.deadline_failed")
