"""A copy of the Lambda layer on this machine, built from ``infra_cdk/layer-requirements.txt``.

Two ways, the same layout as the real asset (``python/agentmem`` beside the libraries, the
runtime's SDK apart):

* ``installed`` (the default, offline): the requirements and everything they require, resolved
  from the installed distributions' metadata (markers evaluated, extras followed) and linked file
  by file from this environment's site-packages. What the layer names is all that is there.
* ``pip`` (``LAMBDA_LAYER_BUILD=pip``, what CI runs): ``pip install --target`` of the pinned
  requirements as manylinux x86_64 wheels, as the CDK bundling does for arm64; it needs the
  package index. The layer is then run by a Python of the Lambda runtime's version
  (``LAMBDA_PYTHON``, else ``python3.12`` on PATH) where this machine has one, else
  by this interpreter.

boto3 and what it requires are put in a directory of their own: the Lambda runtime provides them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from infra_helpers import REPO

from agentmem_infra.layer_contents import installed_closure, provided_by_runtime, read_requirements

RUNTIME_SDK = ("boto3",)


def link_distributions(dists: dict[str, metadata.Distribution], target: Path) -> None:
    """Link every file of ``dists`` that lives in site-packages into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for dist in dists.values():
        root = Path(str(dist.locate_file(""))).resolve()
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file))).resolve()
            try:
                relative = source.relative_to(root)
            except ValueError:  # scripts in bin/, data files outside site-packages
                continue
            if "__pycache__" in relative.parts or not source.is_file():
                continue
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            if not destination.exists():
                os.symlink(source, destination)


LAMBDA_PYTHON_VERSION = "3.12"


def interpreter(mode: str) -> tuple[str, str]:
    """(python executable, its X.Y) that runs the layer: the Lambda runtime's version for a pip build."""
    here = (sys.executable, f"{sys.version_info[0]}.{sys.version_info[1]}")
    found = os.environ.get("LAMBDA_PYTHON") or shutil.which(f"python{LAMBDA_PYTHON_VERSION}")
    if mode != "pip" or here[1] == LAMBDA_PYTHON_VERSION or found is None:
        return here
    probe = subprocess.run(
        [found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    )
    return (found, LAMBDA_PYTHON_VERSION) if probe.stdout.strip() == LAMBDA_PYTHON_VERSION else here


def pip_layer(requirements: list[str], target: Path, version: str) -> None:
    """The bundling's own pip command, for x86_64 wheels of ``version``, then its pruning."""
    from agentmem_infra.bundling import pip_command

    subprocess.run(
        pip_command(requirements, str(target), architecture="x86_64", python_version=version), check=True
    )
    for entry in list(target.iterdir()):
        if provided_by_runtime(entry.name):
            shutil.rmtree(entry, ignore_errors=True)


def mode() -> str:
    return os.environ.get("LAMBDA_LAYER_BUILD", "installed")


def build(root: Path, how: str, version: str) -> tuple[Path, Path, list[str]]:
    """(layer ``python/`` dir, runtime SDK dir, pin drift) under ``root``, for Python ``version``."""
    requirements = read_requirements()
    layer = root / "layer" / "python"
    runtime = root / "runtime"
    drift: list[str] = []
    if how == "pip":
        pip_layer(requirements, layer, version)
    else:
        dists, drift = installed_closure(requirements)
        link_distributions({k: v for k, v in dists.items() if not provided_by_runtime(k)}, layer)
    sdk, _ = installed_closure(list(RUNTIME_SDK))
    link_distributions(sdk, runtime)
    shutil.copytree(
        REPO / "layers" / "agentmem",
        layer / "agentmem",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    return layer, runtime, drift
