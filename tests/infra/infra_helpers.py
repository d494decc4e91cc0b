"""Helpers of the CDK synthesis tests (``infra_cdk/``); fixtures live in ``conftest.py``.

Everything here skips cleanly when the CDK toolchain is absent: ``aws_cdk`` / ``cdk_nag`` not
installed, or no ``node`` on PATH (jsii runs the CDK in Node). Each environment is synthesized
once per process with ``agentmem:skipBundling`` (plain source assets: no pip, no network) and the
cdk-nag AwsSolutions plugin on, so a synthesized template is also a nag-clean one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra_cdk"

# jsii prints a banner on Node releases it no longer supports; the CDK still works on them.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,19,20,21")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

if str(INFRA) not in sys.path:
    sys.path.append(str(INFRA))  # for agentmem_infra; appended so infra_cdk/app.py shadows nothing


def load_module(name: str, path: Path) -> ModuleType:
    """Import a Lambda handler file under a unique module name (they are all ``handler.py``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require_cdk() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: the AWS CDK (jsii) needs Node.js")
    pytest.importorskip(
        "aws_cdk", reason="aws-cdk-lib is not installed (pip install -r infra_cdk/requirements.txt)"
    )
    pytest.importorskip(
        "cdk_nag", reason="cdk-nag is not installed (pip install -r infra_cdk/requirements.txt)"
    )


def cdk_context(env: str, **extra: Any) -> dict[str, Any]:
    context = json.loads((INFRA / "cdk.json").read_text(encoding="utf-8"))["context"]
    context.update({"env": env, "agentmem:skipBundling": "true"}, **extra)
    return context


@dataclass
class Synth:
    env: str
    stack: Any
    template: dict[str, Any]
    outdir: Path

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.template["Resources"]

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == cfn_type}

    def logical_id(self, construct: Any) -> str:
        return str(self.stack.get_logical_id(construct.node.default_child))

    def assertions(self) -> Any:
        from aws_cdk.assertions import Template

        return Template.from_json(self.template)


def synthesize(env: str, outdir: Path, **context: Any) -> Synth:
    """Build the app exactly as ``infra_cdk/app.py`` does and synthesize it (raises on nag findings)."""
    from aws_cdk import App

    from agentmem_infra.app import build_app

    app = App(context=cdk_context(env, **context), outdir=str(outdir))
    stack = build_app(app)
    assembly = app.synth()
    template = assembly.get_stack_by_name(stack.stack_name).template
    return Synth(env=env, stack=stack, template=template, outdir=outdir)
