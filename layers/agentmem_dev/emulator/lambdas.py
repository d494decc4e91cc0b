"""Load and invoke the real Lambda handlers (``functions/<name>/handler.py``) in-process, with
AWS-shaped events: what runs on a laptop is the code that runs in Lambda.

One execution environment per function: Lambda runs one invocation at a time per environment,
and Powertools relies on it — the event resolver keeps the current event on the *class*
(``BaseRouter.current_event``) and ``Metrics`` keeps its metric set at class level, so two
concurrent invocations of one function would read each other's event (and authorizer). Each
function therefore has its own lock here, taken by every caller (server, runner, timer, CLI,
tests); different functions run concurrently, as they do in AWS. The lock is per process: with
``agentmem serve --workers N`` each worker process is one more environment of the api λ
(:mod:`agentmem_dev.emulator.workers`), so requests are not serialised through one lock.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from agentmem.bootstrap import Container
from agentmem.errors import ConfigurationError
from agentmem_dev import observability

FUNCTIONS = ("ingest", "api", "projector", "consolidate", "reconcile", "reindex")
_loaded: dict[str, ModuleType] = {}
_load_lock = threading.Lock()
_ENVIRONMENTS = {name: threading.Lock() for name in FUNCTIONS}


def functions_dir() -> Path:
    """``AGENTMEM_FUNCTIONS_DIR`` or the repository's ``functions/`` next to ``layers/``."""
    configured = os.environ.get("AGENTMEM_FUNCTIONS_DIR")
    candidates = [Path(configured)] if configured else []
    candidates.append(Path(__file__).resolve().parents[3] / "functions")
    candidates.append(Path.cwd() / "functions")
    for path in candidates:
        if (path / "api" / "handler.py").exists():
            return path
    raise ConfigurationError("cannot find the functions/ directory; set AGENTMEM_FUNCTIONS_DIR")


def load(name: str) -> ModuleType:
    if name not in FUNCTIONS:
        raise ConfigurationError(f"unknown function {name!r}; expected one of {', '.join(FUNCTIONS)}")
    with _load_lock:
        return _load(name)


def _load(name: str) -> ModuleType:
    if name not in _loaded:
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        path = functions_dir() / name / "handler.py"
        spec = importlib.util.spec_from_file_location(f"agentmem_functions_{name}", path)
        if spec is None or spec.loader is None:
            raise ConfigurationError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


@dataclass
class LambdaContext:
    """The attributes Powertools reads from a Lambda context object."""

    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = ""
    log_group_name: str = "local"
    log_stream_name: str = "local"

    def __post_init__(self) -> None:
        if not self.invoked_function_arn:
            self.invoked_function_arn = (
                f"arn:aws:lambda:local:000000000000:function:agentmem-{self.function_name}"
            )

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


_DRAINING = threading.Lock()  # one drain of the shared metric set at a time


def invoke(name: str, event: dict[str, Any], container: Container) -> Any:
    """Run ``functions/<name>`` on ``event`` against ``container``, one invocation at a time per
    function (see the module docstring)."""
    module = load(name)
    handler: Callable[..., Any] = module.handler
    with _ENVIRONMENTS[name]:
        try:
            return handler(event, LambdaContext(function_name=name), container=container)
        finally:
            _clear_metrics(module)


def _clear_metrics(module: ModuleType) -> None:
    """Locally metrics are disabled (no CloudWatch to read EMF); Powertools then never clears its
    metric set, which would grow without bound and auto-flush to stdout at 100 values. The set is
    shared by every function's ``Metrics`` (class level), so its values are taken out one by one
    (``pop``, under :data:`_DRAINING`): a value another function adds meanwhile stays for the next
    drain, instead of being cleared unseen, and no drain takes what another took. Under
    ``agentmem serve`` what was taken is mirrored into the server's Prometheus metrics
    (:func:`agentmem_dev.observability.record_emf`; in-process mode, a value added by a function
    running at the same time may be counted under this one). The handlers set no dimensions or
    metadata of their own, so the rest of the set stays as Powertools made it."""
    metrics = getattr(module, "metrics", None)
    if metrics is None:
        return
    shared = metrics.metric_set
    with _DRAINING:
        taken = {name: shared.pop(name) for name in list(shared)}
    if taken and os.environ.get(observability.METRICS_DIR_ENV):  # agentmem serve: mirrored to /metrics
        observability.record_emf(module.__name__.removeprefix("agentmem_functions_"), taken)
