"""Bedrock: Titan Text Embeddings v2 as an :class:`~agentmem.ports.Embedder`, and the Converse API
for the optional LLM steps of the write path (extraction, classification, conflict judgement).

:class:`BedrockEmbedder` sends one text per ``InvokeModel`` call (Titan v2 takes one
``inputText``), spread over a small thread pool; ``dimensions`` 256 / 512 / 1024 and
``normalize: true``. The model id recorded on memories is ``bedrock/<model>/<dimension>``, so
vectors of two dimensions never mix. Failures raise :class:`~agentmem.errors.EmbedderUnavailable`.

**Calibration**: ``agentmem calibrate --embedder bedrock``, run on an account with Bedrock
access, measures the anchors on the project's calibration pairs and prints them for
``AGENTMEM_BEDROCK_EMBED_CALIBRATION`` (the stack: ``-c agentmem:embedCalibration=…``). Without
it the anchors are :data:`PLACEHOLDER_CALIBRATION`, rough guesses for a normalised Titan v2 space
(this project had no Bedrock access), and the embedder says so in the log once.

:class:`BedrockLLM` answers ``extract`` / ``classify`` / ``judge_conflict`` through ``Converse``
(temperature 0, JSON-only replies validated with pydantic into
:class:`~agentmem.domain.llm_facts.LlmFact` objects, prompts in the language of the turn; the
prompts and readers are :mod:`agentmem.adapters.llm_replies`, shared with every provider).
The client retries throttling itself (botocore ``adaptive`` mode); whatever still fails — an SDK
error, an empty, truncated or malformed reply — returns None (the caller falls back to the
rules) and is counted in :attr:`BedrockLLM.failures`. A fact not anchored on the question is
left out of the answer.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.errors import LazyClient, boto_client
from agentmem.adapters.llm_replies import (
    MAX_PROMPT_CHARS,
    MAX_TOKENS,
    ReplyUnusable,
    prompts,
    read_category,
    read_extraction,
    read_verdict,
)
from agentmem.adapters.provider_usage import ProviderUsage
from agentmem.domain.llm_facts import LlmFact
from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError, EmbedderUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

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


# --------------------------------------------------------------------------- LLM


class BedrockLLM:
    """Converse-based helpers; every method returns None on failure (counted in ``failures``)."""

    def __init__(
        self,
        client: LazyClient[Any] | None = None,
        *,
        model: str = "amazon.nova-lite-v1:0",
        region: str | None = None,
    ) -> None:
        self._client = client or LazyClient(lambda: bedrock_runtime_client(region))
        self.model = model
        self.calls = 0
        self.failures = 0
        self.failure_reasons: Counter[str] = Counter()
        self.usage = ProviderUsage(f"bedrock/{model}")  # calls, tokens and failures (cost bench, health)
        self._lock = threading.Lock()

    def _fail(self, reason: str) -> None:
        with self._lock:
            self.failures += 1
            self.failure_reasons[reason] += 1
        self.usage.fail(reason)
        log.warning("bedrock.llm_fallback", extra={"reason": reason, "model": self.model})

    def _converse(self, system: str, prompt: str, max_tokens: int) -> str | None:
        with self._lock:
            self.calls += 1
        self.usage.call()
        try:
            response = self._client.get().converse(
                modelId=self.model,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": prompt[:MAX_PROMPT_CHARS]}]}],
                inferenceConfig={"maxTokens": max_tokens, "temperature": 0.0},
            )
        except ClientError as exc:
            self._fail(str(exc.response.get("Error", {}).get("Code", "ClientError")))
            return None
        except BotoCoreError as exc:
            self._fail(type(exc).__name__)
            return None
        tokens = response.get("usage") or {}
        self.usage.tokens(int(tokens.get("inputTokens") or 0), int(tokens.get("outputTokens") or 0))
        blocks = ((response.get("output") or {}).get("message") or {}).get("content") or []
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        if response.get("stopReason") == "max_tokens" or not text.strip():
            self._fail("truncated" if text.strip() else "empty")
            return None
        return text

    def _answer(self, task: str, system: str, prompt: str, read: Callable[[str], T]) -> T | None:
        reply = self._converse(system, prompt, MAX_TOKENS[task])
        if reply is None:
            return None
        try:
            return read(reply)
        except ReplyUnusable as exc:
            self._fail(exc.reason)
            return None

    def extract(self, question: str, answer: str, lang: str) -> list[LlmFact] | None:
        """Query-anchored facts: a fact is kept only if its key or content shares a term with the
        question. None when the model failed or replied with something unusable (one invalid
        fact makes the whole reply unusable)."""
        p = prompts(lang)
        return self._answer(
            "extract",
            p["extract"],
            p["qa"].format(q=question, a=answer),
            lambda r: read_extraction(r, question),
        )

    def classify(self, text: str, lang: str = "en") -> str | None:
        return self._answer("classify", prompts(lang)["classify"], text, read_category)

    def judge_conflict(self, old: str, new: str, lang: str = "en") -> bool | None:
        p = prompts(lang)
        return self._answer("judge", p["judge"], p["pair"].format(old=old, new=new), read_verdict)

    def summarise(self, facts: Sequence[str], lang: str = "en") -> str | None:
        """At most three sentences over the session's facts (None on failure or an empty reply)."""
        if not facts:
            return None
        reply = self._converse(
            prompts(lang)["summarise"], "\n".join(f"- {f}" for f in facts), MAX_TOKENS["summarise"]
        )
        return reply.strip() if reply is not None else None
