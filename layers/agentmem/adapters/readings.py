"""What a store or index keeps of the attribute rules' reading of a memory, and the fingerprint
that says which rules made it.

The rules (:mod:`agentmem.domain.attributes` and the modules it runs) change between releases. A
reading kept in a row or an index document is a cache of a pure function of the memory's
content, valid only for the rules that made it: each kept reading carries
:func:`rules_fingerprint`, and a reading made by other rules (a document projected before an
upgrade) is ignored: the caller falls back to the memory itself.

The search index's reading (:func:`reading_doc` / :func:`parse_reading`) is what the write path's
neighbour pool needs to skip a neighbour without reading it from the store: the attribute keys of
its content (:func:`~agentmem.domain.conflict.attribute_keys`) and whether it is pinned. Both
the embedded index and OpenSearch keep it as ``[fingerprint, keys, pinned]``.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentmem.domain import attribute_rules, attributes, conflict, text
from agentmem.domain.conflict import attribute_keys
from agentmem.domain.models import MemoryRecord
from agentmem.port_types import Reading


@lru_cache(maxsize=1)
def rules_fingerprint() -> str:
    """A digest of the source of the modules a reading runs (any change to them changes it); ""
    when a source cannot be read (no reading is kept then)."""
    digest = hashlib.sha256()
    try:
        for module in (attributes, attribute_rules, text, conflict):
            digest.update(Path(str(module.__file__)).read_bytes())
    except (OSError, TypeError):
        return ""
    return digest.hexdigest()[:16]


def reading_doc(record: MemoryRecord) -> list[Any] | None:
    """The stored form of ``record``'s reading, or None when no fingerprint can be made."""
    fingerprint = rules_fingerprint()
    if not fingerprint:
        return None
    return [fingerprint, sorted(attribute_keys(record.content)), bool(record.pinned)]


def parse_reading(raw: Any) -> Reading | None:
    """The reading kept as :func:`reading_doc` wrote it, when the rules that run now made it;
    None otherwise (absent, malformed, or made by other rules)."""
    if not isinstance(raw, list | tuple) or len(raw) != 3:
        return None
    fingerprint, keys, pinned = raw
    if not fingerprint or fingerprint != rules_fingerprint() or not isinstance(keys, list | tuple):
        return None
    return Reading(frozenset(str(k) for k in keys), bool(pinned))
