""":class:`~agentmem.ports.Embedder` over an OpenAI-compatible ``POST /embeddings``.

Texts go in batches of ``batch`` inputs per request (the answer's rows are put back in order by
their ``index``). The vectors have the server's dimension: ``dimension`` given, it is sent as
``dimensions`` (models that can shorten their vectors: OpenAI's ``text-embedding-3-*``) and every
answer is checked against it; not given, the first answer sets it (a one-text probe when the
dimension is asked before any embedding) and every later answer must match. Vectors are
L2-normalised here; a blank text is a zero vector and is not sent.

The model id recorded on memories is ``openai-compatible/<model>`` (``/<dimension>`` when one is
configured), so a change of model never mixes vectors: memories of the old model are re-embedded by
``agentmem reindex``. The calibration (raw cosines of unrelated text and of a paraphrase) must be
measured once per model (``agentmem calibrate --embedder openai-compatible``); the wiring refuses
to start an uncalibrated model (:mod:`agentmem.adapters.providers`).

Any server trouble (timeout, unreachable, 429 beyond its wait, 5xx, a malformed answer, a row of
the wrong size) raises :class:`~agentmem.errors.EmbedderUnavailable`: recall answers without the
vectors and says ``degraded: ["embedder"]``; a turn is retried by the queue.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentmem.adapters.openai_compat.transport import ProviderUnavailable, Transport
from agentmem.adapters.provider_usage import ProviderUsage
from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError, EmbedderUnavailable

MAX_INPUT_CHARS = 8000


class OpenAICompatEmbedder:
    """Batched embeddings from an OpenAI-compatible server."""

    def __init__(
        self,
        transport: Transport,
        *,
        model: str,
        dimension: int | None = None,
        batch: int = 64,
        calibration: Calibration | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        if dimension is not None and dimension < 1:
            raise ConfigurationError("the embedding dimension must be positive")
        self._transport = transport
        self._model = model
        self._configured = dimension
        self._dimension = dimension
        self._batch = max(1, batch)
        self._calibration = calibration
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._lock = threading.Lock()
        self.usage = ProviderUsage(self.model_id)

    @property
    def model_id(self) -> str:
        suffix = f"/{self._configured}" if self._configured else ""
        return f"openai-compatible/{self._model}{suffix}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._embed_batch(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    @property
    def calibration(self) -> Calibration:
        if self._calibration is None:
            raise ConfigurationError(
                f"{self.model_id} is not calibrated: run agentmem calibrate --embedder openai-compatible",
                details={"setting": "AGENTMEM_OPENAI_EMBED_CALIBRATION"},
            )
        return self._calibration

    def with_calibration(self, calibration: Calibration) -> OpenAICompatEmbedder:
        """This embedder with ``calibration`` (what ``agentmem calibrate`` measured)."""
        self._calibration = calibration
        return self

    def _request(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self._model, "input": texts, "encoding_format": "float"}
        if self._configured:
            body["dimensions"] = self._configured
        self.usage.call()
        try:
            return self._transport.post("embeddings", body)
        except ProviderUnavailable as exc:
            self.usage.fail(exc.reason)
            raise EmbedderUnavailable(
                f"embedding server: {exc.reason}", details={"model": self._model, "reason": exc.reason}
            ) from exc

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        answer = self._request(texts)
        usage = answer.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self.usage.tokens(usage["prompt_tokens"], 0)
        rows = answer.get("data")
        if not isinstance(rows, list) or len(rows) != len(texts):
            self.usage.fail("malformed")
            raise EmbedderUnavailable(
                "embedding server answered the wrong number of rows",
                details={"model": self._model, "expected": len(texts)},
            )
        ordered: list[Any] = [None] * len(texts)
        for position, row in enumerate(rows):
            index = row.get("index", position) if isinstance(row, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(texts) or ordered[index] is not None:
                self.usage.fail("malformed")
                raise EmbedderUnavailable(
                    "embedding server answered rows out of order", details={"model": self._model}
                )
            ordered[index] = row.get("embedding")
        try:
            matrix = np.asarray(ordered, dtype=np.float32)
        except (TypeError, ValueError):
            self.usage.fail("malformed")
            raise EmbedderUnavailable(
                "embedding server answered ragged rows", details={"model": self._model}
            ) from None
        with self._lock:
            if self._dimension is None and matrix.ndim == 2 and matrix.shape[1] > 0:
                self._dimension = int(matrix.shape[1])
            expected = self._dimension
        if matrix.ndim != 2 or matrix.shape[1] != expected or not np.all(np.isfinite(matrix)):
            self.usage.fail("wrong_shape")
            raise EmbedderUnavailable(
                "embedding server answered vectors of the wrong shape",
                details={"model": self._model, "expected": expected, "got": list(matrix.shape)},
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalised: np.ndarray = (matrix / norms).astype(np.float32)
        return normalised

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        sent = [i for i, t in enumerate(texts) if t.strip()]
        parts = [
            self._embed_batch(
                [prefix + texts[i][:MAX_INPUT_CHARS] for i in sent[start : start + self._batch]]
            )
            for start in range(0, len(sent), self._batch)
        ]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if parts:
            out[sent] = np.vstack(parts)
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._embed(texts, self._document_prefix)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text], self._query_prefix)[0]
        return vector

    def requests_for(self, count: int) -> int:
        """How many requests ``count`` texts take (the cost bench's estimate)."""
        return math.ceil(count / self._batch) if count else 0
