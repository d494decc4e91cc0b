"""What a handler builds on its first event rather than at import: the composition root, the
X-Ray tracer and the unused parts of two Powertools packages. A Lambda cold start pays for its
imports before the first event can be served; these were most of it.

:func:`default_container` is :func:`agentmem.bootstrap.default_container` with the import of
:mod:`agentmem.bootstrap` (every service, and numpy with them) deferred to its first call, so a
handler module imports its routes and models but no service. The container is built on the
first event either way (it always was: nothing is built at import time).

A module-level Powertools ``Tracer()`` imports ``aws_xray_sdk`` (and through it botocore's
session machinery) at import even when tracing is off, ~150-400 ms of every cold start and of
every local process. :class:`LazyTracer` is what a handler decorates itself with instead:

* tracing off (Powertools' own rule: ``POWERTOOLS_TRACE_DISABLED`` truthy, or not in a Lambda
  execution environment (no ``LAMBDA_TASK_ROOT``), or under SAM local / Chalice local): the
  handler is returned as it is; ``aws_xray_sdk`` is never imported.
* tracing on (a deployed function with active tracing): the first invocation builds the real
  ``Tracer(service=...)`` (which patches boto3 and the other supported libraries before the
  container builds its clients) and every invocation runs under ``capture_lambda_handler``:
  the same ``## handler`` subsegment, ``ColdStart`` and ``Service`` annotations as before.

:func:`defer_package_init`: importing ``aws_lambda_powertools.event_handler.api_gateway`` first
runs the package's ``__init__``, which imports every resolver (AppSync, and asyncio with it,
Bedrock, VPC Lattice, the HTTP resolver ...), and ``api_gateway`` imports
``utilities.data_classes``, whose ``__init__`` imports ~30 event classes: ~60 modules, ~40 ms of
the api handler's import, none of them used by the api. For a package whose ``__init__`` only
re-exports (``from .x import y`` lines, a docstring, a literal ``__all__``), the package is
registered without running it: a name it re-exports is imported from its submodule on first
access (PEP 562 ``__getattr__``; the same object the ``__init__`` would bind), a submodule imports
as usual, and any other name runs the whole ``__init__`` first, so nothing reads differently. A
package whose ``__init__`` does anything else, or that is already imported, is left alone.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.shared import constants
from aws_lambda_powertools.shared.functions import strtobool

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

    from agentmem.bootstrap import Container

__all__ = ["LazyTracer", "default_container", "defer_package_init", "tracing_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


def default_container() -> Container:
    """The process's container (:func:`agentmem.bootstrap.default_container`), imported on first use."""
    from agentmem.bootstrap import default_container as built

    return built()


def tracing_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether Powertools' ``Tracer`` would trace here (its ``_is_tracer_disabled`` rule)."""
    env = os.environ if environ is None else environ
    if strtobool(env.get(constants.TRACER_DISABLED_ENV, "false")):
        return False
    in_lambda = bool(env.get(constants.LAMBDA_TASK_ROOT_ENV))
    emulated = bool(env.get(constants.SAM_LOCAL_ENV) or env.get(constants.CHALICE_LOCAL_ENV))
    return in_lambda and not emulated


def _powertools_tracer(service: str) -> Tracer:
    from aws_lambda_powertools import Tracer

    return Tracer(service=service)


class LazyTracer:
    """A stand-in for a module-level ``Tracer(service=...)``; see the module docstring."""

    def __init__(
        self, service: str, *, enabled: bool | None = None, factory: Callable[[str], Tracer] | None = None
    ) -> None:
        """``enabled`` None: Powertools' rule (:func:`tracing_enabled`); ``factory`` builds the
        tracer from the service name (default: Powertools' ``Tracer``; a test passes a fake)."""
        self.service = service
        self.enabled = tracing_enabled() if enabled is None else enabled
        self._factory = factory or _powertools_tracer
        self._tracer: Tracer | None = None
        self._lock = threading.Lock()

    def tracer(self) -> Tracer:
        """The tracer, built (and the libraries patched) on the first call."""
        with self._lock:
            if self._tracer is None:
                self._tracer = self._factory(self.service)
            return self._tracer

    def capture_lambda_handler(self, handler: F) -> F:
        """``Tracer.capture_lambda_handler``, applied on the first invocation; off: ``handler``."""
        if not self.enabled:
            return handler
        traced: list[Callable[..., Any]] = []

        @functools.wraps(handler)
        def decorate(event: Any, context: Any, **kwargs: Any) -> Any:
            if not traced:
                traced.append(self.tracer().capture_lambda_handler(handler))
            return traced[0](event, context, **kwargs)

        return decorate  # type: ignore[return-value]


def _reexports(source: str, package: str) -> tuple[dict[str, tuple[str, str]], list[str] | None] | None:
    """The names a package ``__init__`` binds -> (module, name), and its ``__all__``; None when the
    ``__init__`` does more than ``from ... import ...``, a docstring and a literal ``__all__``."""
    import ast

    names: dict[str, tuple[str, str]] = {}
    exported: list[str] | None = None
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            module = importlib.util.resolve_name("." * node.level + node.module, package)
            for alias in node.names:
                if alias.name == "*":
                    return None
                names[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        elif (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["__all__"]
            and exported is None
        ):
            try:
                exported = [str(name) for name in ast.literal_eval(node.value)]
            except ValueError:
                return None
        else:
            return None
    return names, exported


def defer_package_init(name: str) -> bool:
    """Register package ``name`` without running its ``__init__`` (see the module docstring);
    True when it was deferred, False when it is imported already or its ``__init__`` does more
    than re-export."""
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    if not (spec.origin or "").endswith("__init__.py"):
        return False
    with open(spec.origin or "", encoding="utf-8") as file:
        found = _reexports(file.read(), name)
    if found is None:
        return False
    names, exported = found
    module = importlib.util.module_from_spec(spec)
    if exported is not None:
        module.__dict__["__all__"] = exported
    loader = spec.loader
    lock = threading.RLock()

    def __getattr__(attr: str) -> Any:
        if attr in names:
            source, original = names[attr]
            value = getattr(importlib.import_module(source), original)
            setattr(module, attr, value)
            return value
        if not attr.startswith("__") and importlib.util.find_spec(f"{name}.{attr}") is not None:
            return importlib.import_module(f"{name}.{attr}")
        with lock:  # any other name: the package as its __init__ builds it
            if "__getattr__" in module.__dict__:
                del module.__dict__["__getattr__"]
                loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True
