"""Time-sortable, deterministic identifiers (ULID layout: 48-bit ms time + 80 bits).

The 80 bits come from a hash of a seed (e.g. ``message_id:ordinal``), so a redelivered turn
produces the same memory ids and a conditional create makes the replay a no-op.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def memory_id(at: datetime, seed: str) -> str:
    """26-character id that sorts by ``at`` and is stable for the same (at, seed)."""
    millis = max(0, int(at.timestamp() * 1000)) & ((1 << 48) - 1)
    digest = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:10], "big")
    return _encode(millis, 10) + _encode(digest, 16)


def is_memory_id(value: str) -> bool:
    return len(value) == 26 and all(ch in _ALPHABET for ch in value)
