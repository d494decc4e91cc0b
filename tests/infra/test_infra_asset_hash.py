"""The bundled assets' hash (``bundling.asset_hash``): a changed pin or a changed shipped source
file names a new asset, so ``cdk.out`` or the bootstrap bucket can never hand back a stale layer;
what is not shipped (agentmem_dev, bytecode, caches, comments) changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from infra_helpers import REPO, require_cdk

pytestmark = pytest.mark.xdist_group("cdk")

PINS = ["pydantic==2.14.4", "numpy==2.4.6"]


@pytest.fixture(scope="module")
def bundling() -> Any:
    require_cdk()
    from agentmem_infra import bundling

    return bundling


@pytest.fixture
def layers(tmp_path: Path) -> Path:
    """A copy of ``layers/`` to edit: the library and the development tooling beside it."""
    root = tmp_path / "layers"
    (root / "agentmem" / "domain").mkdir(parents=True)
    (root / "agentmem" / "__init__.py").write_text("VERSION = 1\n", encoding="utf-8")
    (root / "agentmem" / "domain" / "scoring.py").write_text("def score(): return 1\n", encoding="utf-8")
    (root / "agentmem_dev").mkdir()
    (root / "agentmem_dev" / "cli.py").write_text("print('dev')\n", encoding="utf-8")
    return root


def layer_hash(
    bundling: Any, layers: Path, requirements: list[str] = PINS, architecture: str = "arm64"
) -> str:
    return str(
        bundling.asset_hash(
            requirements=requirements,
            packages=[(layers / "agentmem", "python/agentmem")],
            architecture=architecture,
            runtime_root=bundling.LAYER_ROOT,
            exclude=bundling.DEV_PACKAGES,
        )
    )


def test_a_changed_pin_is_a_new_layer(bundling: Any, layers: Path) -> None:
    base = layer_hash(bundling, layers)
    assert layer_hash(bundling, layers) == base  # deterministic
    assert layer_hash(bundling, layers, ["pydantic==2.14.4", "numpy==2.4.5"]) != base
    assert layer_hash(bundling, layers, [*PINS, "gremlinpython==3.7.4"]) != base
    assert layer_hash(bundling, layers, architecture="x86_64") != base


def test_a_changed_source_file_is_a_new_layer(bundling: Any, layers: Path) -> None:
    base = layer_hash(bundling, layers)
    scoring = layers / "agentmem" / "domain" / "scoring.py"
    scoring.write_text("def score(): return 2\n", encoding="utf-8")
    changed = layer_hash(bundling, layers)
    assert changed != base
    (layers / "agentmem" / "domain" / "new.py").write_text("", encoding="utf-8")
    assert layer_hash(bundling, layers) != changed
    (layers / "agentmem" / "domain" / "new.py").unlink()
    scoring.rename(layers / "agentmem" / "domain" / "renamed.py")  # same bytes, another module
    assert layer_hash(bundling, layers) not in (base, changed)


def test_what_is_not_shipped_changes_nothing(bundling: Any, layers: Path) -> None:
    base = layer_hash(bundling, layers)
    (layers / "agentmem_dev" / "cli.py").write_text("print('changed')\n", encoding="utf-8")
    cache = layers / "agentmem" / "domain" / "__pycache__"
    cache.mkdir()
    (cache / "scoring.cpython-312.pyc").write_bytes(b"\0" * 16)
    (layers / "agentmem.egg-info").mkdir()
    (layers / "agentmem.egg-info" / "PKG-INFO").write_text("x", encoding="utf-8")
    assert layer_hash(bundling, layers) == base


def test_requirement_comments_do_not_count(bundling: Any, tmp_path: Path) -> None:
    plain, commented = tmp_path / "a.txt", tmp_path / "b.txt"
    plain.write_text("pydantic==2.14.4\nnumpy==2.4.6\n", encoding="utf-8")
    commented.write_text("# the layer\npydantic==2.14.4  # models\n\nnumpy==2.4.6\n", encoding="utf-8")
    from agentmem_infra.layer_contents import read_requirements

    assert read_requirements(plain) == read_requirements(commented)


def _synth_keys(bundling: Any, layers: Path, requirements: list[str]) -> list[str]:
    """The S3 keys of a layer built by ``python_code`` (bundling itself skipped: no pip)."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_lambda as lambda_

    app = App(context={"aws:cdk:bundling-stacks": []})
    stack = Stack(app, "S")
    code = bundling.python_code(
        layers,
        requirements=requirements,
        package_dir="agentmem",
        site_dir="python",
        skip=False,
        exclude=bundling.DEV_PACKAGES,
    )
    lambda_.LayerVersion(stack, "Layer", code=code)
    template = app.synth().get_stack_by_name("S").template
    return [r["Properties"]["Content"]["S3Key"] for r in template["Resources"].values()]


def test_the_synthesized_layer_is_named_by_its_hash(bundling: Any, layers: Path) -> None:
    first = _synth_keys(bundling, layers, PINS)
    assert _synth_keys(bundling, layers, ["pydantic==2.14.4", "numpy==2.4.5"]) != first
    (layers / "agentmem" / "__init__.py").write_text("VERSION = 2\n", encoding="utf-8")
    assert _synth_keys(bundling, layers, PINS) != first


def test_the_real_layer_fingerprint_skips_the_dev_tooling(bundling: Any, tmp_path: Path) -> None:
    """Over the repository's own layers/: agentmem_dev is not part of the layer's name."""
    copy = tmp_path / "layers"
    shutil.copytree(
        REPO / "layers" / "agentmem", copy / "agentmem", ignore=shutil.ignore_patterns("__pycache__")
    )
    (copy / "agentmem_dev").mkdir()
    base = layer_hash(bundling, copy)
    (copy / "agentmem_dev" / "anything.py").write_text("x = 1\n", encoding="utf-8")
    assert layer_hash(bundling, copy) == base
    assert layer_hash(bundling, REPO / "layers") == base  # the checkout itself: same shipped bytes
