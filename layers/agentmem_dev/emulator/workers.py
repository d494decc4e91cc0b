"""Worker processes for ``agentmem serve --workers N``: each is one execution environment of the
api λ, as Lambda runs them — its own container built with ``bootstrap()`` over the shared data
directory, warmed at start, handling one API Gateway event at a time — and one more process runs
the event sources (queue poller, stream reader, timers) once for the whole server.

The front (the threaded HTTP server, :func:`agentmem_dev.emulator.server.make_front`) checks a
worker out of :class:`WorkerPool`, sends it the event over a pipe and waits for the response, so
requests of different users run in parallel on different cores, without a process-wide lock.
Processes are started with multiprocessing's ``spawn`` (no state, thread or SQLite connection of
the front is inherited; the stores are shared through their files, and the embedded adapters
detect the other processes' writes).

Failures are answered, never hung on: a worker that dies mid-request is replaced and the request
answered 502 (:class:`WorkerDied`); one that runs past ``request_timeout_s`` is killed, replaced
and answered 504 (:class:`WorkerTimedOut`), like API Gateway's integration timeout; when no worker
frees up within ``acquire_timeout_s`` the answer is 503 (:class:`NoWorkerFree`). A worker that dies
while idle is replaced before it is used. Shutdown (:meth:`WorkerPool.close`,
:meth:`EventSources.close`) asks each child to stop, then terminates and kills what is left;
children ignore SIGINT (Ctrl-C reaches the whole process group: the front decides) and exit on
their own when the front's end of the pipe closes, so a front killed outright leaves no orphans.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from agentmem.settings import Settings

log = logging.getLogger(__name__)
_CONTEXT = multiprocessing.get_context("spawn")

STARTUP_TIMEOUT_S = 600.0  # a cold start that embeds the guard's banks on a slow machine
REQUEST_TIMEOUT_S = 29.0  # API Gateway's integration timeout
ACQUIRE_TIMEOUT_S = 29.0
STOP_GRACE_S = 5.0
BATCH_GRACE_S = 60.0  # the event sources' current batch (ingest of 10 turns, a retention pass)


class WorkerFailed(Exception):
    """A request the workers could not answer; ``status`` and ``code`` are what the front sends."""

    status = 502
    code = "bad_gateway"
    retry_after: str | None = None


class WorkerDied(WorkerFailed):
    """The worker handling the request exited before answering (it is replaced)."""


class WorkerTimedOut(WorkerFailed):
    """The worker did not answer within the request timeout (it is killed and replaced)."""

    status = 504
    code = "gateway_timeout"


class NoWorkerFree(WorkerFailed):
    """Every worker stayed busy (or was being replaced) for the whole acquire timeout."""

    status = 503
    code = "no_worker_free"
    retry_after = "1"


class StartupFailed(Exception):
    """A child process could not build or warm its container; the message says why."""


def default_workers() -> int:
    """The number of cores this process may run on (the ``--workers`` default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------- in the children


def _child_setup(level: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the front's to handle
    logging.basicConfig(level=level, stream=sys.stderr)
    from agentmem_dev import observability

    observability.configure_logging(level)  # the front's log format (AGENTMEM_LOG_FORMAT)


def _warm_container(settings: Settings) -> Any:
    from agentmem.bootstrap import bootstrap

    container = bootstrap(settings)
    container.warm()  # no request pays a first use (Container.warm)
    return container


def _api_worker_main(conn: Connection, level: int, settings: Settings) -> None:
    """One api λ environment: build and warm, say ready, then one event at a time until told to
    stop (``None``) or the front's end of the pipe closes."""
    _child_setup(level)
    from agentmem_dev.emulator import lambdas

    try:
        container = _warm_container(settings)
        lambdas.load("api")
    except Exception as exc:  # reported to the front, which refuses to start
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", container.embedder.model_id))
    busy, stopping = threading.Event(), threading.Event()

    def _terminate(*_: Any) -> None:  # SIGTERM (a service manager signals the whole group)
        if not busy.is_set():
            raise SystemExit(0)
        stopping.set()  # the request in hand is answered first

    signal.signal(signal.SIGTERM, _terminate)
    while not stopping.is_set():
        try:
            event = conn.recv()
        except (EOFError, OSError):
            return  # the front is gone
        if event is None:
            return
        busy.set()
        try:
            result = lambdas.invoke("api", event, container)
        except Exception:  # the front answers 500, as the in-process server does
            log.exception("local.worker_invocation_failed")
            result = None
        try:
            conn.send(result)
        except (BrokenPipeError, OSError):
            return
        finally:
            busy.clear()


def _events_main(conn: Connection, level: int, settings: Settings, poll_interval_s: float) -> None:
    """The event sources, once for the server: a :class:`LocalRunner` until told to stop."""
    _child_setup(level)
    from agentmem_dev.emulator.runner import LocalRunner

    try:
        runner = LocalRunner(_warm_container(settings), poll_interval_s=poll_interval_s)
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())  # finish the batch in hand, then exit
    runner.start()
    conn.send(("ready", ""))
    while not stopping.is_set():
        try:
            if conn.poll(0.2):
                conn.recv()  # None: stop
                break
        except (EOFError, OSError):  # the front is gone
            break
    runner.stop()  # the current batch (ingest, projection, retention) is finished first


# ---------------------------------------------------------------------------- in the front


@dataclass(eq=False)  # one per process: compared and hashed by identity
class _Child:
    process: BaseProcess
    conn: Connection

    @property
    def pid(self) -> int:
        return int(self.process.pid or 0)

    def alive(self) -> bool:
        return self.process.exitcode is None


def _spawn(target: Callable[..., None], name: str, *args: Any) -> _Child:
    parent, child = _CONTEXT.Pipe()
    process = _CONTEXT.Process(
        target=target, args=(child, logging.getLogger().getEffectiveLevel(), *args), name=name, daemon=True
    )
    process.start()
    child.close()  # only the child holds its end: its exit reads as EOF here
    return _Child(process, parent)


def _await_ready(child: _Child, timeout_s: float) -> str:
    """The child's ready note (the api worker's embedder model id); StartupFailed otherwise."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if child.conn.poll(0.2):
            try:
                kind, note = child.conn.recv()
            except (EOFError, OSError):
                break
            if kind == "ready":
                return str(note)
            _stop([child], grace_s=1.0)
            raise StartupFailed(f"{child.process.name} could not start: {note}")
        if not child.alive():
            break
    _stop([child], grace_s=1.0)
    raise StartupFailed(f"{child.process.name} exited or did not start within {timeout_s:.0f} s")


def _stop(children: list[_Child], grace_s: float = STOP_GRACE_S) -> None:
    """Ask each child to stop, then terminate and kill what is left; nothing outlives this."""
    for child in children:
        with contextlib.suppress(OSError, ValueError):
            child.conn.send(None)
    deadline = time.monotonic() + grace_s
    for child in children:
        child.process.join(max(0.0, deadline - time.monotonic()))
    for child in children:
        if child.alive():
            child.process.terminate()
            child.process.join(1.0)
        if child.alive():
            child.process.kill()
            child.process.join(1.0)
        with contextlib.suppress(OSError):
            child.conn.close()


class WorkerPool:
    """``size`` api λ worker processes over ``settings``' data directory (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        size: int,
        *,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        acquire_timeout_s: float = ACQUIRE_TIMEOUT_S,
    ) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.settings = settings
        self.size = size
        self.startup_timeout_s = startup_timeout_s
        self.request_timeout_s = request_timeout_s
        self.acquire_timeout_s = acquire_timeout_s
        self.model_id = ""
        self.replaced = 0  # workers that died or timed out and were started again
        self._replacing = 0  # replacements not ready yet
        self._idle: queue.Queue[_Child] = queue.Queue()
        self._children: set[_Child] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._names = itertools.count(1)

    def _new(self) -> _Child:
        child = _spawn(_api_worker_main, f"agentmem-api-{next(self._names)}", self.settings)
        with self._lock:
            self._children.add(child)
        return child

    def start(self) -> WorkerPool:
        """Start every worker (they warm in parallel) and wait until all are ready."""
        started = [self._new() for _ in range(self.size)]
        try:
            for child in started:
                self.model_id = _await_ready(child, self.startup_timeout_s)
        except StartupFailed:
            self.close()
            raise
        for child in started:
            self._idle.put(child)
        return self

    def pids(self) -> list[int]:
        """The worker processes' ids (alive or being replaced)."""
        with self._lock:
            return sorted(c.pid for c in self._children)

    def down(self) -> str | None:
        """Why the pool is short of workers now (None when every worker is up)."""
        with self._lock:
            short = self._replacing
        if short <= 0 or self._closed.is_set():
            return None
        return f"{short} of {self.size} api workers exited and are being replaced"

    def invoke(self, event: dict[str, Any]) -> tuple[Any, int]:
        """Run ``event`` on a free worker; returns (the handler's result, the worker's pid).
        Raises a :class:`WorkerFailed` subclass when no answer can come."""
        deadline = time.monotonic() + self.acquire_timeout_s
        while True:
            child = self._acquire(deadline)
            try:
                child.conn.send(event)
                break
            except (BrokenPipeError, OSError):  # died while idle: the event was not delivered
                self._replace(child, "died_idle")
        if not child.conn.poll(self.request_timeout_s):
            self._replace(child, "timed_out")
            raise WorkerTimedOut(f"the worker did not answer within {self.request_timeout_s:.0f} s")
        try:
            result = child.conn.recv()
        except (EOFError, OSError) as exc:
            self._replace(child, "died")
            raise WorkerDied("the worker handling the request exited; it is being replaced") from exc
        self._idle.put(child)
        return result, child.pid

    def _acquire(self, deadline: float) -> _Child:
        while True:
            if self._closed.is_set():
                raise NoWorkerFree("the server is shutting down")
            try:
                child = self._idle.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise NoWorkerFree(
                    f"no worker was free within {self.acquire_timeout_s:.0f} s; retry shortly"
                ) from None
            if child.alive():
                return child
            self._replace(child, "died_idle")

    def _replace(self, child: _Child, reason: str) -> None:
        """Stop ``child`` for good and start another in the background."""
        log.warning("local.worker_replaced", extra={"pid": child.pid, "reason": reason})
        with self._lock:
            self._children.discard(child)
            self.replaced += 1
            self._replacing += 1
        if child.alive():
            child.process.kill()
        child.process.join(1.0)
        with contextlib.suppress(OSError):
            child.conn.close()
        threading.Thread(target=self._respawn, name="local-worker-respawn", daemon=True).start()

    def _respawn(self) -> None:
        backoff = 0.5
        while not self._closed.is_set():
            child = self._new()
            try:
                _await_ready(child, self.startup_timeout_s)
            except StartupFailed:
                log.exception("local.worker_respawn_failed")
                with self._lock:
                    self._children.discard(child)
                self._closed.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            with self._lock:
                self._replacing -= 1
            if self._closed.is_set():
                _stop([child], grace_s=1.0)
            else:
                from agentmem_dev import observability

                observability.record_restart("api")
                self._idle.put(child)
            return

    def close(self) -> None:
        """Stop every worker (idle ones at once, busy ones after their request, then by force)."""
        self._closed.set()
        with self._lock:
            children = list(self._children)
            self._children.clear()
        _stop(children)


class EventSources:
    """The event sources (queue poller, stream reader, timers) in one process of their own, so
    they run once however many api workers there are and off the front's interpreter.

    Supervised like the api workers: a thread watches the process and, when it exits (killed,
    crashed), logs ``local.events_died``, starts another and waits for it to be ready, retrying
    with a doubling backoff (``restart_backoff_s`` up to ``max_backoff_s``) while it fails to
    start. Every replacement is counted (:attr:`restarts`, the ``agentmem_local_restarts_total``
    metric); :meth:`down` says why the sources are not running while they are not, which
    ``/v1/health`` reports as ``degraded``. A batch the dead process held is redelivered after its
    visibility timeout (the queue) or read again from the checkpoint (the stream)."""

    def __init__(
        self,
        settings: Settings,
        *,
        poll_interval_s: float = 0.1,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        restart_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
    ) -> None:
        self.settings = settings
        self.poll_interval_s = poll_interval_s
        self.startup_timeout_s = startup_timeout_s
        self.restart_backoff_s = restart_backoff_s
        self.max_backoff_s = max_backoff_s
        self.restarts = 0  # processes started again after one exited
        self._child: _Child | None = None
        self._down: str | None = "starting"
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._supervisor: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None else None

    def down(self) -> str | None:
        """Why the event sources are not running now (None while they run)."""
        with self._lock:
            return self._down

    def spawn(self) -> EventSources:
        """Start the process (it warms in parallel with the workers); :meth:`wait_ready` next."""
        self._child = self._new()
        return self

    def _new(self) -> _Child:
        return _spawn(_events_main, "agentmem-events", self.settings, self.poll_interval_s)

    def wait_ready(self) -> None:
        """Wait for the first process, then supervise it."""
        if self._child is None:
            raise StartupFailed("the event sources were not started")
        try:
            _await_ready(self._child, self.startup_timeout_s)
        except StartupFailed:
            self._child = None
            raise
        with self._lock:
            self._down = None
        self._supervisor = threading.Thread(
            target=self._supervise, name="local-events-supervisor", daemon=True
        )
        self._supervisor.start()

    def _supervise(self) -> None:
        while not self._closed.is_set():
            child = self._child
            if child is None:
                return
            child.process.join(0.2)
            if self._closed.is_set() or child.alive():
                continue
            code = child.process.exitcode
            log.warning("local.events_died", extra={"pid": child.pid, "code": code})
            with self._lock:
                self._down = f"the event-source process exited (code {code}); restarting"
            with contextlib.suppress(OSError):
                child.conn.close()
            self._restart()

    def _restart(self) -> None:
        from agentmem_dev import observability

        backoff = self.restart_backoff_s
        while not self._closed.is_set():
            child = self._new()
            self._child = child
            try:
                _await_ready(child, self.startup_timeout_s)
            except StartupFailed as exc:
                log.warning("local.events_restart_failed", extra={"error": type(exc).__name__})
                with self._lock:
                    self._down = (
                        f"the event-source process could not start again; retrying in {backoff:.1f} s"
                    )
                if self._closed.wait(backoff):
                    return
                backoff = min(backoff * 2, self.max_backoff_s)
                continue
            if self._closed.is_set():
                _stop([child], grace_s=1.0)
                return
            with self._lock:
                self.restarts += 1
                self._down = None
            observability.record_restart("events")
            log.warning("local.events_replaced", extra={"pid": child.pid, "code": self.restarts})
            return

    def close(self) -> None:
        self._closed.set()
        if self._supervisor is not None:
            self._supervisor.join(5.0)
            self._supervisor = None
        if self._child is not None:
            _stop([self._child], grace_s=BATCH_GRACE_S)
            self._child = None
