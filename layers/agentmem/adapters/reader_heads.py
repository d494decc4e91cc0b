"""The statement reader's learned heads as shipped: ``data/reader_heads.npz`` (written by
``agentmem_dev.reading.train``), read once by the composition root. A missing or unreadable
file leaves the reader on its rules (logged, never an error)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from agentmem.domain.reading import Head, Heads

log = logging.getLogger(__name__)

HEADS_FILE = Path(__file__).parent / "data" / "reader_heads.npz"


def load_heads(path: Path = HEADS_FILE) -> Heads | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            names = sorted({key.partition(".")[0] for key in data.files if "." in key})
            heads = {name: Head.from_arrays(data, name) for name in names}
            return Heads(str(data["model_id"]), heads)
    except (OSError, KeyError, ValueError) as exc:
        log.warning("reader heads unavailable", extra={"reason": type(exc).__name__})
        return None
