"""Small learned heads over the shipped embedder: multinomial logistic regression, numpy at
inference. Each head maps a fact's stored vector (the one the write path embeds anyway: no extra
embedding) to a distribution over its labels. The weights are trained by
``agentmem_dev.reading.train`` on labelled bilingual statements and shipped per embedder model;
a vector from another model gets no head (rules alone)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

REVISION_HEAD = "revision"  # the pair head: labels ("other", "same")


@dataclass(frozen=True)
class Head:
    """``weights`` (labels × dim), ``bias`` (labels), ``mean`` (dim, subtracted first)."""

    labels: tuple[str, ...]
    weights: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]
    mean: npt.NDArray[np.float32]

    def probabilities(self, vector: npt.NDArray[np.float32]) -> dict[str, float]:
        logits = self.weights @ (np.asarray(vector, dtype=np.float32) - self.mean) + self.bias
        logits = logits - logits.max()
        exp = np.exp(logits)
        probs = exp / exp.sum()
        return {label: float(p) for label, p in zip(self.labels, probs, strict=True)}

    def to_arrays(self, name: str) -> dict[str, npt.NDArray[Any]]:
        """The head as the arrays a shipped ``.npz`` keeps under ``name`` (weights and mean in
        float16: the file stays small, the probabilities move by less than the heads' noise)."""
        return {
            f"{name}.labels": np.array(self.labels),
            f"{name}.weights": self.weights.astype(np.float16),
            f"{name}.bias": self.bias,
            f"{name}.mean": self.mean.astype(np.float16),
        }

    @classmethod
    def from_arrays(cls, data: Mapping[str, npt.NDArray[Any]], name: str) -> Head:
        """The head kept under ``name`` by :meth:`to_arrays` (raises ``KeyError`` when absent)."""
        return cls(
            tuple(str(label) for label in data[f"{name}.labels"]),
            data[f"{name}.weights"].astype(np.float32),
            data[f"{name}.bias"].astype(np.float32),
            data[f"{name}.mean"].astype(np.float32),
        )


def pair_features(
    earlier: npt.NDArray[np.float32], later: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """What a pair head reads of two statements' vectors: their elementwise product (the
    dimensions they share), absolute difference (where they part), and each vector itself (what
    each one is about: a departure and a return date part in these, not in the product)."""
    a = np.asarray(earlier, dtype=np.float32)
    b = np.asarray(later, dtype=np.float32)
    return np.concatenate([a * b, np.abs(a - b), a, b])


@dataclass(frozen=True)
class Heads:
    """The heads of one embedder model, by name (``subject``, ``modality``, ``stance`` over one
    statement's vector; ``revision`` over a pair's :func:`pair_features`)."""

    model_id: str
    heads: Mapping[str, Head]

    def for_model(self, model_id: str) -> Heads | None:
        return self if model_id == self.model_id else None

    def probabilities(self, name: str, vector: npt.NDArray[np.float32]) -> dict[str, float] | None:
        head = self.heads.get(name)
        return head.probabilities(vector) if head is not None else None

    def revises(self, earlier: npt.NDArray[np.float32], later: npt.NDArray[np.float32]) -> float | None:
        """The ``revision`` pair head's probability that ``later`` gives another value to
        something ``earlier`` stated (the same slot of a request or plan); None without the head."""
        head = self.heads.get(REVISION_HEAD)
        if head is None:
            return None
        return head.probabilities(pair_features(earlier, later)).get("same", 0.0)
