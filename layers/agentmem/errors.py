"""One exception hierarchy. HTTP status comes from the type (see ``agentmem.api.errors``)."""

from __future__ import annotations


class AgentMemError(Exception):
    """Base of every error this project raises on purpose."""

    code = "internal_error"

    def __init__(self, message: str, *, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class ValidationFailed(AgentMemError):
    """Input is malformed or violates a rule; the caller must change it."""

    code = "invalid_request"


class Unauthorized(AgentMemError):
    """No principal, or the principal may not act on the named scope."""

    code = "unauthorized"


class Forbidden(AgentMemError):
    """The principal is known but may not perform this operation."""

    code = "forbidden"


class NotFound(AgentMemError):
    """The addressed record does not exist in the caller's scope."""

    code = "not_found"


class VersionConflict(AgentMemError):
    """An optimistic-concurrency check failed: someone else changed the record first."""

    code = "version_conflict"


class IdempotencyKeyReused(AgentMemError):
    """An ``Idempotency-Key`` already stands for another request (another body, path or method)."""

    code = "idempotency_key_reused"


class QueueFull(AgentMemError):
    """The write-back queue is at capacity; the work was refused and counted, not dropped silently."""

    code = "queue_full"


class StoreUnavailable(AgentMemError):
    """A backing store (source of truth or a projection) could not be reached."""

    code = "store_unavailable"


class EmbedderUnavailable(AgentMemError):
    """The embedding model could not produce vectors."""

    code = "embedder_unavailable"


class ConfigurationError(AgentMemError):
    """Settings are invalid; the process refuses to start."""

    code = "configuration_error"
