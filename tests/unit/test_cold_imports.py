"""What a cold start imports (issue 11): each handler module, imported in a fresh interpreter,
leaves X-Ray, the services and numpy for later (the first traced event, the first event); the api
handler also leaves the Powertools resolvers and event classes it does not use, the domain's
text machinery, every API model's validator and the resolver itself (built on first use). Which modules are loaded
and what is built, not how long it takes: the timings are ``agentmem bench cold-start``."""

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


@pytest.mark.parametrize("name", ["api", "ingest", "projector", "consolidate", "reconcile", "reindex"])
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


def test_the_api_handler_leaves_what_the_api_does_not_use() -> None:
    loaded = _loaded_after(_run_handler("api"))
    # Powertools: the other resolvers (AppSync brings asyncio) and the other event classes
    assert "asyncio" not in loaded
    assert not {m for m in loaded if m.startswith("aws_lambda_powertools.event_handler.appsync")}
    assert "aws_lambda_powertools.event_handler.bedrock_agent" not in loaded
    assert "aws_lambda_powertools.utilities.data_classes.sqs_event" not in loaded
    assert "aws_lambda_powertools.utilities.data_classes.api_gateway_proxy_event" in loaded  # the one it uses
    # the resolver is built by the first request: its validation machinery (Powertools' pydantic
    # bridge, which builds a model, and pydantic's plugin discovery with it) and the route regexes
    assert "aws_lambda_powertools.event_handler.openapi.compat" not in loaded
    assert "aws_lambda_powertools.event_handler.openapi.params" not in loaded
    assert "aws_lambda_powertools.event_handler.middlewares.openapi_validation" not in loaded
    assert "pydantic.plugin._loader" not in loaded
    assert "tempfile" not in loaded  # importlib.resources: with the inspector's first asset
    # the domain's text machinery (regex tables) and the ports' types come with the container
    assert not {"agentmem.domain.context", "agentmem.domain.text", "agentmem.domain.sentences"} & loaded
    assert "agentmem.port_types" not in loaded and "agentmem.ports" not in loaded


def test_no_api_model_builds_its_validator_at_import() -> None:
    """``defer_build``: every pydantic model of agentmem the api handler's import defines (the
    API's, the turn message, the session state) is complete only once a request uses it."""
    code = _run_handler("api") + textwrap.dedent(
        """
        import pydantic
        def subclasses(cls):
            for sub in cls.__subclasses__():
                yield sub
                yield from subclasses(sub)
        models = [c for c in subclasses(pydantic.BaseModel) if c.__module__.startswith("agentmem.")]
        assert len(models) > 30, models
        built = [c.__qualname__ for c in models if c.__pydantic_complete__]
        assert built == [], built
        import agentmem.api.app
        assert agentmem.api.app._built == []  # nor the resolver
        """
    )
    _loaded_after(code)


def test_importing_the_ports_imports_no_numpy() -> None:
    loaded = _loaded_after("import agentmem.ports")
    assert "numpy" not in loaded
    assert "agentmem.domain.llm_facts" not in loaded


def _api_with_event() -> str:
    """The api handler run as a module (``module``), a Lambda ``Context`` class and the sample
    ``event`` of POST /v1/context, for a test to append its calls to."""
    return _run_handler("api").replace("runpy.run_path", "module = runpy.run_path") + textwrap.dedent(
        f"""
        import json
        class Context:
            function_name = "api"
            memory_limit_in_mb = 512
            aws_request_id = "test"
            invoked_function_arn = "arn:aws:lambda:local:000000000000:function:agentmem-api"
        event = json.load(open({str(EVENTS / "api_post_context.json")!r}, encoding="utf-8"))
        """
    )


def test_the_first_request_builds_what_the_import_left_out(tmp_path: Path) -> None:
    """Deferred, not dropped: the first event through the api handler builds the container
    (services, guards, numpy) and answers."""
    code = _api_with_event() + 'assert module["handler"](event, Context())["statusCode"] == 200\n'
    loaded = _loaded_after(code, AGENTMEM_DATA_DIR=str(tmp_path))
    assert {"agentmem.bootstrap", "agentmem.services.context", "numpy"} <= loaded


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"query": "我平时喝什么茶？", "mode": "chat"}, 200),
        ({"query": "what tea do I drink?", "mode": "rag"}, 200),
        ({"query": "", "mode": "chat"}, 422),  # the deferred validator still refuses
        ({"query": "你好", "mode": "聊天"}, 422),
        ({"query": "hello", "unknown": 1}, 422),  # extra="forbid" holds on the first request
    ],
)
def test_a_cold_process_validates_its_first_request_as_a_warm_one_does(
    tmp_path: Path, body: dict[str, object], status: int
) -> None:
    """The models build on the first request: the answer (status and error shape) is the warm one."""
    code = _api_with_event() + textwrap.dedent(
        f"""
        event["body"] = json.dumps({body!r}, ensure_ascii=False)
        first = module["handler"](event, Context())
        second = module["handler"](event, Context())
        assert first["statusCode"] == {status}, first
        answer = json.loads(first["body"])
        assert set(answer) == set(json.loads(second["body"])), (first, second)
        if {status} == 422:
            assert answer == json.loads(second["body"]), (first, second)
            assert answer["error"] == "invalid_request", answer
        """
    )
    _loaded_after(code, AGENTMEM_DATA_DIR=str(tmp_path))
