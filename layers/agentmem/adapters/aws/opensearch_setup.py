"""Deploy-time OpenSearch setup: the index template and the index, once per deploy.

A deployed stack runs :func:`apply` from a CloudFormation custom resource (``infra_cdk/lambdas/index_setup``)
on Create and Update, instead of every new Lambda container putting the template on its first
request. Each step is idempotent, so a rerun (a retried deploy, a rollback's Update with the old
properties) changes nothing that is already right:

1. ``PUT _index_template/<index>``: the adapter's mapping and settings
   (:func:`agentmem.adapters.aws.opensearch_dsl.index_template`) with this environment's
   ``number_of_replicas``, for ``<index>`` and its rebuilds ``<index>-*``;
2. ``PUT <index>`` when it is absent (a concurrent create is tolerated);
3. for an existing index: the fields added to the mapping since it was made
   (:data:`~agentmem.adapters.aws.opensearch_dsl.ADDED_FIELDS`) are put (``PUT <index>/_mapping``),
   ``number_of_replicas`` (a dynamic setting) is brought to the requested value, and an index
   whose ``embedding`` has another dimension fails the deploy with
   :class:`~agentmem.errors.ConfigurationError`: that needs a new index name, not an update.

Transient answers (403 while fine-grained access control maps the role, 429, 5xx, connection
errors) are retried with jittered backoff for a bounded number of attempts; anything else, or the
last attempt, leaves as :class:`~agentmem.errors.StoreUnavailable`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from agentmem.adapters.aws import opensearch_dsl as dsl
from agentmem.errors import ConfigurationError, StoreUnavailable
from agentmem.settings import Settings

log = logging.getLogger(__name__)
R = TypeVar("R")

ATTEMPTS = 6
BASE_DELAY_S = 2.0
MAX_DELAY_S = 30.0
# 403: a freshly mapped backend role takes a moment to reach every node (FGAC); the rest are
# the service saying "not now". "N/A" is opensearch-py's status for connection errors/timeouts.
RETRIED_STATUSES = frozenset({403, 429, 500, 502, 503, 504, "N/A"})


@dataclass(frozen=True)
class IndexSpec:
    """What the deploy asks for: the index name, the embedding dimension, the replicas."""

    index: str
    dimension: int
    replicas: int

    def __post_init__(self) -> None:
        if not self.index or self.index != self.index.lower():
            raise ConfigurationError(f"invalid OpenSearch index name {self.index!r}")
        if self.dimension < 1:
            raise ConfigurationError(f"invalid embedding dimension {self.dimension}")
        if self.replicas < 0:
            raise ConfigurationError(f"invalid number_of_replicas {self.replicas}")


@dataclass(frozen=True)
class SetupResult:
    """What :func:`apply` did: the index was created, or its replicas were changed."""

    index: str
    created: bool
    replicas_changed: bool
    template_hash: str


def _with_replicas(settings: dict[str, Any], replicas: int) -> dict[str, Any]:
    settings = copy.deepcopy(settings)
    settings.setdefault("index", {})["number_of_replicas"] = replicas
    return settings


def index_template(spec: IndexSpec) -> dict[str, Any]:
    """``PUT _index_template/<index>`` body: the adapter's template with ``spec.replicas``."""
    body = copy.deepcopy(dsl.index_template(spec.index, spec.dimension))
    body["template"]["settings"] = _with_replicas(body["template"]["settings"], spec.replicas)
    return body


def index_body(spec: IndexSpec) -> dict[str, Any]:
    """``PUT <index>`` body: the adapter's settings and mappings with ``spec.replicas``."""
    body = copy.deepcopy(dsl.index_body(spec.dimension))
    body["settings"] = _with_replicas(body["settings"], spec.replicas)
    return body


def template_hash(spec: IndexSpec) -> str:
    """A digest of what :func:`apply` puts: the stack passes it to the custom resource so that
    a change to the mapping, the settings or the replicas is an Update (and only that is)."""
    canonical = json.dumps({"template": index_template(spec), "index": index_body(spec)}, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _status(exc: Exception) -> object:
    return getattr(exc, "status_code", None)


def _retrying(
    operation: str,
    fn: Callable[[], R],
    *,
    sleep: Callable[[float], None],
    attempts: int = ATTEMPTS,
    rng: random.Random | None = None,
) -> R:
    """``fn()``, retried on the transient statuses with full-jitter backoff."""
    from opensearchpy.exceptions import ImproperlyConfigured, OpenSearchException

    rng = rng or random.Random()
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except ImproperlyConfigured as exc:
            raise ConfigurationError(f"opensearch client misconfigured: {exc}") from exc
        except OpenSearchException as exc:
            status = _status(exc)
            if status not in RETRIED_STATUSES or attempt == attempts:
                raise StoreUnavailable(
                    f"opensearch setup failed during {operation}: {type(exc).__name__}",
                    details={"store": "opensearch", "operation": operation, "status": str(status)},
                ) from exc
            delay = rng.uniform(0, min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (attempt - 1)))
            log.warning(
                "opensearch setup retry",
                extra={"operation": operation, "status": str(status), "attempt": attempt},
            )
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _stored_dimension(mapping: dict[str, Any], index: str) -> int | None:
    for body in mapping.values():  # keyed by the concrete index name (an alias resolves to it)
        embedding = body.get("mappings", {}).get("properties", {}).get("embedding", {})
        if "dimension" in embedding:
            return int(embedding["dimension"])
    return None


def _stored_replicas(settings: dict[str, Any]) -> int | None:
    for body in settings.values():
        value = body.get("settings", {}).get("index", {}).get("number_of_replicas")
        if value is not None:
            return int(value)
    return None


def apply(client: Any, spec: IndexSpec, *, sleep: Callable[[float], None] = time.sleep) -> SetupResult:
    """Put the template, create the index or align its replicas (idempotent; see the module)."""
    from opensearchpy.exceptions import RequestError

    indices = client.indices
    _retrying(
        "put_index_template",
        lambda: indices.put_index_template(name=spec.index, body=index_template(spec)),
        sleep=sleep,
    )
    created = False
    if not _retrying("exists", lambda: bool(indices.exists(index=spec.index)), sleep=sleep):

        def create() -> bool:
            try:
                indices.create(index=spec.index, body=index_body(spec))
            except RequestError as exc:  # 400: created meanwhile by a cold-starting function
                if "resource_already_exists" not in str(exc.error):
                    raise
                return False
            return True

        created = _retrying("create", create, sleep=sleep)
    replicas_changed = False
    if not created:
        mapping = _retrying("get_mapping", lambda: indices.get_mapping(index=spec.index), sleep=sleep)
        stored = _stored_dimension(mapping, spec.index)
        if stored is not None and stored != spec.dimension:
            raise ConfigurationError(
                f"index {spec.index} holds {stored}-dimensional embeddings, the stack asks for"
                f" {spec.dimension}: deploy with a new AGENTMEM_OPENSEARCH_INDEX (the reconciler"
                " re-projects it from DynamoDB)",
                details={"index": spec.index, "stored": stored, "requested": spec.dimension},
            )
        if missing := dsl.missing_fields(mapping.get(spec.index) or {}):
            _retrying("put_mapping", lambda: indices.put_mapping(index=spec.index, body=missing), sleep=sleep)
        settings = _retrying("get_settings", lambda: indices.get_settings(index=spec.index), sleep=sleep)
        if _stored_replicas(settings) != spec.replicas:
            _retrying(
                "put_settings",
                lambda: indices.put_settings(
                    index=spec.index, body={"index": {"number_of_replicas": spec.replicas}}
                ),
                sleep=sleep,
            )
            replicas_changed = True
    log.info(
        "opensearch index ready",
        extra={"index": spec.index, "index_created": created, "replicas_changed": replicas_changed},
    )
    return SetupResult(spec.index, created, replicas_changed, template_hash(spec))


def spec_from_properties(properties: dict[str, Any]) -> IndexSpec:
    """The custom resource's ``ResourceProperties`` (CloudFormation passes numbers as strings)."""
    try:
        return IndexSpec(
            index=str(properties["Index"]),
            dimension=int(properties["Dimension"]),
            replicas=int(properties["Replicas"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"invalid index setup properties: {exc!r}") from exc


def client_from_settings(settings: Settings) -> Any:
    """The SigV4 client of ``AGENTMEM_OPENSEARCH_ENDPOINT`` (built here, used by :func:`apply`)."""
    from agentmem.adapters.aws.opensearch_client import build_client

    if not settings.opensearch_endpoint:
        raise ConfigurationError(
            "AGENTMEM_OPENSEARCH_ENDPOINT is required for the index setup",
            details={"setting": "AGENTMEM_OPENSEARCH_ENDPOINT"},
        )
    return build_client(
        settings.opensearch_endpoint, region=settings.aws_region, service=settings.opensearch_service
    )
