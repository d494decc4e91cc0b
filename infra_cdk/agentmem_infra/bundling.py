"""Lambda code assets without Docker.

The shared layer ships ``python/agentmem/...`` plus the runtime dependencies pinned in
``infra_cdk/layer-requirements.txt``. :class:`PipLocalBundling` builds it on the synthesizing
machine with ``pip install --target <asset>/python --platform <manylinux for the Lambda
architecture> --only-binary=:all: --python-version 3.12`` and a copy of the package; CDK falls
back to the Docker command (the SAM build image) only when the local build fails.

With ``-c agentmem:skipBundling=true`` (or ``AGENTMEM_SKIP_BUNDLING=1``) every asset is a plain
``Code.from_asset`` of its source folder: no pip, no network. The synthesis tests use it; the
result is *not* deployable (the layer would lack its dependencies and its ``python/`` prefix).
"""

from __future__ import annotations

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
# In the Lambda runtime already; aws-xray-sdk pulls botocore in, which would only add ~80 MB.
PROVIDED_BY_RUNTIME = ("boto3", "botocore", "s3transfer")
EXCLUDES = ["**/__pycache__", "**/*.pyc", "*.egg-info", "**/.pytest_cache", "**/.mypy_cache"]
# Beside the library in layers/ but not shipped: the laptop emulator, CLI, eval and benchmarks.
DEV_PACKAGES = ["agentmem_dev"]
SKIP_CONTEXT = "agentmem:skipBundling"
SKIP_ENV = "AGENTMEM_SKIP_BUNDLING"


def read_requirements(path: Path) -> list[str]:
    """Requirement lines of ``path`` without comments or blanks."""
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def skip_bundling(context_value: Any) -> bool:
    env = os.environ.get(SKIP_ENV, "")
    values = (context_value, env)
    return any(str(v).strip().lower() in ("1", "true", "yes", "on") for v in values if v is not None)


def pip_command(
    requirements: Sequence[str], target: str, *, architecture: str, python: Sequence[str] | None = None
) -> list[str]:
    """The pip invocation that installs ``requirements`` for Lambda into ``target``."""
    cmd = [*(python or [sys.executable, "-m", "pip"]), "install", "--quiet", "--no-compile"]
    cmd += ["--target", target, "--implementation", "cp", "--python-version", PYTHON_VERSION]
    for platform in PLATFORMS[architecture]:
        cmd += ["--platform", platform]
    cmd += ["--only-binary=:all:", "--upgrade", *requirements]
    return cmd


def _prune(target: Path) -> None:
    for entry in list(target.iterdir()):
        name = entry.name.lower()
        if any(name == p or name.startswith(f"{p}-") for p in PROVIDED_BY_RUNTIME):
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
    ) -> None:
        self.requirements = list(requirements)
        self.packages = list(packages)
        self.site_dir = site_dir
        self.architecture = architecture

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
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"agentmem: local bundling failed ({exc}); falling back to Docker", file=sys.stderr)
            for child in out.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink()
            return False
        return True


def _within(site_dir: str, name: str) -> str:
    """``name`` under ``site_dir`` inside the asset (``"."``/``""`` = the asset root)."""
    if site_dir in ("", "."):
        return name
    return f"{site_dir}/{name}" if name else site_dir


_ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache", ".mypy_cache")


def _docker_command(requirements: Sequence[str], site_dir: str, copies: Sequence[tuple[str, str]]) -> str:
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
    return " && ".join(steps)


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
    if package_dir is not None:
        packages = [(source / package_dir, _within(site_dir, package_dir))]
        copies = [(package_dir, _within(site_dir, package_dir))]
    else:
        packages = [(source, ".")]
        copies = [(".", "")]
    local = PipLocalBundling(
        requirements=requirements, packages=packages, site_dir=site_dir, architecture=architecture
    )
    docker_platform = "linux/arm64" if architecture == "arm64" else "linux/amd64"
    return lambda_.Code.from_asset(
        str(source),
        exclude=excludes,
        asset_hash_type=AssetHashType.SOURCE,
        bundling=BundlingOptions(
            image=DockerImage.from_registry(f"public.ecr.aws/sam/build-python{PYTHON_VERSION}"),
            platform=docker_platform,
            command=["bash", "-c", _docker_command(requirements, site_dir, copies)],
            local=local,
        ),
    )
