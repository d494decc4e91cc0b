"""The real engines for the test run: started on first use, shared by every xdist worker, stopped
at the end (hooks in ``tests/conftest.py``).

* A parametrisation that needs an engine asks :func:`skip_reason` at collection (cheap: is Java
  here, is the cache fetched, is ``moto[server]`` installed) and, when a test runs,
  :func:`engine_url` for its address. The first worker to ask starts all three engines under a
  file lock (OpenSearch takes ~20-45 s; the other workers go on with other tests meanwhile) and
  records them in the run folder; the others read the record.
* ``AGENTMEM_OPENSEARCH_URL`` / ``AGENTMEM_GREMLIN_URL`` / ``AGENTMEM_DYNAMODB_URL`` set by the
  caller (``eval "$(agentmem engines env)"``, a remote cluster) are used as they are, and nothing
  is started.
* ``AGENTMEM_ENGINES=off`` skips the engine tests; ``AGENTMEM_ENGINES=require`` (``.ci/run``)
  turns "cannot start here" into a failure of the run instead of a skip.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

RUN_VAR = "AGENTMEM_ENGINES_RUN"  # the run folder, made by the controller, inherited by workers
_STARTED: list[object] = []  # the engines this process started (stopped by it at the end)
ENV_VARS = {
    "opensearch": "AGENTMEM_OPENSEARCH_URL",
    "gremlin": "AGENTMEM_GREMLIN_URL",
    "dynamodb": "AGENTMEM_DYNAMODB_URL",
}


def mode() -> str:
    return os.environ.get("AGENTMEM_ENGINES", "auto").lower()


def external(name: str) -> str | None:
    """An address the caller gave for ``name`` (nothing is started for it)."""
    return os.environ.get(ENV_VARS[name]) or None


def _cache() -> Path:
    from agentmem_dev.engines.runner import default_cache

    if "AGENTMEM_ENGINES_DIR" in os.environ:
        return default_cache()
    return Path(__file__).resolve().parents[2] / ".engines"


def skip_reason(name: str) -> str | None:
    """Why the ``name`` engine tests cannot run here (``None``: they can)."""
    if external(name):
        return None
    if mode() == "off":
        return "AGENTMEM_ENGINES=off"
    if name == "dynamodb":
        try:
            import flask  # noqa: F401
        except ImportError:
            return "moto's server is not installed (pip install 'moto[server]')"
    from agentmem_dev.engines.runner import unavailable

    reason = unavailable(_cache(), [name])
    return f"{reason} (or set {ENV_VARS[name]})" if reason else None


def all_skip_reason() -> str | None:
    """Why the tests that need all three engines cannot run here (``None``: they can)."""
    reasons = [f"{n}: {r}" for n in ENV_VARS if (r := skip_reason(n))]
    return "; ".join(reasons) or None


def engine_url(name: str) -> str:
    """The address of the ``name`` engine, starting the engines on first use."""
    given = external(name)
    if given:
        return given
    run = Path(os.environ.get(RUN_VAR) or _own_run())
    state = run / "state.json"
    with (run / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not state.exists():
            from agentmem_dev.engines.runner import NAMES, start

            names = [n for n in NAMES if not external(n) and skip_reason(n) is None]
            running = start(_cache(), names, progress=False)
            _STARTED.append(running)
            state.write_text(
                json.dumps({"run": str(running.run), "engines": running.describe()}), encoding="utf-8"
            )
    engines = json.loads(state.read_text(encoding="utf-8"))["engines"]
    if name not in engines:
        raise RuntimeError(f"engine {name} was not started: {skip_reason(name)}")
    return str(engines[name]["url"])


def _own_run() -> str:
    """Without the controller's hooks (a plain import): a run folder for this process."""
    os.environ[RUN_VAR] = tempfile.mkdtemp(prefix="agentmem-test-engines-")
    return os.environ[RUN_VAR]


def configure() -> None:
    """Controller (or single process) start: the run folder; ``require`` checks up front."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ[RUN_VAR] = tempfile.mkdtemp(prefix="agentmem-test-engines-")
    if mode() == "require":
        reasons = {n: r for n in ENV_VARS if (r := skip_reason(n))}
        if reasons:
            import pytest

            raise pytest.UsageError(
                "AGENTMEM_ENGINES=require but the engines cannot run here: "
                + "; ".join(f"{n}: {r}" for n, r in reasons.items())
            )


def unconfigure() -> None:
    """Controller end: stop what any worker started, remove the run folder."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    run = os.environ.pop(RUN_VAR, None)
    if not run:
        return
    state = Path(run) / "state.json"
    while _STARTED:  # started in this very process (no xdist): stop and reap them
        _STARTED.pop().stop()  # type: ignore[attr-defined]
    if state.exists():
        from agentmem_dev.engines.runner import stop_recorded

        stop_recorded(json.loads(state.read_text(encoding="utf-8")))
    shutil.rmtree(run, ignore_errors=True)


def param(name: str, value: str = "engine") -> object:
    """The ``engine`` parametrisation of a contract suite: always listed, skipped with a reason."""
    import pytest

    reason = skip_reason(name)
    mark = pytest.mark.skipif(reason is not None, reason=f"{name} engine: {reason}")
    return pytest.param(value, marks=[mark])
