"""The Lambda layer holds what its code imports, proved two ways:

* the requirements file is what an import scan of ``layers/agentmem`` and the handlers derives
  (:mod:`agentmem_infra.layer_contents`), and a library kept out of the layer is imported only by
  modules that never run on AWS;
* a copy of the layer (:mod:`layer_build`) is run **with only its own packages, the runtime's SDK
  and a function's folder importable** (``python -I -S``): every module of ``agentmem`` and every
  handler imports, and an English and a Chinese turn (Traditional script, a phone number) go
  through the real ingest handler's guards and write path, and an explicit write and a context
  call through the api handler, against DynamoDB and SQS served by moto on loopback.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import boto3
import pytest
from infra_helpers import REPO

from agentmem_infra import layer_contents
from agentmem_infra.layer_contents import NOT_IN_LAYER, Import, scan

pytestmark = pytest.mark.xdist_group("layer")

REGION = "us-east-1"
PROBE = Path(__file__).with_name("layer_probe.py")
TABLES = {"memory": "layer-memories", "session": "layer-sessions", "audit": "layer-audit"}


# ----------------------------------------------------------------------------- the import scan


def test_the_requirements_file_is_what_the_code_imports() -> None:
    found = scan()
    assert found.problems == []
    expected = layer_contents.render(found, layer_contents.read_pins())
    assert layer_contents.REQUIREMENTS.read_text(encoding="utf-8") == expected, (
        "infra_cdk/layer-requirements.txt is out of date: run "
        "`python -m agentmem_infra.layer_contents --write` in infra_cdk/"
    )
    # the guards' libraries a first deploy lacked
    assert {"opencc", "phonenumberslite", "python-stdnum"} <= set(layer_contents.layer_distributions(found))


def test_every_line_is_pinned_and_nothing_the_runtime_has_is_shipped() -> None:
    lines = [line for line, _ in layer_contents.requirement_lines(scan(), layer_contents.read_pins())]
    assert lines and all("==" in line for line in lines)
    names = {layer_contents.canonical(line.split("[")[0].split("==")[0]) for line in lines}
    assert not names & {"boto3", "botocore", "s3transfer", *NOT_IN_LAYER}


def test_a_new_import_of_a_new_library_lands_in_the_layer() -> None:
    found = scan(
        [Import("agentmem.domain.guards.normalize", "opencc"), Import("agentmem.api.app", "pydantic")]
    )
    assert set(found.layer) == {"opencc", "pydantic"} and not found.problems


def test_a_library_kept_out_of_the_layer_is_refused_where_aws_runs_it() -> None:
    found = scan([Import("agentmem.domain.guards.pii.numbers", "usearch")])
    assert found.problems and "not in the Lambda layer" in found.problems[0]
    assert not scan([Import("agentmem.adapters.embedded.vectors", "usearch")]).problems


def test_an_import_nothing_provides_is_a_problem() -> None:
    assert scan([Import("agentmem.domain.x", "no_such_library_anywhere")]).problems


def test_type_checking_imports_are_not_runtime_imports(tmp_path: Path) -> None:
    package = tmp_path / "layers" / "agentmem"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import usearch\n"
        "def f():\n    import opencc\n",
        encoding="utf-8",
    )
    (tmp_path / "functions").mkdir()
    imports = layer_contents.third_party_imports(tmp_path / "layers", tmp_path / "functions")
    assert [i.top for i in imports] == ["opencc"]


# ----------------------------------------------------------------------------- the layer alone


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def engine() -> Iterator[str]:
    """DynamoDB and SQS served by moto on loopback (the probe's boto3 reaches it by AWS_ENDPOINT_URL)."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def aws(service: str, endpoint: str) -> Any:
    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def sqs_record(body: str, message_id: str) -> dict[str, Any]:
    millis = str(int(datetime.now(UTC).timestamp() * 1000))
    return {
        "messageId": message_id,
        "receiptHandle": f"rh-{message_id}",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": millis},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:layer-ingest",
        "awsRegion": REGION,
    }


def turn_body(user_id: str, text: str, message_id: str) -> str:
    return json.dumps(
        {
            "tenant_id": "acme",
            "user_id": user_id,
            "session_id": "s-1",
            "user": text,
            "assistant": "OK",
            "at": datetime.now(UTC).isoformat(),
            "message_id": message_id,
        },
        ensure_ascii=False,
    )


def api_event(user_id: str, method: str, path: str, body: Any) -> dict[str, Any]:
    from agentmem_dev.emulator.events import api_event_as

    return api_event_as("acme", user_id, method, path, body)


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory, engine: str) -> dict[str, Any]:
    from layer_build import build, interpreter, mode

    from agentmem.adapters.aws.dynamodb_schema import create_tables

    root = tmp_path_factory.mktemp("layer")
    python, version = interpreter(mode())
    layer, runtime, drift = build(root, mode(), version)
    create_tables(aws("dynamodb", engine), **TABLES)
    queue_url = aws("sqs", engine).create_queue(QueueName="layer-ingest")["QueueUrl"]
    index = metadata.packages_distributions()
    confined = {
        top: list(rule.importers)
        for dist, rule in NOT_IN_LAYER.items()
        for top in [
            *rule.modules,
            *(t for t, ds in index.items() if dist in map(layer_contents.canonical, ds)),
        ]
    }
    events = {
        "ingest": {
            "Records": [
                sqs_record(turn_body("alice", "I live in Glasgow and I work as a pilot.", "m-en"), "q-1"),
                sqs_record(
                    turn_body("bob", "我住在台北，電話是 0912 345 678，最近在學潛水。", "m-zh"), "q-2"
                ),
            ]
        },
        "api": [
            api_event(
                "bob", "POST", "/v1/memories", {"content": "我對花生過敏，緊急聯絡人電話 +886 912 345 678。"}
            ),
            api_event("bob", "POST", "/v1/context", {"query": "我住在哪裡？"}),
            api_event("alice", "POST", "/v1/context", {"query": "Where do I live?"}),
        ],
    }
    functions = {
        name: str(REPO / "functions" / name)
        for name in ("ingest", "api", "projector", "consolidate", "reconcile")
    }
    config = root / "probe.json"
    config.write_text(
        json.dumps(
            {
                "path": [str(layer), str(runtime)],
                "functions": functions,
                "confined": confined,
                "events": events,
            }
        ),
        encoding="utf-8",
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(root),
        "AWS_ENDPOINT_URL": engine,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AGENTMEM_BACKEND": "aws",
        "AGENTMEM_AWS_REGION": REGION,
        "AGENTMEM_TABLE_MEMORY": TABLES["memory"],
        "AGENTMEM_TABLE_SESSION": TABLES["session"],
        "AGENTMEM_TABLE_AUDIT": TABLES["audit"],
        "AGENTMEM_QUEUE_URL": queue_url,
        "AGENTMEM_EMBEDDER": "hash",
        # OpenSearch and Neptune are not here: their calls are HTTP, and the embedded projections
        # stand in (numpy, SQLite: both in the layer or the standard library)
        "AGENTMEM_SEARCH_BACKEND": "local",
        "AGENTMEM_GRAPH_BACKEND": "local",
        "AGENTMEM_LOCAL_PROJECTION_DIR": str(root / "projections"),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(
        [python, "-I", "-S", str(PROBE), str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if drift:  # the venv runs other versions than the layer pins: the check still holds for names
        warnings.warn(f"layer pins differ from the installed versions: {drift}", stacklevel=1)
    result["python"] = version
    return result


def test_every_module_and_handler_imports_with_only_the_layer(probed: dict[str, Any]) -> None:
    assert probed["failures"] == [], probed["failures"]


def test_turns_in_both_languages_pass_the_guards_and_are_stored_from_the_layer_alone(
    probed: dict[str, Any], engine: str
) -> None:
    answers = probed["answers"]
    assert "error" not in answers, answers.get("error")
    assert answers["ingest"] == {"batchItemFailures": []}
    created, bob_context, alice_context = answers["api"]
    assert created["statusCode"] == 201, created["body"]
    stored = json.loads(created["body"])
    assert "phone" in stored["redacted"] and "912 345 678" not in stored["memory"]["content"]
    assert bob_context["statusCode"] == 200 and "台北" in json.loads(bob_context["body"])["context"]
    assert alice_context["statusCode"] == 200 and "Glasgow" in json.loads(alice_context["body"])["context"]
    items = aws("dynamodb", engine).scan(TableName=TABLES["memory"])["Items"]
    texts = str(items)
    assert "0912 345 678" not in texts and "912 345 678" not in texts  # redacted before it was written
