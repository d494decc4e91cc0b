"""The LoCoMo eval on a tiny synthetic conversation in the public format (hash embedder): the
report has its documented shape, evidence maps back to dialog ids through source_refs, and the
input quirks of the real file (odd evidence ids, photo captions, session dates) are handled."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentmem_dev.eval import locomo

SESSION_1 = [
    ("Ana", "Hi Ben! I just moved to Porto for a new job at a bakery."),
    ("Ben", "Congrats Ana! I adopted a grey cat named Pixel last week."),
    ("Ana", "I love cats. My sister Clara is a marine biologist in Lisbon."),
    ("Ben", "I started learning the cello in January."),
    ("Ana", "Nice, I run every Sunday along the river."),
    ("Ben", "See you soon!"),
]
SESSION_2 = [
    ("Ana", "I finished my first half marathon in Porto yesterday."),
    ("Ben", "Amazing! Pixel knocked over my cello stand this morning."),
    ("Ana", "Clara is visiting me next month to study dolphins."),
    ("Ben", "I bought a new bike for commuting to the studio."),
    ("Ana", "Here is the bakery's new sourdough loaf."),
    ("Ben", "Looks delicious. Bye for now!"),
]


def _fixture() -> list[dict[str, Any]]:
    def session(number: int, lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
        out = []
        for i, (speaker, text) in enumerate(lines, 1):
            turn: dict[str, Any] = {"speaker": speaker, "dia_id": f"D{number}:{i}", "text": text}
            if number == 2 and i == 5:
                turn["blip_caption"] = "a photo of a loaf of bread on a wooden table"
            out.append(turn)
        return out

    return [
        {
            "sample_id": "conv-test",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": session(1, SESSION_1),
                "session_2_date_time": "10:04 am on 19 June, 2023",
                "session_2": session(2, SESSION_2),
            },
            "qa": [
                {
                    "question": "What is the name of Ben's cat?",
                    "answer": "Pixel",
                    "evidence": ["D1:2"],
                    "category": 4,
                },
                {
                    "question": "Where does Ana's sister Clara work?",
                    "answer": "Lisbon",
                    "evidence": ["D1:3"],
                    "category": 4,
                },
                {
                    "question": "When did Ana run a half marathon?",
                    "answer": "18 June 2023",
                    "evidence": ["D2:1"],
                    "category": 2,
                },
                {
                    "question": "What instrument does Ben play and what happened to it?",
                    "answer": "cello",
                    "evidence": ["D1:4; D2:2"],
                    "category": 1,
                },
                {
                    "question": "What did Ana's cat knock over?",
                    "adversarial_answer": "a cello stand",
                    "evidence": ["D2:2"],
                    "category": 5,
                },
            ],
        }
    ]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("locomo") / "locomo_small.json"
    path.write_text(json.dumps(_fixture()), encoding="utf-8")
    return locomo.run_locomo(
        path, conversations="0", ks=(1, 5, 10), embedder="hash", progress=False, details=True
    )


def test_report_shape(report: dict[str, Any]) -> None:
    overall = report["overall"]
    assert overall["n"] == 4
    for key in ("recall@5", "recall@10", "hit@5", "hit@10", "recall@1"):
        assert 0.0 <= overall[key] <= 1.0
    assert set(report["by_category"]) == {"1-multi-hop", "2-temporal", "4-single-hop"}
    assert report["baseline_bm25"]["overall"]["n"] == 4
    assert "by_category" in report["baseline_bm25"]
    assert report["baseline_bm25_plain"]["overall"]["n"] == 4
    assert report["category_5"]["memory"]["n"] == 1
    assert report["turns"] == 12
    assert report["ingest_seconds"] > 0
    assert report["memories_per_turn"] > 0
    assert report["mean_context_chars"] > 0
    assert report["settings"]["embedder"] == "hash/ngram-256"
    assert report["settings"]["conversations"] == ["conv-test"]
    assert report["diagnostics"]["evidence_refs"] == 5
    path = report["query_path_ms_excl_embed"]  # every question's recall, its embedding left out
    assert path["questions"] == 5 and 0 < path["p50_ms"] <= path["p95_ms"]
    assert report["query_path_target_ms"] == 50.0
    assert "query path (one recall per question, embedding excluded)" in locomo.render(report)
    json.dumps(report)  # serialisable as is


def test_evidence_maps_back_to_dialog_ids(report: dict[str, Any]) -> None:
    rows = {row["question"]: row for row in report["questions"]}
    cat = rows["What is the name of Ben's cat?"]
    retrieved = {m for ids in cat["memory_top"] for m in ids}
    assert retrieved, "recalled memories carry the dialog ids of their turns"
    assert all(m.startswith("D") and ":" in m for m in retrieved)
    assert "D1:2" in retrieved  # the only line that names Pixel
    assert cat["memory_recall@10"] == 1.0
    # "D1:4; D2:2" is split into two evidence ids.
    assert rows["What instrument does Ben play and what happened to it?"]["evidence"] == ["D1:4", "D2:2"]
    assert report["overall"]["hit@10"] > 0.5


def test_session_dates_and_evidence_normalisation() -> None:
    assert locomo.parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert locomo.parse_session_date("12:09 am on 13 September, 2023") == datetime(
        2023, 9, 13, 0, 9, tzinfo=UTC
    )
    assert locomo.parse_session_date("2023-05-08T10:00:00") == datetime(2023, 5, 8, 10, 0, tzinfo=UTC)
    with pytest.raises(ValueError):
        locomo.parse_session_date("sometime in May")
    known = {"D8:6", "D9:17", "D11:26", "D30:5"}
    valid, invalid = locomo.normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D99:1"], known)
    assert valid == ("D8:6", "D9:17", "D11:26", "D30:5")
    assert invalid == ("D", "D99:1")
    assert locomo.parse_selection("0-2,5", 10) == [0, 1, 2, 5]
    assert locomo.parse_selection("all", 3) == [0, 1, 2]


def test_photo_caption_and_order(tmp_path: Path) -> None:
    conv = locomo.parse_conversation(_fixture()[0])
    line = next(line for line in conv.lines if line.dia_id == "D2:5")
    assert line.text.endswith("[shared a photo: a photo of a loaf of bread on a wooden table]")
    assert [line.at for line in conv.lines] == sorted(line.at for line in conv.lines)
    assert line.raw_document.startswith("(10:04 am on 19 June, 2023) Ana: ")


def test_coverage_metric() -> None:
    assert locomo.coverage(["D1:1", "D1:2"], [("D1:2",), ("D1:3",)], 1) == (0.5, True)
    assert locomo.coverage(["D1:1"], [("D1:2",), ("D1:1", "D1:4")], 1) == (0.0, False)
    assert locomo.coverage(["D1:1"], [("D1:2",), ("D1:1", "D1:4")], 2) == (1.0, True)


def test_make_evals_combine_step_runs_as_a_module(report: dict[str, Any], tmp_path: Path) -> None:
    """``make eval`` runs the combine step as ``python -m agentmem_dev.eval.locomo combine``: the
    module's own entry point, with everything it renders defined before it runs."""
    import subprocess
    import sys

    (tmp_path / "locomo.json").write_text(json.dumps(report), encoding="utf-8")
    args = [
        sys.executable,
        "-m",
        "agentmem_dev.eval.locomo",
        "combine",
        "--locomo",
        str(tmp_path / "locomo.json"),
    ]
    args += ["--json-out", str(tmp_path / "eval.json"), "--md-out", str(tmp_path / "eval.md")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "query path (one recall per question" in (tmp_path / "eval.md").read_text(encoding="utf-8")
