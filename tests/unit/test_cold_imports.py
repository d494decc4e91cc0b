"""What a cold start imports (issue 11): each handler module, imported in a fresh interpreter,
leaves X-Ray, the services and numpy for later (the first traced event, the first event).
Which modules are loaded, not how long they take: the timings are ``agentmem bench cold-start``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"
EVENTS = FUNCTIONS.parent / "events"


def _loaded_after(code: str, **env: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    environ = {**os.environ, "POWERTOOLS_METRICS_DISABLED": "true", "AGENTMEM_EMBEDDER": "hash", **env}
    environ.pop("LAMBDA_TASK_ROOT", None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environ, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def _run_handler(name: str) -> str:
    return f"import runpy\nrunpy.run_path({str(FUNCTIONS / name / 'handler.py')!r}, run_name='handler')\n"


@pytest.mark.parametrize("name", ["api", "ingest", "projector", "consolidate", "reconcile"])
def test_a_handler_imports_no_tracer_and_no_service(name: str) -> None:
    loaded = _loaded_after(_run_handler(name))
    assert "aws_xray_sdk" not in loaded  # tracing is off outside a Lambda (Powertools' rule)
    assert "agentmem.bootstrap" not in loaded  # the composition root waits for the first event
    assert not {m for m in loaded if m.startswith("agentmem.services.")}
    assert "numpy" not in loaded and "boto3" not in loaded


def test_the_api_handler_imports_neither_numpy_nor_boto3_nor_the_guards() -> None:
    loaded = _loaded_after(_run_handler("api"))
    assert "numpy" not in loaded
    assert "boto3" not in loaded
    assert "agentmem.domain.guards" not in loaded


def test_importing_the_ports_imports_no_numpy() -> None:
    loaded = _loaded_after("import agentmem.ports")
    assert "numpy" not in loaded
    assert "agentmem.domain.llm_facts" not in loaded


def test_the_first_request_builds_what_the_import_left_out(tmp_path: Path) -> None:
    """Deferred, not dropped: the first event through the api handler builds the container
    (services, guards, numpy) and answers."""
    code = _run_handler("api").replace("runpy.run_path", "module = runpy.run_path") + textwrap.dedent(
        f"""
        import json
        class Context:
            function_name = "api"
            memory_limit_in_mb = 512
            aws_request_id = "test"
            invoked_function_arn = "arn:aws:lambda:local:000000000000:function:agentmem-api"
        event = json.load(open({str(EVENTS / "api_post_context.json")!r}, encoding="utf-8"))
        assert module["handler"](event, Context())["statusCode"] == 200
        """
    )
    loaded = _loaded_after(code, AGENTMEM_DATA_DIR=str(tmp_path))
    assert {"agentmem.bootstrap", "agentmem.services.context", "numpy"} <= loaded
