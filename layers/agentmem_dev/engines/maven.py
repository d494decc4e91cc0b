"""Fetching the engines with Maven into the engine cache (``agentmem engines fetch``).

Each :class:`~agentmem_dev.engines.catalog.Bundle` becomes a throw-away ``pom.xml`` whose
dependencies are the bundle's artifacts; ``maven-dependency-plugin``'s ``copy-dependencies``
copies them (with their runtime dependencies for jar bundles) into ``<cache>/artifacts/<name>/``.
Maven's own download cache (``~/.m2`` unless ``AGENTMEM_ENGINES_M2`` says otherwise) is
reused, so a second fetch is offline. A bundle whose folder holds a ``.complete`` marker is not
fetched again. Nothing here runs at test time: the test plugin only looks at the markers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape

from agentmem_dev.engines.catalog import BUNDLES, Bundle

DEPENDENCY_PLUGIN = "3.8.1"
COMPLETE = ".complete"


class FetchFailed(RuntimeError):
    """Maven could not resolve a bundle (no Maven, no network, an artifact not served)."""


def _dependency_xml(coordinate: str) -> str:
    parts = coordinate.split(":")
    group, artifact, version = parts[:3]
    kind = parts[3] if len(parts) > 3 else "jar"
    classifier = f"<classifier>{escape(parts[4])}</classifier>" if len(parts) > 4 else ""
    return (
        f"<dependency><groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}</artifactId>"
        f"<version>{escape(version)}</version><type>{escape(kind)}</type>{classifier}</dependency>"
    )


def pom(bundle: Bundle) -> str:
    """The pom that resolves ``bundle``."""
    deps = "".join(_dependency_xml(c) for c in bundle.artifacts)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.agentmem.engines</groupId>
  <artifactId>{escape(bundle.name)}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>{deps}</dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId>
    <version>{DEPENDENCY_PLUGIN}</version>
  </plugin></plugins></build>
</project>
"""


def bundle_dir(cache: Path, name: str) -> Path:
    return cache / "artifacts" / name


def fetched(cache: Path) -> list[str]:
    """The bundles not yet in ``cache`` (empty: everything is there)."""
    return [b.name for b in BUNDLES if not (bundle_dir(cache, b.name) / COMPLETE).exists()]


def fetch(cache: Path, *, progress: bool = True) -> list[str]:
    """Copies every missing bundle into ``cache``; returns the names fetched."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise FetchFailed("Maven (mvn) is not on PATH: install Maven and Java 17 to fetch the engines")
    done: list[str] = []
    for bundle in BUNDLES:
        target = bundle_dir(cache, bundle.name)
        if (target / COMPLETE).exists():
            continue
        if progress:
            print(f"[engines] fetching {bundle.name}: {', '.join(bundle.artifacts)}", file=sys.stderr)
        shutil.rmtree(target, ignore_errors=True)
        work = cache / "poms" / bundle.name
        work.mkdir(parents=True, exist_ok=True)
        (work / "pom.xml").write_text(pom(bundle), encoding="utf-8")
        command = [
            mvn,
            "-B",
            "-q",
            "-f",
            str(work / "pom.xml"),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={target}",
            f"-DexcludeTransitive={'false' if bundle.transitive else 'true'}",
            "-DincludeScope=runtime",
        ]
        repo = os.environ.get("AGENTMEM_ENGINES_M2")
        if repo:
            command.append(f"-Dmaven.repo.local={repo}")
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
            raise FetchFailed(f"mvn could not fetch {bundle.name}:\n" + "\n".join(tail))
        (target / COMPLETE).write_text("\n".join(bundle.artifacts) + "\n", encoding="utf-8")
        done.append(bundle.name)
    return done
