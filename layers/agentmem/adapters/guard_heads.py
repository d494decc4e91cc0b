"""The injection gate's directive head as shipped: ``data/guard_heads.npz`` (written by
``agentmem_dev.guards_training.train``), read once by the composition root. A missing or
unreadable file leaves the gate on its rules (logged, never an error)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from agentmem.domain.guards.directive import DirectiveHead
from agentmem.domain.reading.heads import Head

log = logging.getLogger(__name__)

GUARD_HEADS_FILE = Path(__file__).parent / "data" / "guard_heads.npz"


def load_directive_head(path: Path = GUARD_HEADS_FILE) -> DirectiveHead | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            head = Head.from_arrays(data, "directive")
            held = {
                str(name): float(value)
                for name, value in zip(data["held.names"], data["held.values"], strict=True)
            }
            return DirectiveHead(str(data["model_id"]), head, held)
    except (OSError, KeyError, ValueError) as exc:
        log.warning("directive head unavailable", extra={"reason": type(exc).__name__})
        return None
