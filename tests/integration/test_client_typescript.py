"""The TypeScript client (``clients/typescript``) from ``make test``:

* its OpenAPI types are current: the server's OpenAPI document, turned into TypeScript by the
  pinned openapi-typescript in a temp dir, is byte-for-byte ``src/openapi.ts``;
* it compiles with ``tsc`` and its ``node --test`` suite passes against ``agentmem serve`` in its
  own process: the retry rules on a scripted fetch, every operation live, the README example as
  written, and the Vercel AI SDK example with the SDK's mock model.

Skipped, saying why, only where ``node``/``npm`` are absent. ``npm ci`` runs first when
``node_modules`` is missing (CI's ``.ci/run`` does it up front)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agentmem.api.app import openapi_json
from support.live_server import agentmem_serve

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NODE, NPM = shutil.which("node"), shutil.which("npm")
pytestmark = [
    pytest.mark.skipif(
        NODE is None or NPM is None,
        reason="node and npm are not installed: the TypeScript client is not tested",
    ),
    pytest.mark.xdist_group("typescript"),  # one npm ci, one build
]


@pytest.fixture(scope="module")
def built() -> Path:
    if not (TS / "node_modules" / ".bin" / "tsc").exists():
        subprocess.run(
            [NPM, "ci", "--no-audit", "--no-fund"], cwd=TS, check=True, capture_output=True, timeout=300
        )
    done = subprocess.run(
        [NPM, "run", "--silent", "build"], cwd=TS, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return TS / "dist"


def test_the_generated_types_are_current(built: Path, tmp_path: Path) -> None:
    document = tmp_path / "openapi.json"
    document.write_text(openapi_json(), encoding="utf-8")
    out = tmp_path / "openapi.ts"
    generator = TS / "node_modules" / ".bin" / "openapi-typescript"
    done = subprocess.run(
        [str(generator), str(document), "-o", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == (TS / "src" / "openapi.ts").read_text(encoding="utf-8"), (
        "clients/typescript/src/openapi.ts is stale: run make typescript-types"
    )


def test_the_typescript_client_has_every_operation_of_the_python_client() -> None:
    """Each public call of ``agentmem_client.calls.Requests`` is a method of ``AgentMemClient`` in
    ``src/client.ts``, camelCased (``wait_for_turn`` -> ``waitForTurn``)."""
    from agentmem_client.calls import Requests

    python = [
        n for n, v in vars(Requests).items() if callable(v) and not n.startswith("_") and n != "request"
    ]
    source = (TS / "src" / "client.ts").read_text(encoding="utf-8")
    declared = set(re.findall(r"^  (?:async )?([a-z][A-Za-z]*)\(", source, re.MULTILINE))
    camel = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), n) for n in python}
    assert len(camel) >= 20 and camel - declared == set()


def test_node_test_passes_against_agentmem_serve(built: Path, tmp_path: Path) -> None:
    with agentmem_serve(tmp_path / "data") as url:
        done = subprocess.run(
            [NODE, "--test", "--test-reporter=tap", "test/"],
            cwd=TS,
            capture_output=True,
            text=True,
            env={**os.environ, "AGENTMEM_URL": url},
            timeout=300,
        )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    counts = dict(re.findall(r"^# (tests|pass|fail) (\d+)$", done.stdout, re.MULTILINE))
    assert counts.get("fail") == "0" and counts.get("pass") == counts.get("tests")
    assert int(counts["tests"]) >= 14  # retry rules, live operations, README, the Vercel AI example
