"""The OpenSearch role-mapping custom resource, the Docker-free bundling, and the env config."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from infra_helpers import INFRA, REPO, load_module, require_cdk

# One worker synthesizes the stacks (jsii + Node are heavy): run with `pytest -n auto --dist loadgroup`.
pytestmark = pytest.mark.xdist_group("cdk")

# ----------------------------------------------------------------------------- role mapping


@pytest.fixture
def access() -> Any:
    pytest.importorskip("botocore")
    return load_module("agentmem_opensearch_access", INFRA / "lambdas" / "opensearch_access" / "handler.py")


PROPS = {
    "Endpoint": "vpc-agentmem-dev-abc.eu-west-1.es.amazonaws.com",
    "RoleName": "agentmem_app",
    "IndexPattern": "agentmem-memories*",
    "BackendRoles": ["arn:aws:iam::1:role/b", "arn:aws:iam::1:role/a", "arn:aws:iam::1:role/a"],
}
EVENT = {
    "StackId": "stack",
    "RequestId": "req",
    "LogicalResourceId": "RoleMapping",
    "ResponseURL": "https://cloudformation-response.example/presigned",
    "ResourceProperties": PROPS,
}


def test_apply_puts_role_then_mapping(access: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str, str, Any]] = []
    monkeypatch.setattr(access, "_signed", lambda m, e, p, b: calls.append((m, e, p, b)) or (200, "{}"))
    access.apply(PROPS, sleep=lambda s: None)
    assert [c[2] for c in calls] == [
        "/_plugins/_security/api/roles/agentmem_app",
        "/_plugins/_security/api/rolesmapping/agentmem_app",
    ]
    role, mapping = calls[0][3], calls[1][3]
    assert role["index_permissions"] == [
        {"index_patterns": ["agentmem-memories*"], "allowed_actions": ["indices_all"]}
    ]
    assert "indices:admin/index_template/put" in role["cluster_permissions"]
    assert mapping["backend_roles"] == ["arn:aws:iam::1:role/a", "arn:aws:iam::1:role/b"]
    assert all(c[1] == PROPS["Endpoint"] for c in calls)


def test_apply_retries_while_the_security_index_warms_up(
    access: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter([(503, "not ready"), (403, "no permissions yet"), (200, "{}"), (200, "{}")])
    sleeps: list[float] = []
    monkeypatch.setattr(access, "_signed", lambda *a: next(answers))
    access.apply(PROPS, sleep=sleeps.append)
    assert sleeps == [5, 10]


def test_apply_gives_up_on_a_client_error(access: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(access, "_signed", lambda *a: (400, "bad role body"))
    with pytest.raises(RuntimeError, match="400 bad role body"):
        access.apply(PROPS, sleep=lambda s: None)


class Context:
    log_stream_name = "stream-1"


def _capture_response(access: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    class Response:
        def close(self) -> None:
            pass

    def urlopen(request: Any, timeout: float) -> Response:
        assert request.get_method() == "PUT" and request.full_url == EVENT["ResponseURL"]
        sent.append(json.loads(request.data))
        return Response()

    monkeypatch.setattr(access.urllib.request, "urlopen", urlopen)
    return sent


def test_handler_reports_success(access: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _capture_response(access, monkeypatch)
    monkeypatch.setattr(access, "apply", lambda props: None)
    access.handler({**EVENT, "RequestType": "Create"}, Context())
    assert sent[0]["Status"] == "SUCCESS"
    assert sent[0]["PhysicalResourceId"] == f"{PROPS['Endpoint']}/agentmem_app"


def test_handler_reports_failure_instead_of_hanging_the_stack(
    access: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = _capture_response(access, monkeypatch)

    def boom(props: Any) -> None:
        raise RuntimeError("PUT failed: 500")

    monkeypatch.setattr(access, "apply", boom)
    access.handler({**EVENT, "RequestType": "Update", "PhysicalResourceId": "keep-me"}, Context())
    assert sent[0]["Status"] == "FAILED" and "500" in sent[0]["Reason"]
    assert sent[0]["PhysicalResourceId"] == "keep-me"


def test_handler_delete_is_a_no_op(access: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _capture_response(access, monkeypatch)
    monkeypatch.setattr(access, "apply", lambda props: pytest.fail("no calls on delete"))
    access.handler({**EVENT, "RequestType": "Delete", "PhysicalResourceId": "x"}, Context())
    assert sent[0]["Status"] == "SUCCESS"


# ----------------------------------------------------------------------------- bundling


@pytest.fixture
def bundling() -> Any:
    require_cdk()
    from agentmem_infra import bundling as module

    return module


def test_pip_command_targets_lambda(bundling: Any) -> None:
    cmd = bundling.pip_command(["numpy==2.4.6"], "/out/python", architecture="arm64", python=["pip"])
    joined = " ".join(cmd)
    assert "--target /out/python" in joined
    assert "--only-binary=:all:" in cmd
    assert "--python-version 3.12" in joined and "--implementation cp" in joined
    assert "--platform manylinux2014_aarch64" in joined and "--platform manylinux_2_28_aarch64" in joined
    assert cmd[-1] == "numpy==2.4.6"
    x86 = " ".join(bundling.pip_command(["x"], "/t", architecture="x86_64", python=["pip"]))
    assert "manylinux2014_x86_64" in x86


def test_layer_requirements_are_what_bundling_installs(bundling: Any) -> None:
    """What the layer holds is derived and checked in tests/infra/test_layer_contents.py; here: the
    bundling reads those lines as they are, pinned, none of them the runtime's."""
    from agentmem_infra.layer_contents import read_requirements

    reqs = read_requirements(INFRA / "layer-requirements.txt")
    assert reqs and all("==" in r for r in reqs), "the layer is pinned"
    assert not [r for r in reqs if bundling.provided_by_runtime(r.split("==")[0])]


def test_local_bundling_copies_the_package_and_prunes_runtime_libs(
    bundling: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "asset"
    out.mkdir()

    def fake_pip(cmd: list[str], **kwargs: Any) -> None:
        target = Path(cmd[cmd.index("--target") + 1])
        for name in ("numpy", "boto3", "botocore-1.0.dist-info", "s3transfer"):
            (target / name).mkdir(parents=True)

    monkeypatch.setattr(bundling.subprocess, "run", fake_pip)
    monkeypatch.setattr(bundling, "bytecode_python", lambda: None)  # compiling: the test below
    local = bundling.PipLocalBundling(
        requirements=["numpy==2.4.6"],
        packages=[(REPO / "layers" / "agentmem", "python/agentmem")],
        site_dir="python",
    )
    assert local.try_bundle(str(out), {"image": None}) is True
    assert (out / "python" / "agentmem" / "adapters" / "aws" / "dynamodb_schema.py").is_file()
    ui = out / "python" / "agentmem" / "api" / "ui"  # the inspector's static files ship in the layer
    assert sorted(p.name for p in ui.iterdir()) == ["app.js", "index.html", "style.css"]
    assert (out / "python" / "numpy").is_dir()
    assert (
        not (out / "python" / "boto3").exists() and not (out / "python" / "botocore-1.0.dist-info").exists()
    )
    assert not list(out.rglob("__pycache__"))


def test_local_bundling_falls_back_to_docker_when_pip_fails(
    bundling: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(cmd: list[str], **kwargs: Any) -> None:
        raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(bundling.subprocess, "run", failing)
    local = bundling.PipLocalBundling(requirements=["x==1"], packages=[], site_dir="python")
    out = tmp_path / "asset"
    out.mkdir()
    assert local.try_bundle(str(out)) is False
    assert list(out.iterdir()) == []  # nothing half-built left for Docker to trip on


def test_docker_command_mirrors_local_bundling(bundling: Any) -> None:
    script = bundling._docker_command(["numpy==2.4.6"], "python", [("agentmem", "python/agentmem")], "/opt")
    assert "pip install" in script and "--target /asset-output/python" in script and "numpy==2.4.6" in script
    assert "cp -r /asset-input/agentmem/. /asset-output/python/agentmem/" in script
    assert "/asset-output/python/boto3" in script
    # bytecode last, after the caches are pruned, named as Lambda extracts the layer
    compile_at = script.index("-m compileall")
    assert compile_at > script.index("-name __pycache__")
    assert "--invalidation-mode unchecked-hash -s /asset-output -p /opt /asset-output" in script[compile_at:]


def test_local_bundling_compiles_bytecode_lambda_can_use(
    bundling: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lambda's code is read-only: without shipped bytecode every cold start compiles every module.
    The .pyc must not depend on file times (unchecked hash) and must name the /opt paths."""
    import marshal
    import sys

    monkeypatch.setattr(bundling, "bytecode_python", lambda: [sys.executable])  # stands in for 3.12
    local = bundling.PipLocalBundling(
        requirements=[],
        packages=[(REPO / "layers" / "agentmem", "python/agentmem")],
        site_dir="python",
        runtime_root="/opt",
    )
    out = tmp_path / "asset"
    out.mkdir()
    assert local.try_bundle(str(out)) is True
    sources = list((out / "python" / "agentmem").rglob("*.py"))
    compiled = list((out / "python" / "agentmem").rglob("__pycache__/*.pyc"))
    assert sources and len(compiled) == len(sources)
    pyc = next(p for p in compiled if p.name.startswith("ports."))
    data = pyc.read_bytes()
    assert int.from_bytes(data[4:8], "little") == 0b01  # hash-based, never checked against the source
    assert marshal.loads(data[16:]).co_filename == "/opt/python/agentmem/ports.py"


def test_bytecode_needs_a_python_of_the_runtime_version(
    bundling: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setattr(bundling.shutil, "which", lambda name: None)
    monkeypatch.setattr(bundling, "PYTHON_VERSION", f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert bundling.bytecode_python() == [sys.executable]
    monkeypatch.setattr(bundling, "PYTHON_VERSION", "2.1")  # no such interpreter here
    assert bundling.bytecode_python() is None


def test_skip_bundling_switches(bundling: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTMEM_SKIP_BUNDLING", raising=False)
    assert bundling.skip_bundling("true") and bundling.skip_bundling(True)
    assert not bundling.skip_bundling(None) and not bundling.skip_bundling("false")
    monkeypatch.setenv("AGENTMEM_SKIP_BUNDLING", "1")
    assert bundling.skip_bundling(None)


# ----------------------------------------------------------------------------- config


def test_config_envs_and_overrides() -> None:
    require_cdk()
    from agentmem_infra.config import ACCESS, FUNCTIONS, REINDEX, load_config

    assert load_config(None).name == "dev"
    with pytest.raises(ValueError, match="dev\\|staging\\|prod"):
        load_config("qa")
    prod = load_config(
        "prod", {"agentmem:alarmEmail": "ops@example.com", "agentmem:bedrockLlmEnabled": "true"}
    )
    assert prod.alarm_email == "ops@example.com" and prod.bedrock_llm_enabled is True
    assert prod.retain_data and prod.deletion_protection and prod.customer_managed_key
    assert prod.opensearch_zone_awareness and prod.neptune_instances >= 2
    dev = load_config("dev")
    assert not dev.retain_data and not dev.deletion_protection
    assert set(ACCESS) == {*FUNCTIONS, REINDEX}  # the reindex function: while a reindex is configured
    for name in ACCESS:
        assert all(a.startswith("dynamodb:") for a in ACCESS[name].memory + ACCESS[name].session)


def test_cdk_json_runs_the_app() -> None:
    config = json.loads((INFRA / "cdk.json").read_text(encoding="utf-8"))
    assert config["app"] == "python3 app.py"
    assert (INFRA / "app.py").is_file()


def test_synth_script_without_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_cdk()
    synth = load_module("agentmem_infra_synth_script", INFRA / "synth.py")
    assert synth.main(["--env", "staging", "--skip-bundling", "--out", str(tmp_path)]) == 0
    assert "agentmem-staging" in capsys.readouterr().out
    assert (tmp_path / "agentmem-staging.template.json").is_file()
