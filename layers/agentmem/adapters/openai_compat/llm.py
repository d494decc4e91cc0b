""":class:`~agentmem.ports.LLM` over an OpenAI-compatible ``POST /chat/completions`` (Ollama, vLLM,
llama.cpp's server, LM Studio, OpenAI, Azure OpenAI's v1 API, ...).

The same prompts and readers as Bedrock (:mod:`agentmem.adapters.llm_replies`). Structured
replies (``extract``, ``judge``) ask for ``response_format`` as the server allows it:

* ``json_schema`` (default): the reply's JSON Schema, ``strict``; a server that answers 400 to it
  is asked again at once with ``json_object``, and that mode is kept for the process;
* ``json_object``: JSON mode; a server that answers 400 to it is asked without, and that is kept;
* ``off``: no ``response_format``.

Whatever the mode, the reply is read strictly (:func:`~agentmem.adapters.llm_replies.read_extraction`
validates every fact) and a reply that does not read is asked again once with the reader's
complaint (``parse_retries``), then given up: None, the rules decide. A timeout, a refused
connection, a 429 whose ``Retry-After`` is longer than the turn should wait, a 5xx, an empty,
refused or truncated reply are None too, counted in :attr:`OpenAICompatLLM.usage` by reason.
The reply is untrusted text: the write path gates every fact as it gates the rules' facts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from agentmem.adapters.llm_replies import (
    MAX_PROMPT_CHARS,
    MAX_TOKENS,
    REPLY_SCHEMAS,
    ReplyUnusable,
    prompts,
    read_category,
    read_extraction,
    read_verdict,
)
from agentmem.adapters.openai_compat.transport import ProviderUnavailable, Transport
from agentmem.adapters.provider_usage import ProviderUsage
from agentmem.domain.llm_facts import LlmFact

log = logging.getLogger(__name__)
T = TypeVar("T")
JsonMode = Literal["json_schema", "json_object", "off"]
_WEAKER: dict[str, JsonMode] = {"json_schema": "json_object", "json_object": "off"}
_RETRY_NOTE = {
    "en": "Your reply could not be read ({reason}). Reply again with the JSON object only, as specified.",
    "zh": "无法读取你的回复（{reason}）。请按要求只输出 JSON 对象。",
}


class OpenAICompatLLM:
    """The write path's optional model helpers on a chat-completions server. Every method answers
    None when the server or its reply fails (see the module docstring)."""

    def __init__(
        self,
        transport: Transport,
        *,
        model: str,
        json_mode: JsonMode = "json_schema",
        parse_retries: int = 1,
    ) -> None:
        self._transport = transport
        self.model = model
        self._json_mode: JsonMode = json_mode
        self._parse_retries = max(0, parse_retries)
        self._lock = threading.Lock()
        self.usage = ProviderUsage(f"openai-compatible/{model}")

    @property
    def json_mode(self) -> JsonMode:
        """The structured-reply mode in use (weaker than configured once the server refused it)."""
        return self._json_mode

    def _fail(self, reason: str) -> None:
        self.usage.fail(reason)
        log.warning("openai_compat.llm_fallback", extra={"reason": reason, "model": self.model})

    def _body(self, task: str, messages: list[dict[str, str]], mode: JsonMode) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": MAX_TOKENS[task],
        }
        schema = REPLY_SCHEMAS.get(task)
        if schema is not None and mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"agentmem_{task}", "schema": schema, "strict": True},
            }
        elif schema is not None and mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _complete(self, task: str, messages: list[dict[str, str]]) -> str:
        """The reply's text. Raises ProviderUnavailable (server trouble) or ReplyUnusable (an
        empty, refused or truncated reply)."""
        while True:
            mode = self._json_mode
            self.usage.call()
            try:
                answer = self._transport.post("chat/completions", self._body(task, messages, mode))
                break
            except ProviderUnavailable as exc:
                weaker = _WEAKER.get(mode)
                if exc.status != 400 or task not in REPLY_SCHEMAS or weaker is None:
                    raise
                with self._lock:  # the server does not take this response_format: never ask again
                    if self._json_mode == mode:
                        self._json_mode = weaker
                log.warning("openai_compat.json_mode_refused", extra={"mode": mode, "model": self.model})
        usage = _mapping(answer.get("usage"))
        self.usage.tokens(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ReplyUnusable("malformed")
        message = _mapping(choices[0].get("message"))
        text = message.get("content")
        if message.get("refusal"):
            raise ReplyUnusable("refused")
        if not isinstance(text, str) or not text.strip():
            raise ReplyUnusable("empty")
        if choices[0].get("finish_reason") == "length":
            raise ReplyUnusable("truncated")
        return text

    def _answer(self, task: str, system: str, prompt: str, read: Callable[[str], T], lang: str) -> T | None:
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt[:MAX_PROMPT_CHARS]},
        ]
        for attempt in range(self._parse_retries + 1):
            try:
                reply = self._complete(task, messages)
                return read(reply)
            except ProviderUnavailable as exc:
                self._fail(exc.reason)
                return None
            except ReplyUnusable as exc:
                if (
                    exc.reason in ("empty", "refused", "truncated", "malformed")
                    or attempt == self._parse_retries
                ):
                    self._fail(exc.reason)
                    return None
                note = _RETRY_NOTE["zh" if lang.startswith("zh") else "en"].format(reason=exc.reason)
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": note},
                ]
        return None  # pragma: no cover - the loop always returns

    def extract(self, question: str, answer: str, lang: str) -> list[LlmFact] | None:
        """Query-anchored facts (see :func:`~agentmem.adapters.llm_replies.read_extraction`)."""
        p = prompts(lang)
        return self._answer(
            "extract",
            p["extract"],
            p["qa"].format(q=question, a=answer),
            lambda r: read_extraction(r, question),
            lang,
        )

    def classify(self, text: str, lang: str = "en") -> str | None:
        return self._answer("classify", prompts(lang)["classify"], text, read_category, lang)

    def judge_conflict(self, old: str, new: str, lang: str = "en") -> bool | None:
        p = prompts(lang)
        return self._answer("judge", p["judge"], p["pair"].format(old=old, new=new), read_verdict, lang)

    def summarise(self, facts: Sequence[str], lang: str = "en") -> str | None:
        """At most three sentences over the session's facts (None on failure or an empty reply);
        the caller guards the text before keeping it."""
        if not facts:
            return None
        reply = self._answer(
            "summarise", prompts(lang)["summarise"], "\n".join(f"- {f}" for f in facts), str.strip, lang
        )
        return reply or None


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
