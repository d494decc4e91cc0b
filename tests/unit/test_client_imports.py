"""httpx stays out of the Lambda layer's import path: only ``agentmem.client`` imports it (the
layer's requirements do not ship it), importing the package imports nothing until a name is
used, and the SQS turn sender works without it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

LAYERS = Path(__file__).resolve().parents[2] / "layers"
FUNCTIONS = LAYERS.parent / "functions"


def _imports_httpx(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "httpx" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "httpx":
            return True
    return False


def test_only_the_client_package_imports_httpx() -> None:
    shipped = [*(LAYERS / "agentmem").rglob("*.py"), *FUNCTIONS.rglob("*.py")]
    client = LAYERS / "agentmem" / "client"
    offenders = [
        str(p.relative_to(LAYERS.parent)) for p in shipped if client not in p.parents and _imports_httpx(p)
    ]
    assert offenders == []
    assert _imports_httpx(client / "protocol.py")  # the check can see an import


def test_the_layer_requirements_do_not_ship_httpx() -> None:
    requirements = (LAYERS.parent / "infra_cdk" / "layer-requirements.txt").read_text(encoding="utf-8")
    assert "httpx" not in requirements.lower()


def _loaded_after(code: str) -> set[str]:
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "POWERTOOLS_METRICS_DISABLED": "true", "PYTHONPATH": str(LAYERS)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_api_or_the_client_package_imports_no_httpx() -> None:
    assert "httpx" not in _loaded_after("import agentmem.api.app")
    assert "httpx" not in _loaded_after("import agentmem.client")  # names load on first use
    assert "httpx" not in _loaded_after("from agentmem.client import TurnSender")
    assert "httpx" in _loaded_after("from agentmem.client import AgentMemClient")
