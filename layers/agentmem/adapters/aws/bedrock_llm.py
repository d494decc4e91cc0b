"""Bedrock's Converse API as the optional :class:`~agentmem.ports.LLM` of the write path
(extraction, classification, conflict judgement, session summaries).

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

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.bedrock import bedrock_runtime_client
from agentmem.adapters.aws.errors import LazyClient
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

log = logging.getLogger(__name__)
T = TypeVar("T")


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
        self.usage = ProviderUsage(f"bedrock/{model}")  # calls, tokens and failures (cost bench, health)

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def failures(self) -> int:
        return self.usage.failures

    @property
    def failure_reasons(self) -> Counter[str]:
        return self.usage.failure_reasons

    def _fail(self, reason: str) -> None:
        self.usage.fail(reason)
        log.warning("bedrock.llm_fallback", extra={"reason": reason, "model": self.model})

    def _converse(self, system: str, prompt: str, max_tokens: int) -> str | None:
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
