"""Write-time guards: normalisation, PII/secret redaction and prompt-injection detection.

Everything here is pure (no I/O, environment, clock or logging) and bilingual (Chinese and English).
Both guards judge :func:`normalize_for_scan` output (a view; redaction cuts its findings out of the
text as written, :func:`~agentmem.domain.guards.normalize.scan_view`); see each module for its rules.
"""

from __future__ import annotations

from agentmem.domain.guards.injection import InjectionVerdict, detect_injection
from agentmem.domain.guards.normalize import normalize_for_scan
from agentmem.domain.guards.pii import PiiFinding, RedactionResult, redact

__all__ = [
    "InjectionVerdict",
    "PiiFinding",
    "RedactionResult",
    "detect_injection",
    "normalize_for_scan",
    "redact",
]
