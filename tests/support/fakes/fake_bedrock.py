"""An in-process ``bedrock-runtime`` that answers ``InvokeModel`` for Titan Text Embeddings v2 as
the service does: it validates the request body (``inputText`` non-empty and at most 50,000
characters, ``dimensions`` 256 / 512 / 1024, ``normalize``), raises ``ValidationException`` like
botocore would, and returns ``{"embedding": [...], "inputTextTokenCount": n}`` in a streaming body.

Vectors are deterministic and never zero: hashed n-grams (so related texts are near) plus a small
text-seeded component, normalised when the request asks for it. Not semantic; enough to check
what the :class:`~agentmem.adapters.aws.bedrock.BedrockEmbedder` does with the answer.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from typing import Any

import numpy as np
from botocore.exceptions import ClientError
from botocore.response import StreamingBody

from agentmem.adapters.embedders import HashEmbedder

TITAN_V2 = "amazon.titan-embed-text-v2:0"
DIMENSIONS = (256, 512, 1024)
MAX_INPUT_CHARS = 50_000


def _invalid(message: str) -> ClientError:
    return ClientError({"Error": {"Code": "ValidationException", "Message": message}}, "InvokeModel")


class FakeTitan:
    """The ``invoke_model`` of a bedrock-runtime client, for Titan v2 only."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def invoke_model(self, *, modelId: str, body: str, contentType: str, accept: str) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
        if modelId != TITAN_V2:
            raise ClientError(
                {"Error": {"Code": "ResourceNotFoundException", "Message": modelId}}, "InvokeModel"
            )
        if contentType != "application/json" or accept != "application/json":
            raise _invalid("contentType and accept must be application/json")
        request = json.loads(body)
        unknown = set(request) - {"inputText", "dimensions", "normalize", "embeddingTypes"}
        if unknown:
            raise _invalid(f"extraneous key(s) {sorted(unknown)} are not permitted")
        text = request.get("inputText")
        if not isinstance(text, str) or not text or len(text) > MAX_INPUT_CHARS:
            raise _invalid("inputText must be 1 to 50000 characters")
        dimension = request.get("dimensions", 1024)
        if dimension not in DIMENSIONS:
            raise _invalid(f"dimensions must be one of {DIMENSIONS}")
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        noise = np.random.default_rng(seed).normal(size=dimension).astype(np.float32)
        vector = HashEmbedder(dimension).embed_query(text) + 0.05 * noise / np.linalg.norm(noise)
        # Titan's raw vectors are not unit length; normalize=true makes them so.
        scale = 1 / np.linalg.norm(vector) if request.get("normalize", True) else 7.5
        vector = vector * scale
        payload = json.dumps(
            {"embedding": [float(x) for x in vector], "inputTextTokenCount": len(text.split())}
        ).encode("utf-8")
        return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}
