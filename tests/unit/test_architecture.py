"""The layering DESIGN §2 promises, checked on the source (a static read of every import,
function-level ones included): the domain is pure, services depend on ports, adapters never
import the composition root, nothing shipped imports the development tooling, there is no import
cycle, and adapters implement one port a module, by composition rather than mixins."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

LAYERS = Path(__file__).resolve().parents[2] / "layers"


@cache
def modules(package: str = "agentmem") -> dict[str, Path]:
    out = {}
    for path in (LAYERS / package).rglob("*.py"):
        rel = path.relative_to(LAYERS).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


@cache
def imports(module: str) -> frozenset[str]:
    """Every project module ``module`` imports (the deepest known prefix of each name)."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    found = set()
    for name in names:
        if name.split(".")[0] in ("agentmem_dev", "support", "tests"):
            found.add(name)
            continue
        while name and name not in modules():
            name = name.rsplit(".", 1)[0] if "." in name else ""
        if name and name != module and not module.startswith(name + "."):
            found.add(name)
    return frozenset(found)


def under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_nothing_shipped_imports_development_tooling_or_tests() -> None:
    offenders = {
        m: sorted(i for i in imports(m) if under(i, "agentmem_dev", "support", "tests")) for m in modules()
    }
    assert {m: i for m, i in offenders.items() if i} == {}


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("agentmem.domain", ("agentmem",)),  # only itself and the wire's vocabulary (checked below)
        ("agentmem.wire", ("agentmem",)),  # the leaf: nothing of agentmem beyond itself (checked below)
        (
            "agentmem.services",
            ("agentmem.adapters", "agentmem.api", "agentmem.bootstrap", "agentmem.backends"),
        ),
        ("agentmem.adapters", ("agentmem.services", "agentmem.api", "agentmem.bootstrap")),
        ("agentmem.ports", ("agentmem.adapters", "agentmem.services", "agentmem.api", "agentmem.bootstrap")),
        (
            "agentmem.event_ports",
            ("agentmem.adapters", "agentmem.services", "agentmem.api", "agentmem.bootstrap"),
        ),
        (
            "agentmem.webhook_ports",
            ("agentmem.adapters", "agentmem.services", "agentmem.api", "agentmem.bootstrap"),
        ),
    ],
)
def test_each_layer_imports_only_what_is_to_its_right(layer: str, forbidden: tuple[str, ...]) -> None:
    bad = {}
    for module in modules():
        if not under(module, layer):
            continue
        allowed = {
            "agentmem.domain": ("agentmem.domain", "agentmem.wire.vocabulary", "agentmem.wire.session_state"),
            "agentmem.wire": ("agentmem.wire",),
        }.get(layer, ())
        wrong = sorted(i for i in imports(module) if under(i, *forbidden) and not under(i, *allowed))
        if wrong:
            bad[module] = wrong
    assert bad == {}


def test_there_is_no_import_cycle() -> None:
    graph = {m: {i for i in imports(m) if i in modules()} for m in modules()}
    state: dict[str, int] = {}  # 1 visiting, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_only_the_handlers_use_the_cold_start_tricks() -> None:
    """``agentmem.coldstart`` rewrites third-party entries in ``sys.modules``: only a Lambda
    handler's import may do that, never a module a test, the emulator or the client imports."""
    users = sorted(
        str(path.relative_to(LAYERS))
        for path in LAYERS.rglob("*.py")
        if path.name != "coldstart.py" and _imports_coldstart(path)
    )
    assert users == []
    handlers = sorted((LAYERS.parent / "functions").glob("*/handler.py"))
    assert handlers and all(_imports_coldstart(h) for h in handlers)


def _imports_coldstart(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return "from agentmem.coldstart import" in text or "import agentmem.coldstart" in text


PORT_MODULES = ("agentmem.ports", "agentmem.event_ports")


@cache
def ports() -> dict[str, frozenset[str]]:
    """Each port (a Protocol of the ports modules) and the names of its public methods."""
    out: dict[str, frozenset[str]] = {}
    for module in PORT_MODULES:
        for node in ast.parse(modules()[module].read_text(encoding="utf-8")).body:
            bases = {b.id for b in getattr(node, "bases", []) if isinstance(b, ast.Name)}
            if isinstance(node, ast.ClassDef) and "Protocol" in bases:
                methods = {
                    f.name for f in node.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")
                }
                out[node.name] = frozenset(methods)
    return out


def adapter_classes() -> dict[str, list[ast.ClassDef]]:
    """The classes of each module under ``agentmem.adapters``."""
    return {
        module: [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)]
        for module, path in modules().items()
        if under(module, "agentmem.adapters")
    }


def test_adapters_implement_ports_by_composition_not_mixins() -> None:
    """An adapter class never inherits another adapter class (a slice of an implementation cut
    off to keep a file short): it holds what it shares (a table or database handle) instead.
    Exceptions inherit exceptions."""
    classes = adapter_classes()
    defined = {c.name for found in classes.values() for c in found}
    mixed = {
        f"{module}.{c.name}": sorted(b.id for b in c.bases if isinstance(b, ast.Name) and b.id in defined)
        for module, found in classes.items()
        for c in found
        if not c.name.endswith(("Error", "Failed", "Exception", "Unavailable"))
    }
    assert {name: bases for name, bases in mixed.items() if bases} == {}


def test_one_port_implementation_per_module() -> None:
    """A module of ``agentmem.adapters`` holds at most one class that implements a port of more
    than one method (one class may implement several: on DynamoDB a create and the erase
    barrier it checks are one transaction). A module is as long as its one implementation needs:
    there is no line cap to cut it by."""
    roles = {name: methods for name, methods in ports().items() if len(methods) > 1}
    crowded = {}
    for module, found in adapter_classes().items():
        implementing = []
        for c in found:
            defined = {f.name for f in c.body if isinstance(f, ast.FunctionDef)}
            if any(methods <= defined for methods in roles.values()):
                implementing.append(c.name)
        if len(implementing) > 1:
            crowded[module] = implementing
    assert crowded == {}


def test_handlers_are_thin() -> None:
    for handler in (LAYERS.parent / "functions").glob("*/handler.py"):
        text = handler.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 80, handler
        assert "def handle(event" in text and "container: Container | None = None" in text, handler
        assert "boto3" not in text and "agentmem.adapters" not in text.replace(
            "agentmem.adapters.codec", ""
        ), handler


def test_the_reader_stands_below_the_decisions_that_use_it() -> None:
    """``domain/reading`` reads statements; the update decisions (``conflict``, ``endings``) and
    the read path use it, never the other way round, and it reaches no context or ranking code."""
    decisions = ("agentmem.domain.conflict", "agentmem.domain.endings", "agentmem.domain.context")
    bad = {
        m: sorted(i for i in imports(m) if under(i, *decisions, "agentmem.domain.scoring"))
        for m in modules()
        if under(m, "agentmem.domain.reading")
    }
    assert {m: i for m, i in bad.items() if i} == {}
    assert any(under(i, "agentmem.domain.reading") for i in imports("agentmem.domain.conflict"))
