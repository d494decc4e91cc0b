"""Lambda code assets without Docker.

The shared layer ships ``python/agentmem/...`` plus the runtime dependencies pinned in
``infra_cdk/layer-requirements.txt``. :class:`PipLocalBundling` builds it on the synthesizing
machine with ``pip install --target <asset>/python --platform <manylinux for the Lambda
architecture> --only-binary=:all: --python-version 3.12`` and a copy of the package; CDK falls
back to the Docker command (the SAM build image) only when the local build fails.

Bytecode: Lambda extracts code read-only (``/opt`` for a layer, ``/var/task`` for a function), so
Python can never cache the ``.pyc`` it compiles there and every cold start would compile every
module it imports, the library and its dependencies, from source. Each bundled asset is therefore
compiled (``python -m compileall --invalidation-mode unchecked-hash``: the extracted files' times
cannot invalidate it) by a Python of the runtime's version, with the paths tracebacks show
rewritten to where Lambda puts the code. The Docker build always has that Python; a local build
uses this interpreter or ``python3.12`` when one of them is 3.12, and otherwise ships the asset
without bytecode and says so.

Asset hash: each bundled asset is named by :func:`asset_hash`, a digest of everything that decides
its content and nothing else: the requirement lines (the pins of ``layer-requirements.txt``, so a
changed pin can never reuse a stale layer from ``cdk.out`` or the bootstrap bucket), the bytes of
every shipped source file (``layers/agentmem`` for the layer; not ``agentmem_dev``, bytecode or
caches), the Python version, the wheel platforms, the packages pruned for the runtime and
:data:`BUNDLING_FORMAT` (bumped when these steps change what an asset holds). Comments in the
requirements file do not count. Transitive dependencies are resolved by pip at bundling time
(only the top-level packages are pinned), so a rebuild of the same hash may pick newer ones.

With ``-c agentmem:skipBundling=true`` (or ``AGENTMEM_SKIP_BUNDLING=1``) every asset is a plain
``Code.from_asset`` of its source folder: no pip, no network. The synthesis tests use it; the
result is *not* deployable (the layer would lack its dependencies and its ``python/`` prefix).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

from agentmem_infra.layer_contents import (  # the runtime's SDK: one list for the layer, its recipe and its checks
    PROVIDED_BY_RUNTIME,
    provided_by_runtime,
)

log = logging.getLogger(__name__)

PYTHON_VERSION = "3.12"
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
# Lambda's Python 3.12 runtime is Amazon Linux 2023 (glibc 2.34): manylinux_2_28 wheels run there,
# and some current releases (numpy 2.3+) ship only those for aarch64.
PLATFORMS = {
    "arm64": ("manylinux2014_aarch64", "manylinux_2_28_aarch64"),
    "x86_64": ("manylinux2014_x86_64", "manylinux_2_28_x86_64"),
}
EXCLUDES = ["**/__pycache__", "**/*.pyc", "*.egg-info", "**/.pytest_cache", "**/.mypy_cache"]
# Beside the library in layers/ but not shipped: the laptop emulator, CLI, eval and benchmarks.
DEV_PACKAGES = ["agentmem_dev"]
# Where Lambda extracts a layer's and a function's code (the paths compiled bytecode names).
LAYER_ROOT = "/opt"
FUNCTION_ROOT = "/var/task"
# Bump when the bundling steps change what an asset holds with the same inputs (prune list,
# compile flags, layout): every asset then gets a new hash and is rebuilt.
BUNDLING_FORMAT = "2"
SKIP_CONTEXT = "agentmem:skipBundling"
SKIP_ENV = "AGENTMEM_SKIP_BUNDLING"


def skip_bundling(context_value: Any) -> bool:
    env = os.environ.get(SKIP_ENV, "")
    values = (context_value, env)
    return any(str(v).strip().lower() in ("1", "true", "yes", "on") for v in values if v is not None)


def pip_command(
    requirements: Sequence[str],
    target: str,
    *,
    architecture: str,
    python: Sequence[str] | None = None,
    python_version: str = PYTHON_VERSION,
) -> list[str]:
    """The pip invocation that installs ``requirements`` for Lambda into ``target`` (the wheels of
    ``python_version``: the runtime's, or another where a test runs the copy)."""
    cmd = [*(python or [sys.executable, "-m", "pip"]), "install", "--quiet", "--no-compile"]
    cmd += ["--target", target, "--implementation", "cp", "--python-version", python_version]
    for platform in PLATFORMS[architecture]:
        cmd += ["--platform", platform]
    cmd += ["--only-binary=:all:", "--upgrade", *requirements]
    return cmd


def compileall_command(python: Sequence[str], folder: str, runtime_root: str) -> list[str]:
    """Compile every module under ``folder`` (the asset), naming them as under ``runtime_root``."""
    return [
        *python,
        "-m",
        "compileall",
        "-q",
        "-j",
        "0",
        "--invalidation-mode",
        "unchecked-hash",
        "-s",
        folder,
        "-p",
        runtime_root,
        folder,
    ]


def bytecode_python() -> list[str] | None:
    """A Python of the runtime's version (:data:`PYTHON_VERSION`) on this machine, or None."""
    candidates = [sys.executable] if f"{sys.version_info[0]}.{sys.version_info[1]}" == PYTHON_VERSION else []
    # LAMBDA_PYTHON names one where PATH has none that runs (a pyenv shim of another version)
    for found in (os.environ.get("LAMBDA_PYTHON"), shutil.which(f"python{PYTHON_VERSION}")):
        if found:
            candidates.append(found)
    for candidate in candidates:
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.strip() == PYTHON_VERSION:
            return [candidate]
    return None


def _prune(target: Path) -> None:
    for entry in list(target.iterdir()):
        if provided_by_runtime(entry.name):
            shutil.rmtree(entry, ignore_errors=True)
    for cache in list(target.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)


@jsii.implements(ILocalBundling)
class PipLocalBundling:
    """Build a Python Lambda asset locally: pip-installed wheels plus copied source packages.

    ``packages`` maps a source folder to its path inside the asset (``python/agentmem`` for the
    layer, ``.`` for a function's own folder). Returns False (→ Docker) when pip fails.
    """

    def __init__(
        self,
        *,
        requirements: Sequence[str],
        packages: Sequence[tuple[Path, str]],
        site_dir: str,
        architecture: str = "arm64",
        runtime_root: str = FUNCTION_ROOT,
    ) -> None:
        self.requirements = list(requirements)
        self.packages = list(packages)
        self.site_dir = site_dir
        self.architecture = architecture
        self.runtime_root = runtime_root

    def try_bundle(self, output_dir: str, *_options: Any, **_kw: Any) -> bool:
        # jsii passes the BundlingOptions struct positionally; nothing in it is needed here.
        out = Path(output_dir)
        site = out / self.site_dir if self.site_dir not in ("", ".") else out
        try:
            site.mkdir(parents=True, exist_ok=True)
            if self.requirements:
                cmd = pip_command(self.requirements, str(site), architecture=self.architecture)
                log.info("local bundling: %s", shlex.join(cmd))
                subprocess.run(cmd, check=True, stdout=sys.stderr, stderr=sys.stderr)
                _prune(site)
            for source, dest in self.packages:
                shutil.copytree(source, out / dest, dirs_exist_ok=True, ignore=_ignore)
            self._compile(out)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"agentmem: local bundling failed ({exc}); falling back to Docker", file=sys.stderr)
            for child in out.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink()
            return False
        return True

    def _compile(self, out: Path) -> None:
        python = bytecode_python()
        if python is None:
            print(
                f"agentmem: no Python {PYTHON_VERSION} here; {out.name} ships without bytecode"
                " (every cold start compiles its modules)",
                file=sys.stderr,
            )
            return
        cmd = compileall_command(python, str(out), self.runtime_root)
        log.info("local bundling: %s", shlex.join(cmd))
        done = subprocess.run(cmd, check=False, stdout=sys.stderr, stderr=sys.stderr)
        if done.returncode != 0:  # a file that is not Python 3.12 (a template, a test fixture)
            print(f"agentmem: some modules of {out.name} did not compile; they stay source", file=sys.stderr)


def _within(site_dir: str, name: str) -> str:
    """``name`` under ``site_dir`` inside the asset (``"."``/``""`` = the asset root)."""
    if site_dir in ("", "."):
        return name
    return f"{site_dir}/{name}" if name else site_dir


_ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache", ".mypy_cache")


def _docker_command(
    requirements: Sequence[str],
    site_dir: str,
    copies: Sequence[tuple[str, str]],
    runtime_root: str = FUNCTION_ROOT,
) -> str:
    """Shell script for the SAM build image: same result as :class:`PipLocalBundling`."""
    site = f"/asset-output/{_within(site_dir, '')}".rstrip("/")
    steps = [f"mkdir -p {site}"]
    if requirements:
        reqs = " ".join(shlex.quote(r) for r in requirements)
        steps.append(f"pip install --quiet --no-compile --only-binary=:all: --target {site} {reqs}")
        prune = " ".join(f"{site}/{p} {site}/{p}-*" for p in PROVIDED_BY_RUNTIME)
        steps.append(f"rm -rf {prune}")
    for src, dest in copies:
        target = f"/asset-output/{dest}".rstrip("/")
        steps.append(f"mkdir -p {target} && cp -r /asset-input/{src}/. {target}/")
    steps.append("find /asset-output -name __pycache__ -type d -prune -exec rm -rf {} +")
    compile_step = shlex.join(compileall_command(["python"], "/asset-output", runtime_root))
    steps.append(f"({compile_step} || echo 'agentmem: some modules did not compile' >&2)")
    return " && ".join(steps)


_IGNORED_PARTS = ("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache", ".mypy_cache")


def _shipped(relative: Path, exclude: Sequence[str]) -> bool:
    if any(fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in _IGNORED_PARTS):
        return False
    text = relative.as_posix()
    return not any(
        fnmatch.fnmatch(text, pattern) or fnmatch.fnmatch(relative.parts[0], pattern) for pattern in exclude
    )


def source_fingerprint(folder: Path, exclude: Sequence[str] = ()) -> str:
    """sha256 over the relative path and bytes of every file :class:`PipLocalBundling` copies
    from ``folder`` (bytecode, caches, ``*.egg-info`` and ``exclude`` left out), in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if not _shipped(relative, exclude):
            continue
        digest.update(relative.as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def asset_hash(
    *,
    requirements: Sequence[str],
    packages: Sequence[tuple[Path, str]],
    architecture: str,
    runtime_root: str,
    exclude: Sequence[str] = (),
) -> str:
    """The asset's name: what decides its content (see the module docstring), nothing else."""
    recipe = {
        "format": BUNDLING_FORMAT,
        "python": PYTHON_VERSION,
        "platforms": PLATFORMS[architecture],
        "provided_by_runtime": PROVIDED_BY_RUNTIME,
        "requirements": [r.strip() for r in requirements],
        "runtime_root": runtime_root,
        "sources": [(dest, source_fingerprint(source, exclude)) for source, dest in packages],
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode("utf-8")).hexdigest()


def python_code(
    source: Path,
    *,
    requirements: Sequence[str] = (),
    package_dir: str | None = None,
    site_dir: str = ".",
    skip: bool,
    architecture: str | None = None,
    exclude: Sequence[str] = (),
) -> lambda_.Code:
    """Code for a Lambda layer or function.

    * layer: ``source=layers/``, ``package_dir="agentmem"``, ``site_dir="python"`` →
      ``python/agentmem`` + wheels under ``python/``;
    * function with dependencies: ``source=<folder>``, ``package_dir=None``, ``site_dir="."`` →
      the folder's files at the root next to the wheels.

    ``exclude`` adds patterns (relative to ``source``) kept out of the asset and its hash.
    """
    excludes = [*EXCLUDES, *exclude]
    if skip:
        return lambda_.Code.from_asset(str(source), exclude=excludes)
    architecture = architecture or ARCHITECTURE.name  # "arm64" | "x86_64": the wheels' platform
    runtime_root = LAYER_ROOT if package_dir is not None else FUNCTION_ROOT
    if package_dir is not None:
        packages = [(source / package_dir, _within(site_dir, package_dir))]
        copies = [(package_dir, _within(site_dir, package_dir))]
    else:
        packages = [(source, ".")]
        copies = [(".", "")]
    local = PipLocalBundling(
        requirements=requirements,
        packages=packages,
        site_dir=site_dir,
        architecture=architecture,
        runtime_root=runtime_root,
    )
    docker_platform = "linux/arm64" if architecture == "arm64" else "linux/amd64"
    return lambda_.Code.from_asset(
        str(source),
        exclude=excludes,
        asset_hash_type=AssetHashType.CUSTOM,
        asset_hash=asset_hash(
            requirements=requirements,
            packages=packages,
            architecture=architecture,
            runtime_root=runtime_root,
            exclude=exclude,
        ),
        bundling=BundlingOptions(
            image=DockerImage.from_registry(f"public.ecr.aws/sam/build-python{PYTHON_VERSION}"),
            platform=docker_platform,
            command=["bash", "-c", _docker_command(requirements, site_dir, copies, runtime_root)],
            local=local,
        ),
    )
