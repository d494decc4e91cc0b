"""Every port a backend provides has an in-memory fake, and that port's contract suite runs on it,
so a fake the service tests lean on cannot drift from what the real adapters promise.

Derived, not listed: the ports are the Protocol types of :class:`agentmem.adapters.Adapters`'
fields (what a backend's builder must hand the services); a fake is a class of
``tests/support/fakes`` that subclasses the port; a port's contract suite is a module of
``tests/integration/contracts`` that imports the port, and it runs on the fake when it imports
the fake (or a fake whose module builds it: the store's fake builds its ledger's)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import typing
from dataclasses import fields
from functools import cache
from pathlib import Path

import support.fakes
from agentmem.adapters import Adapters

CONTRACTS = Path(__file__).resolve().parents[1] / "integration" / "contracts"


def ports() -> dict[str, type]:
    """Each field of ``Adapters`` and the port (Protocol) it holds."""
    hints = typing.get_type_hints(Adapters)
    found = {}
    for field in fields(Adapters):
        for candidate in typing.get_args(hints[field.name]) or (hints[field.name],):
            if getattr(candidate, "_is_protocol", False):
                found[field.name] = candidate
    return found


@cache
def fakes() -> dict[str, type]:
    """Every class defined in ``support.fakes``, by name."""
    out: dict[str, type] = {}
    for info in pkgutil.iter_modules(support.fakes.__path__, "support.fakes."):
        module = importlib.import_module(info.name)
        out.update(
            {name: c for name, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == info.name}
        )
    return out


def fakes_of(port: type) -> set[str]:
    return {name for name, c in fakes().items() if port in c.__mro__}


def imported(path: Path) -> set[str]:
    """The names a module imports (``from x import a`` gives ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}


def fakes_reached(path: Path) -> set[str]:
    """The fakes a contract module builds: those it imports, and those their modules import."""
    direct = imported(path) & set(fakes())
    reached = set(direct)
    for name in direct:
        module = Path(inspect.getfile(fakes()[name]))
        reached |= imported(module) & set(fakes())
    return reached


# Ports with no fake yet, and why; the test fails when one gets a fake (take it off) and when a
# new port appears without one (write its fake and run its contract suite on it).
NO_FAKE_YET = {
    "embedder": "HashEmbedder, the embedded backend's own deterministic embedder, stands in",
    "llm": "optional; tests script a model per case (no contract suite yet)",
    "prototype_banks": "optional cache of the guard's banks (no contract suite yet)",
    "audited_writes": "the embedded store's transactions; the fake store writes its audit apart",
    "changes": "the embedded outbox; the fake store keeps a list of its changes instead",
    "events": "optional (no contract suite yet)",
    "deliveries": "optional, the embedded webhook outbox (no contract suite yet)",
}


def test_every_port_has_a_fake_that_its_contract_suite_runs_on() -> None:
    missing = {}
    for field, port in ports().items():
        own = fakes_of(port)
        suites = sorted(p.name for p in CONTRACTS.glob("test_contract_*.py") if port.__name__ in imported(p))
        on_fake = [s for s in suites if own & fakes_reached(CONTRACTS / s)]
        if not own or not on_fake:
            missing[field] = {"port": port.__name__, "fakes": sorted(own), "suites": suites}
    assert set(missing) == set(NO_FAKE_YET), missing


def test_the_ports_are_found() -> None:
    """The derivation finds what it should: the record store, its ledger and the dead letters."""
    found = {name: port.__name__ for name, port in ports().items()}
    assert found["store"] == "MemoryStore" and found["ledger"] == "ScopeLedger"
    assert found["dead_letters"] == "DeadLetterQueue"
    assert fakes_of(ports()["dead_letters"]) == {"InMemoryDeadLetters"}
