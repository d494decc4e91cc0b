"""The local service ``agentmem serve`` runs (and ``agentmem bench load`` measures): the HTTP
server, the api λ and the event sources over one data directory, in one of two shapes.

* ``workers >= 1``: a front process (this one: the threaded HTTP server, bounded input, the
  authorizer, the concurrency share) and ``workers`` api worker processes, plus one process for
  the event sources (:mod:`agentmem_dev.emulator.workers`). Nothing of the stores is built here.
* ``workers == 0``: everything in this process — the api λ one invocation at a time, the event
  sources as threads (:class:`~agentmem_dev.emulator.runner.LocalRunner`); a ``container`` may be
  passed in (tests, benchmarks).

Either way every process warms its embedder and the guard's banks before the first request.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from agentmem.bootstrap import Container, bootstrap
from agentmem.settings import Settings
from agentmem_dev import observability
from agentmem_dev.emulator.runner import LocalRunner
from agentmem_dev.emulator.server import make_front, make_server
from agentmem_dev.emulator.workers import REQUEST_TIMEOUT_S, EventSources, WorkerPool

log = logging.getLogger(__name__)
DRAIN_TIMEOUT_S = REQUEST_TIMEOUT_S + 1.0  # the longest a request may take, and its answer's write


@dataclass
class LocalService:
    settings: Settings
    host: str = "127.0.0.1"
    port: int = 0
    workers: int = 0
    container: Container | None = None  # in-process mode only; built from settings when None
    server: ThreadingHTTPServer | None = field(default=None, init=False)
    pool: WorkerPool | None = field(default=None, init=False)
    events: EventSources | None = field(default=None, init=False)
    runner: LocalRunner | None = None  # in-process mode's event sources; LocalRunner(container) if None
    model_id: str = field(default="", init=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _metrics_dir: str = field(default="", init=False, repr=False)  # agentmem_dev.observability

    @property
    def url(self) -> str:
        if self.server is None:
            raise RuntimeError("the service is not started")
        return f"http://{self.host}:{self.server.server_address[1]}"

    def start(self) -> LocalService:
        """Build and warm everything, bind the socket; returns once requests can be served (call
        :meth:`serve_forever` or :meth:`serve_in_background` next). Refuses to start
        (:class:`~agentmem_dev.emulator.workers.StartupFailed`) when a worker cannot."""
        self._metrics_dir = observability.start(self.settings.data_dir)  # before any worker: they inherit it
        try:
            if self.workers >= 1:
                self._start_workers()
            else:
                self._start_in_process()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_workers(self) -> None:
        self.events = EventSources(self.settings).spawn()  # warms while the workers do
        self.pool = WorkerPool(self.settings, self.workers).start()
        self.events.wait_ready()
        self.model_id = self.pool.model_id
        self.server = make_front(self.host, self.port, self.settings, self.pool, faults=self.faults)

    def _start_in_process(self) -> None:
        container = self.container or bootstrap(self.settings)
        self.container = container
        container.warm()  # no request pays a first use (Container.warm)
        self.model_id = container.embedder.model_id
        self.runner = self.runner or LocalRunner(container)
        self.runner.start()
        self.server = make_server(self.host, self.port, container, faults=self.faults)

    def faults(self) -> list[str]:
        """What of the server is down now (``/v1/health`` reports it as degraded)."""
        found: list[str] = []
        for part in (self.events, self.pool):
            reason = part.down() if part is not None else None
            if reason:
                found.append(reason)
        if self.runner is not None:
            found += self.runner.down()
        return found

    def serve_forever(self) -> None:
        if self.server is None:
            raise RuntimeError("the service is not started")
        self.server.serve_forever()

    def serve_in_background(self) -> LocalService:
        self._thread = threading.Thread(target=self.serve_forever, name="local-http", daemon=True)
        self._thread.start()
        return self

    def drain(self, timeout_s: float = DRAIN_TIMEOUT_S) -> bool:
        """SIGTERM's first half: stop accepting (the listening socket is closed, so a new
        connection is refused at once rather than left waiting), then wait up to ``timeout_s``
        for the requests in flight to be answered (each with ``Connection: close``). True when
        none was left. :meth:`stop` next: the event sources finish their current batch."""
        server = self.server
        if server is None:
            return True
        inflight = server.RequestHandlerClass.inflight  # type: ignore[attr-defined]
        inflight.draining = True
        if self._thread is not None:  # serve_in_background: its loop is ours to end
            server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        with contextlib.suppress(OSError):
            server.socket.close()
        drained = bool(inflight.wait_idle(timeout_s))
        if not drained:
            log.warning("local.drain_timed_out", extra={"count": inflight.count})
        return drained

    def stop(self) -> None:
        """Stop serving, then the workers and the event sources; safe to call more than once."""
        if self.server is not None:
            if self._thread is not None:
                self.server.shutdown()
                self._thread.join(timeout=5)
                self._thread = None
            self.server.server_close()
            self.server = None
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        if self.events is not None:
            self.events.close()
            self.events = None
        if self.runner is not None:
            self.runner.stop()
            self.runner = None
        if self._metrics_dir:
            observability.stop(self._metrics_dir)
            self._metrics_dir = ""
