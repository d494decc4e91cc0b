"""The model providers, by setting: which LLM (``AGENTMEM_LLM``) and which embedder
(``AGENTMEM_EMBEDDER``) a backend's wiring builds. Both backends ask here, so a provider is one
entry in :data:`LLM_PROVIDERS` (or one branch of :func:`build_embedder_for`) whatever the store.

The OpenAI-compatible key comes from ``AGENTMEM_OPENAI_API_KEY``, or on AWS from Secrets Manager
(``AGENTMEM_OPENAI_API_KEY_SECRET_ARN``: the secret's string, or the ``api_key`` field of a JSON
secret), read on the first request and kept for the process.

An OpenAI-compatible embedder must be calibrated (:mod:`agentmem_dev.calibrate`): its anchors
come from ``AGENTMEM_OPENAI_EMBED_CALIBRATION``, else from ``<data_dir>/calibrations.json``
(written by ``agentmem calibrate --store``); without either the process refuses to start, because
every threshold (dedup, the conflict band, the semantic guard, recall's floor) is read on the
calibrated scale and a guess would merge or miss memories silently.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError

if TYPE_CHECKING:
    from agentmem.adapters.openai_compat import OpenAICompatEmbedder, Transport
    from agentmem.ports import LLM, Embedder
    from agentmem.settings import Settings

CALIBRATIONS_FILE = "calibrations.json"


class SecretKey:
    """The API key kept in Secrets Manager under ``arn``, read once on first use."""

    def __init__(self, arn: str, region: str | None, client: Any = None) -> None:
        self._arn = arn
        self._region = region
        self._client = client
        self._value: str | None = None
        self._lock = threading.Lock()

    def __call__(self) -> str | None:
        with self._lock:
            if self._value is None:
                self._value = self._read()
            return self._value

    def _read(self) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        from agentmem.adapters.aws.errors import boto_client

        client = self._client or boto_client("secretsmanager", region=self._region)
        try:
            secret = str(client.get_secret_value(SecretId=self._arn).get("SecretString") or "")
        except (ClientError, BotoCoreError) as exc:
            raise ConfigurationError(
                "the model server's key could not be read from Secrets Manager",
                details={"setting": "AGENTMEM_OPENAI_API_KEY_SECRET_ARN", "error": type(exc).__name__},
            ) from exc
        if secret.lstrip().startswith("{"):
            try:
                secret = str(json.loads(secret).get("api_key") or "")
            except (ValueError, AttributeError):
                secret = ""
        if not secret:
            raise ConfigurationError(
                "the Secrets Manager secret holds no key (a string, or JSON with an api_key field)",
                details={"setting": "AGENTMEM_OPENAI_API_KEY_SECRET_ARN"},
            )
        return secret


def api_key(settings: Settings, secrets_client: Any = None) -> Callable[[], str | None]:
    """Where the OpenAI-compatible key comes from: the setting, the secret, or none (a local server)."""
    if settings.openai_api_key is not None:
        value = settings.openai_api_key.get_secret_value()
        return lambda: value
    if settings.openai_api_key_secret_arn:
        return SecretKey(settings.openai_api_key_secret_arn, settings.aws_region, secrets_client)
    return lambda: None


def transport(settings: Settings, *, embeddings: bool = False, secrets_client: Any = None) -> Transport:
    from agentmem.adapters.openai_compat import Transport

    base = (settings.openai_embed_base_url if embeddings else None) or settings.openai_base_url
    if not base:
        raise ConfigurationError(
            "AGENTMEM_OPENAI_BASE_URL is not set", details={"setting": "AGENTMEM_OPENAI_BASE_URL"}
        )
    return Transport(
        base_url=base,
        api_key=api_key(settings, secrets_client),
        auth=settings.openai_auth,
        timeout_s=settings.openai_timeout_s,
        retry_after_max_s=settings.openai_retry_after_max_s,
    )


def _bedrock_llm(settings: Settings) -> LLM:
    from agentmem.adapters.aws.bedrock_llm import BedrockLLM

    return BedrockLLM(model=settings.bedrock_llm_model, region=settings.aws_region)


def _openai_llm(settings: Settings) -> LLM:
    from agentmem.adapters.openai_compat import OpenAICompatLLM

    assert settings.openai_llm_model  # the settings refuse to load without it
    return OpenAICompatLLM(
        transport(settings), model=settings.openai_llm_model, json_mode=settings.openai_json_mode
    )


# AGENTMEM_LLM -> its builder ("off" builds none)
LLM_PROVIDERS: Mapping[str, Callable[[Settings], LLM]] = {
    "bedrock": _bedrock_llm,
    "openai-compatible": _openai_llm,
}


def build_llm(settings: Settings) -> LLM | None:
    """The configured LLM, or None (``AGENTMEM_LLM=off``: the rules alone)."""
    provider = settings.llm_provider()
    return None if provider == "off" else LLM_PROVIDERS[provider](settings)


def stored_calibration(data_dir: Path, model_id: str) -> Calibration | None:
    """The anchors ``agentmem calibrate --store`` wrote for ``model_id`` under ``data_dir``."""
    path = data_dir / CALIBRATIONS_FILE
    try:
        stored = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ConfigurationError(f"{path} is not valid JSON") from exc
    text = stored.get(model_id) if isinstance(stored, dict) else None
    if not isinstance(text, str):
        return None
    try:
        return Calibration.parse(model_id, text)
    except ValueError as exc:
        raise ConfigurationError(f"{path}: the anchors of {model_id} do not read: {exc}") from exc


def store_calibration(data_dir: Path, calibration: Calibration) -> Path:
    """Keep ``calibration`` in ``<data_dir>/calibrations.json`` (other models' anchors kept; the
    file replaced atomically)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / CALIBRATIONS_FILE
    try:
        stored = json.loads(path.read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        stored = {}
    stored[calibration.model_id] = calibration.text()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n", "utf-8")
    tmp.replace(path)
    return path


def openai_embedder(settings: Settings, *, calibrated: bool = True) -> OpenAICompatEmbedder:
    """The OpenAI-compatible embedder; ``calibrated`` (the default) refuses a model without anchors."""
    from agentmem.adapters.openai_compat import OpenAICompatEmbedder

    assert settings.openai_embed_model  # the settings refuse to load without it
    embedder = OpenAICompatEmbedder(
        transport(settings, embeddings=True),
        model=settings.openai_embed_model,
        dimension=settings.openai_embed_dimension,
        batch=settings.openai_embed_batch,
        query_prefix=settings.openai_embed_query_prefix,
        document_prefix=settings.openai_embed_document_prefix,
    )
    if not calibrated:
        return embedder
    model_id = embedder.model_id
    if settings.openai_embed_calibration:
        calibration: Calibration | None = Calibration.parse(model_id, settings.openai_embed_calibration)
    else:
        calibration = stored_calibration(settings.data_dir, model_id) if settings.backend == "local" else None
    if calibration is None:
        raise ConfigurationError(
            f"the embedder {model_id} is not calibrated, so no similarity threshold means anything for it: "
            "run `agentmem calibrate --embedder openai-compatible --store` (or set AGENTMEM_OPENAI_EMBED_CALIBRATION "
            "to the anchors it prints)",
            details={"setting": "AGENTMEM_OPENAI_EMBED_CALIBRATION", "model": model_id},
        )
    return embedder.with_calibration(calibration)


def build_embedder_for(settings: Settings) -> Embedder | None:
    """The provider's embedder when ``AGENTMEM_EMBEDDER`` names a remote one, else None (the
    backend builds its own: the shipped models, Bedrock)."""
    if settings.embedder == "openai-compatible":
        return openai_embedder(settings)
    return None
