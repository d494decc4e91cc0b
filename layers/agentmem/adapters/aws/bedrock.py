"""Bedrock: Titan Text Embeddings v2 as an :class:`~agentmem.ports.Embedder`, and the
``bedrock-runtime`` client it shares with :mod:`.bedrock_llm` (the Converse API for the
optional LLM steps of the write path).

:class:`BedrockEmbedder` sends one text per ``InvokeModel`` call (Titan v2 takes one
``inputText``), spread over a small thread pool; ``dimensions`` 256 / 512 / 1024 and
``normalize: true``. The model id recorded on memories is ``bedrock/<model>/<dimension>``, so
vectors of two dimensions never mix. Failures raise :class:`~agentmem.errors.EmbedderUnavailable`.

**Calibration**: ``agentmem calibrate --embedder bedrock``, run on an account with Bedrock
access, measures the anchors on the project's calibration pairs and prints them for
``AGENTMEM_BEDROCK_EMBED_CALIBRATION`` (the stack: ``-c agentmem:embedCalibration=…``). Without
it the anchors are :data:`PLACEHOLDER_CALIBRATION`, rough guesses for a normalised Titan v2 space
(this project had no Bedrock access), and the embedder says so in the log once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client
from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError, EmbedderUnavailable

log = logging.getLogger(__name__)

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS = (256, 512, 1024)
MAX_INPUT_CHARS = 8000  # Titan v2 accepts 8k tokens; memories are short facts anyway
# NOT MEASURED — placeholders until calibrated on Bedrock (see module docstring).
PLACEHOLDER_CALIBRATION = {
    "unrelated": 0.10,
    "paraphrase": 0.80,
    "query_unrelated": 0.05,
    "query_paraphrase": 0.70,
}


def bedrock_runtime_client(region: str | None) -> Any:
    """``bedrock-runtime`` with adaptive retries (client-side rate limiting on throttling)."""
    return boto_client(
        "bedrock-runtime", region=region, retries={"mode": "adaptive", "max_attempts": 5}, read_timeout=60
    )


class BedrockEmbedder:
    """:class:`agentmem.ports.Embedder` on Titan Text Embeddings v2."""

    def __init__(
        self,
        client: LazyClient[Any] | None = None,
        *,
        model: str = TITAN_V2,
        dimension: int = 1024,
        workers: int = 4,
        region: str | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        if dimension not in TITAN_DIMENSIONS:
            raise ConfigurationError(f"Titan v2 dimension must be one of {TITAN_DIMENSIONS}, not {dimension}")
        self._client = client or LazyClient(lambda: bedrock_runtime_client(region))
        self._model = model
        self._dimension = dimension
        self._workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._calibration = calibration
        if calibration is None:
            log.warning("bedrock.calibration_placeholder", extra={"model": self.model_id})

    @property
    def model_id(self) -> str:
        return f"bedrock/{self._model}/{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def calibration(self) -> Calibration:
        if self._calibration is not None:
            return self._calibration
        return Calibration(self.model_id, **PLACEHOLDER_CALIBRATION)

    def _embed_one(self, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(self._dimension, dtype=np.float32)
        body = {"inputText": text[:MAX_INPUT_CHARS], "dimensions": self._dimension, "normalize": True}
        try:
            response = self._client.get().invoke_model(
                modelId=self._model,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            payload = json.loads(response["body"].read())
        except (ClientError, BotoCoreError) as exc:
            code = (
                exc.response.get("Error", {}).get("Code", "")
                if isinstance(exc, ClientError)
                else type(exc).__name__
            )
            raise EmbedderUnavailable(
                f"bedrock embedding failed: {code}", details={"model": self._model, "code": code}
            ) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderUnavailable(
                "bedrock returned an unreadable embedding", details={"model": self._model}
            ) from exc
        vector = np.asarray(payload.get("embedding") or [], dtype=np.float32)
        if vector.shape != (self._dimension,) or not np.all(np.isfinite(vector)):
            raise EmbedderUnavailable(
                "bedrock returned an embedding of the wrong shape",
                details={"model": self._model, "expected": self._dimension, "got": int(vector.size)},
            )
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="bedrock-embed")
            return self._pool

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        if len(texts) == 1 or self._workers == 1:
            rows = [self._embed_one(t) for t in texts]
        else:
            rows = list(self._executor().map(self._embed_one, texts))
        return np.stack(rows).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed_one(text)
