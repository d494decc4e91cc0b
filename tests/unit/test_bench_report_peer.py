"""``make bench``'s report folds in the peer benchmark against mem0 when its run left
``peer_http.json`` beside ``bench.json``, with the target and the floor's own ratio as baseline;
without the file there is no peer section."""

from __future__ import annotations

import json
from pathlib import Path

from agentmem_dev.bench import report

PEER = {
    "meta": {"n_target": 10000, "others": 5, "other_size": 1000, "queries": 50, "rounds": 3},
    "summary_median_over_rounds": {
        "agentmem_context": {"p50_ms": 13.7, "p95_ms": 17.5, "hit_at_10": 0.92},
        "mem0_chroma": {"p50_ms": 46.2, "p95_ms": 49.8, "hit_at_10": 0.96},
        "numpy_floor": {"p50_ms": 4.9, "p95_ms": 5.4, "hit_at_10": 0.96},
    },
    "ratios": {"mem0_chroma_p50/agentmem_context_p50": 3.37, "agentmem_context_p95/floor_p95": 3.28},
}


def _write(tmp_path: Path, peer: dict[str, object] | None) -> str:
    (tmp_path / "bench.json").write_text(json.dumps({"benchmarks": {}, "machine": {}}), encoding="utf-8")
    if peer is not None:
        (tmp_path / report.PEER_FILE).write_text(json.dumps(peer), encoding="utf-8")
    assert report.main([str(tmp_path / "bench.json"), str(tmp_path / "bench.md")]) == 0
    return (tmp_path / "bench.md").read_text(encoding="utf-8")


def test_the_peer_run_is_reported_with_its_target_and_the_floors_ratio(tmp_path: Path) -> None:
    text = _write(tmp_path, PEER)
    assert "## peer: agentmem over HTTP vs mem0" in text
    assert "| mem0_chroma | 46.2 | 49.8 | 0.960 |" in text
    assert "**3.370** (target ≥ 10: NOT met)" in text
    assert "the floor itself is 9.429× faster than mem0+Chroma" in text


def test_without_a_peer_run_there_is_no_peer_section(tmp_path: Path) -> None:
    assert "peer" not in _write(tmp_path, None)
