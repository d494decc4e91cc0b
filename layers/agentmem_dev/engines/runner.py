"""Starting and stopping the engines together (``agentmem engines up|down``, the test plugin).

:func:`start` assembles each engine's home in a fresh run folder, starts them all at once (each
in its own process group, its output in ``<run>/<name>.log``) and waits until every one answers,
so the slowest sets the pace (OpenSearch: ~15-30 s). :class:`Running` stops them (TERM, then
KILL) and removes the run folder. ``up`` records a detached set in ``<cache>/run.json`` so that
``down`` and ``status`` from another shell can find it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentmem_dev.engines.maven import fetch, fetched
from agentmem_dev.engines.servers import (
    DEFAULT_PORTS,
    KINDS,
    Engine,
    EngineUnavailable,
    free_port,
    java_home,
    port_free,
)

NAMES = tuple(KINDS)
ENV_VARS = tuple(kind.env_var for kind in KINDS.values())
START_TIMEOUT_S = 180.0


def default_cache() -> Path:
    return Path(os.environ.get("AGENTMEM_ENGINES_DIR", ".engines")).resolve()


def unavailable(cache: Path, names: Iterable[str] = NAMES) -> str | None:
    """Why the engines cannot start here (``None``: they can), without starting anything."""
    needs_java = any(n != "dynamodb" for n in names)
    if needs_java:
        try:
            java_home()
        except EngineUnavailable as exc:
            return str(exc)
    missing = fetched(cache)
    if needs_java and missing:
        return f"engines not fetched into {cache} ({', '.join(missing)}): run `make engines`"
    return None


@dataclass
class Running:
    """Engines started by :func:`start`; ``stop`` ends them."""

    engines: dict[str, Engine]
    processes: dict[str, subprocess.Popen[bytes]]
    run: Path
    startup_s: dict[str, float] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The variables that point the tests and the ``engines`` backend at these engines."""
        return {e.env_var: e.url for e in self.engines.values()}

    def describe(self) -> dict[str, object]:
        return {
            name: {
                "url": e.url,
                "version": e.describe(),
                "pid": self.processes[name].pid,
                "startup_s": round(self.startup_s.get(name, 0.0), 1),
            }
            for name, e in self.engines.items()
        }

    def stop(self) -> None:
        for process in self.processes.values():
            _signal(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        shutil.rmtree(self.run, ignore_errors=True)


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # the engine's whole process group: launch scripts fork the JVM


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_recorded(record: Mapping[str, object], timeout_s: float = 20.0) -> None:
    """Stops engines another process started, from their record (``describe()`` + ``run``)."""
    engines = record.get("engines", {})
    pids = [int(e["pid"]) for e in engines.values()] if isinstance(engines, dict) else []
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for pid in pids:
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    shutil.rmtree(str(record.get("run", "")) or "/nonexistent", ignore_errors=True)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start(
    cache: Path,
    names: Iterable[str] = NAMES,
    *,
    ports: Mapping[str, int] | None = None,
    timeout_s: float = START_TIMEOUT_S,
    progress: bool = True,
) -> Running:
    """Starts ``names`` on 127.0.0.1 (free ports unless ``ports`` names them) and waits for them."""
    names = list(names)
    reason = unavailable(cache, names)
    if reason:
        raise EngineUnavailable(reason)
    run = Path(tempfile.mkdtemp(prefix="agentmem-engines-"))
    os.chmod(run, 0o755)
    engines: dict[str, Engine] = {}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    running = Running(engines, processes, run)
    began = time.monotonic()
    try:
        for name in names:
            port = (ports or {}).get(name) or free_port()
            if not port_free(port):  # a ready check would be answered by whoever holds it
                raise EngineUnavailable(f"{name}: port {port} on 127.0.0.1 is taken")
            engine = KINDS[name](port)
            folder = run / name
            folder.mkdir()
            launch = engine.prepare(cache, folder)
            log = (run / f"{name}.log").open("wb")
            processes[name] = subprocess.Popen(
                list(launch.argv),
                cwd=launch.cwd,
                env={**os.environ, **launch.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            engines[name] = engine
            if progress:
                print(f"[engines] starting {engine.describe()} on {engine.url}", file=sys.stderr)
        waiting = set(names)
        while waiting:
            for name in sorted(waiting):
                if engines[name].ready():
                    running.startup_s[name] = time.monotonic() - began
                    waiting.discard(name)
                    if progress:
                        print(f"[engines] {name} ready in {running.startup_s[name]:.1f} s", file=sys.stderr)
                elif processes[name].poll() is not None:
                    raise EngineUnavailable(
                        f"{name} exited with {processes[name].returncode}:\n{_tail(run / f'{name}.log')}"
                    )
            if waiting and time.monotonic() - began > timeout_s:
                stuck = sorted(waiting)
                raise EngineUnavailable(
                    f"{', '.join(stuck)} not ready after {timeout_s:.0f} s:\n{_tail(run / f'{stuck[0]}.log')}"
                )
            time.sleep(0.25)
    except BaseException:
        running.stop()
        raise
    return running


@contextlib.contextmanager
def attached(cache: Path | None = None) -> Iterator[dict[str, str]]:
    """The engines' addresses: those the environment names (all three), else those
    ``agentmem engines up`` recorded, else engines started for the block and stopped after."""
    given = {v: os.environ[v] for v in ENV_VARS if os.environ.get(v)}
    if len(given) == len(ENV_VARS):
        yield given
        return
    cache = cache or default_cache()
    recorded = status(cache)
    env = recorded.get("env") if recorded is not None else None
    if isinstance(env, dict):
        yield {str(k): str(v) for k, v in env.items()}
        return
    if fetched(cache):
        fetch(cache)
    running = start(cache)
    try:
        yield running.env()
    finally:
        running.stop()


# -- a detached set (``agentmem engines up`` / ``down`` / ``status``) ---------------------------


def state_file(cache: Path) -> Path:
    return cache / "run.json"


def up(cache: Path, names: Iterable[str] = NAMES) -> dict[str, object]:
    """Starts the engines detached on their usual ports (refused if one is taken) and records them."""
    if state_file(cache).exists():
        raise EngineUnavailable(f"engines already recorded in {state_file(cache)}: `agentmem engines down`")
    names = list(names)
    ports = {n: DEFAULT_PORTS[n] for n in names}
    running = start(cache, names, ports=ports)
    state: dict[str, object] = {"run": str(running.run), "engines": running.describe(), "env": running.env()}
    state_file(cache).write_text(json.dumps(state, indent=2), encoding="utf-8")
    return state


def status(cache: Path) -> dict[str, object] | None:
    path = state_file(cache)
    if not path.exists():
        return None
    state: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return state


def down(cache: Path) -> bool:
    state = status(cache)
    if state is None:
        return False
    stop_recorded(state)
    state_file(cache).unlink()
    return True
