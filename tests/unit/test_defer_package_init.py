"""agentmem.coldstart.defer_package_init: a package whose ``__init__`` only re-exports is registered
without running it; each name it re-exports is imported from its own submodule on first use (the
same object), a submodule imports as usual, any other name runs the whole ``__init__``; a package
whose ``__init__`` does more, or that is imported already, is left alone."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmem.coldstart import _reexports, defer_package_init

_names = itertools.count()

REEXPORTING_INIT = '''
"""A package that only re-exports."""

from __future__ import annotations

from .greet import Greeting, hello as say_hello
from .heavy import Heavy

__all__ = ["Greeting", "say_hello", "Heavy"]
'''
SUBMODULES = {
    # each submodule records that it ran, so a test sees what was imported
    "greet.py": "import builtins\nbuiltins._deferred_log.append('greet')\n"
    "class Greeting:\n    text = 'hello / 你好'\n\ndef hello(name):\n    return f'hello {name} / 你好 {name}'\n",
    "heavy.py": "import builtins\nbuiltins._deferred_log.append('heavy')\nclass Heavy:\n    pass\n",
    "extra.py": "import builtins\nbuiltins._deferred_log.append('extra')\nVALUE = '额外 extra'\n",
}


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    import builtins

    entries: list[str] = []
    monkeypatch.setattr(builtins, "_deferred_log", entries, raising=False)
    yield entries


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, init: str) -> str:
    name = f"deferred_pkg_{next(_names)}"
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text(textwrap.dedent(init), encoding="utf-8")
    for file, source in SUBMODULES.items():
        (folder / file).write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return name


@pytest.fixture(autouse=True)
def _forget_packages() -> Iterator[None]:
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("deferred_pkg_"):
            del sys.modules[name]


def test_a_reexporting_package_imports_a_submodule_only_when_its_name_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str]
) -> None:
    name = _package(tmp_path, monkeypatch, REEXPORTING_INIT)
    assert defer_package_init(name) is True
    assert log == []  # nothing ran yet
    greet = importlib.import_module(f"{name}.greet")
    assert log == ["greet"]  # the submodule alone: the __init__ (and heavy) did not run
    package = sys.modules[name]
    assert package.say_hello is greet.hello  # the alias, bound to the same object
    assert package.say_hello("小明") == "hello 小明 / 你好 小明"
    assert log == ["greet"]
    namespace: dict[str, object] = {}
    exec(f"from {name} import Greeting", namespace)  # what `from package import X` does
    assert namespace["Greeting"] is greet.Greeting and log == ["greet"]
    assert package.Heavy.__module__ == f"{name}.heavy" and log == ["greet", "heavy"]


def test_a_submodule_not_reexported_imports_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str]
) -> None:
    name = _package(tmp_path, monkeypatch, REEXPORTING_INIT)
    defer_package_init(name)
    namespace: dict[str, object] = {}
    exec(f"from {name} import extra", namespace)
    assert namespace["extra"].VALUE == "额外 extra"  # type: ignore[attr-defined]
    assert log == ["extra"]


def test_any_other_name_runs_the_whole_init_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str]
) -> None:
    name = _package(tmp_path, monkeypatch, REEXPORTING_INIT)
    defer_package_init(name)
    package = sys.modules[name]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = package.missing
    assert sorted(log) == ["greet", "heavy"]  # the __init__ ran: everything it imports is there
    assert package.__doc__ == "A package that only re-exports."
    assert "__getattr__" not in vars(package)


def test_a_star_import_gives_every_exported_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str]
) -> None:
    name = _package(tmp_path, monkeypatch, REEXPORTING_INIT)
    defer_package_init(name)
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    assert {"Greeting", "say_hello", "Heavy"} <= set(namespace)


@pytest.mark.parametrize(
    "init",
    [
        "from .greet import hello\nSETTING = hello('x')\n",  # code that runs: not only re-exports
        "from .greet import *\n",  # the names are not known without running it
        "import os\nfrom .greet import hello\n",
        "from .greet import hello\n__all__ = sorted(['hello'])\n",  # __all__ not a literal
    ],
)
def test_an_init_that_does_more_than_reexport_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str], init: str
) -> None:
    name = _package(tmp_path, monkeypatch, init)
    assert defer_package_init(name) is False
    assert name not in sys.modules
    assert importlib.import_module(name).hello("y") == "hello y / 你好 y"


def test_an_imported_package_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: list[str]
) -> None:
    name = _package(tmp_path, monkeypatch, REEXPORTING_INIT)
    module = importlib.import_module(name)
    assert defer_package_init(name) is False
    assert sys.modules[name] is module


def test_the_reexports_of_powertools_packages_are_read_from_their_source() -> None:
    """The two packages the api defers still only re-export (a Powertools upgrade that changes
    that turns the deferral off, which this notices)."""
    for package, name, module in [
        ("aws_lambda_powertools.event_handler", "APIGatewayRestResolver", "api_gateway"),
        ("aws_lambda_powertools.utilities.data_classes", "SQSEvent", "sqs_event"),
    ]:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        found = _reexports(Path(spec.origin).read_text(encoding="utf-8"), package)
        assert found is not None, package
        names, exported = found
        assert names[name] == (f"{package}.{module}", name)
        assert exported is not None and name in exported
