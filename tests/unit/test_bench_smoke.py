"""Every benchmark runs at a tiny size, quickly, and returns its documented keys (hash embedder,
so no model is loaded)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from typing import Any

import pytest

from agentmem_dev.bench import BENCHMARKS, render, run_benchmark
from agentmem_dev.bench.common import quiet_metrics, synthetic_facts, synthetic_queries, synthetic_turns

MACHINE_KEYS = {"platform", "cpu_count", "python"}


def _common(result: dict[str, Any]) -> None:
    assert set(result["machine"]) >= MACHINE_KEYS
    assert isinstance(result["settings"], dict)
    assert result["repetitions"] >= 1
    assert "baseline" in result
    json.dumps(result)
    assert render(result["benchmark"], result).startswith("# agentmem benchmarks")


def test_recall_bench() -> None:
    result = run_benchmark("recall", sizes=[60, 120], embedder="hash", repetitions=5, progress=False)
    _common(result)
    rows = result["results"]
    assert {(r["n"], r["mode"]) for r in rows} == {
        (n, m)
        for n in (60, 120)
        for m in ("in_process", "http", "recall", "baseline:index_only", "baseline:floor")
    }
    for row in rows:
        for key in ("n", "mode", "p50_ms", "p95_ms", "p99_ms", "p95_ms_excl_embed", "embed_p50_ms"):
            assert key in row
        # the floor over 60 vectors takes a few µs: rounded to 0.01 ms it may read 0.0
        fast = str(row["mode"]).startswith("baseline:")
        assert (row["p50_ms"] >= 0 if fast else row["p50_ms"] > 0) and row["p95_ms"] >= row["p50_ms"]
    in_process = next(r for r in rows if r["mode"] == "in_process" and r["n"] == 120)
    assert in_process["total_memories"] == 120 + 50 * 1  # 10 % spread over 50 other users, at least one each
    assert in_process["ratio_p50_vs_index_only"] is not None
    assert in_process["ratio_p50_vs_floor"] is not None and in_process["ratio_p95_vs_floor"] is not None
    assert all(r["cpu_ms_per_call"] >= 0 for r in rows) and in_process["ratio_cpu_vs_floor"] is not None
    assert "CPU ms/call" in render("recall", result) and in_process["load_average_1m"] >= 0


def test_ingest_bench() -> None:
    result = run_benchmark("ingest", sizes=[30, 5], turns=12, embedder="hash", progress=False)
    _common(result)
    by_size = result["by_size"]
    for res in (result["result"], result["baseline"], *by_size):
        assert res["turns"] == 12
        assert res["turns_per_second"] > 0
        assert res["turns_per_second_excl_embed"] > 0
        assert res["failures"] == 0
        assert res["texts_embedded"] > 0
        assert 0 <= res["embed_share"] <= 1
    assert result["ratio_turns_per_second_vs_baseline"] is not None
    # smallest size first; the user (12 turns: one session) really held the pre-filled memories
    assert [r["memories_per_user_before"] for r in by_size] == [5, 30]
    assert by_size[1]["active_memories"] >= 30
    assert result["flatness"] is not None
    for embed in (result["embedder_throughput"], result["embedder_throughput_baseline"]):
        assert embed["texts_per_second"] > 0 and embed["batch"] > 1
    assert "turns/s excl. embed" in render("ingest", result)


def test_projector_bench() -> None:
    result = run_benchmark("projector", sizes=[60], progress=False)
    _common(result)
    assert result["records"] == 60
    assert result["records_per_second"] > 0
    assert result["lag_after"] == 0
    assert result["failures"] == 0
    assert result["baseline"]["records_per_second"] > 0


def test_cold_start_bench() -> None:
    result = run_benchmark("cold-start", repetitions=1, handlers=["ingest"], progress=False)
    _common(result)
    ingest = result["handlers"]["ingest"]
    assert ingest["import_ms"] > 0 and ingest["modules_imported"] > 10
    assert ingest["cpu_ms"] > 0 and ingest["wall_ms"] > 0  # CPU time reported beside the wall time
    assert "module CPU ms" in render("cold-start", result)
    assert any(h["module"].startswith("agentmem") for h in ingest["heaviest"])
    deps = result["dependencies"]
    assert deps["total_mb"] > 0
    for name in ("pydantic", "numpy", "aws-lambda-powertools", "boto3", "botocore"):
        assert deps["requested_mb"][name] is not None


def test_cost_bench() -> None:
    result = run_benchmark("cost", sizes=[12], embedder="hash", repetitions=4, progress=False)
    _common(result)
    rules = result["rules"]
    assert rules["per_turn"]["llm_calls"] == 0
    assert rules["per_turn"]["embedding_calls"] > 0
    assert rules["per_context_request"]["llm_calls"] == 0
    assert rules["per_context_request"]["embedding_calls"] == pytest.approx(1.0)
    estimate = result["llm_enabled_estimate"]
    assert estimate["estimated"] is True and "not measured" in estimate["note"]
    assert estimate["per_turn"]["extraction"]["calls"] == pytest.approx(1.0)
    assert estimate["per_turn"]["llm_input_tokens"] > estimate["per_turn"]["llm_output_tokens"] > 0
    dynamodb = result["dynamodb"]  # units by the rules, moto's figures apart, same-run baselines
    assert dynamodb["per_turn"]["turns"] == 12 and dynamodb["per_turn"]["write_units_mean"] > 0
    assert dynamodb["per_context_call"]["read_units_mean"] > 0
    assert set(dynamodb["targets"]) == {"turn_read_units", "turn_write_units", "context_read_units"}
    patterns = dynamodb["access_patterns"]
    assert (
        patterns["neighbour_listing_20_newest_after"]
        < patterns["neighbour_listing_20_newest_vector_inline_before_computed"]
        < patterns["neighbour_listing_200_newest_vector_inline_before_computed"]
    )
    assert (
        patterns["neighbour_listing_20_newest_after"] < patterns["neighbour_listing_20_newest_with_vectors"]
    )
    assert (
        patterns["slot_listings_slot_lists_gsi_after"]
        <= patterns["slot_listings_gsi_projection_all_before_computed"]
    )
    # every unit is filed under the port call that spent it
    for section, total in (("per_turn", "read_units_mean"), ("per_context_call", "read_units_mean")):
        ports = dynamodb[section]["by_port_call"]
        assert "?" not in {r["port_call"] for r in ports}
        assert sum(r["read_units"] for r in ports) == pytest.approx(dynamodb[section][total], abs=0.2)
    assert {"store.scan_active", "turn_log.append_raw"} <= {
        r["port_call"] for r in dynamodb["per_turn"]["by_port_call"]
    }
    assert "dynamodb units" in render("cost", result).lower() and "port call" in render("cost", result)


def test_registry_and_corpus() -> None:
    assert BENCHMARKS == ("recall", "ingest", "projector", "cold-start", "cost", "load", "soak")
    with pytest.raises(ValueError):
        run_benchmark("nope")
    assert synthetic_facts(5, seed=1) == synthetic_facts(5, seed=1)
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in f) for f in synthetic_facts(20))
    queries = synthetic_queries(30)
    assert all(a != b for a, b in itertools.pairwise(queries))
    sessions = synthetic_turns(30, session_turns=10)
    assert sum(len(s) for s in sessions) == 30


def test_quiet_metrics_drops_only_emf_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with quiet_metrics():
        print('{"_aws": {"Timestamp": 1}, "x": [1.0]}')
        print("kept")
    assert capsys.readouterr().out == "kept\n"


def test_json_stdout_carries_the_report_only() -> None:
    """Under ``--json`` what a child process or a C library writes to descriptor 1 and Powertools'
    EMF lines go to stderr or nowhere: stdout parses as the one report."""
    script = (
        "import os, subprocess, sys\n"
        "from agentmem_dev.harness import report_stdout\n"
        "with report_stdout():\n"
        "    os.write(1, b'raw fd noise\\n')\n"
        "    subprocess.run([sys.executable, '-c', 'print(1234)'], check=True)\n"
        '    print(\'{"_aws": {"Timestamp": 1}, "x": [1.0]}\')\n'
        "    print('{\"report\": true}')\n"
        "print('after')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == '{"report": true}\nafter\n'
    assert "raw fd noise" in done.stderr and "1234" in done.stderr


def test_json_stdout_under_a_capture_drops_emf_lines_only(capsys: pytest.CaptureFixture[str]) -> None:
    from agentmem_dev.harness import report_stdout

    with report_stdout():
        print('{"_aws": {"Timestamp": 1}, "x": [1.0]}')
        print('{"report": true}')
    assert capsys.readouterr().out == '{"report": true}\n'


def test_load_accounts_for_every_accepted_turn() -> None:
    from agentmem_dev.bench import load

    result = load.run(
        clients=2,
        seconds=1.0,
        users=3,
        embedder="hash",
        capacity=50,
        workers=0,  # in-process: the worker processes have their own tests
        fairness_seconds=0.5,
        flood_clients=1,
        progress=False,
    )
    assert result["turns_accepted"] > 0
    assert result["accounted"]["missing"] == 0
    assert result["accounted"]["processed"] + result["accounted"]["dead_lettered"] == result["turns_accepted"]
    # the bounded queue refuses with 429 instead of growing: whatever it refused it counted
    assert result["queue"]["refused"] == result["turns_refused_queue_full"]
    assert not result["errors"], result["error_samples"]
    fairness = result["fairness"]  # the quiet user measured alone and under the flood, both answered
    assert fairness["quiet_idle"]["calls"] > 0 and fairness["quiet_flooded"]["calls"] > 0
    assert fairness["p50_ratio"] is not None and fairness["flood_served"] > 0


def test_soak_samples_the_data_dir_past_the_retention_horizon() -> None:
    from agentmem_dev.bench import soak

    result = soak.run(
        seconds=9,
        clients=1,
        users=2,
        workers=1,
        retention_s=3,
        retention_every_s=1,
        interval_s=1,
        progress=False,
    )
    assert result["turns_accepted"] > 0 and result["errors_5xx"] == 0, result["statuses"]
    assert len(result["samples"]) >= 5 and result["samples"][-1]["turns"] == result["turns_accepted"]
    assert all(s["db_bytes"] > 0 and s["rss_bytes"] > 0 for s in result["samples"][1:])
    assert result["growth_bytes_per_1000_turns_before_horizon"] is not None
    assert result["growth_bytes_per_1000_turns_after_horizon"] is not None
    assert result["rss_mib_per_minute"]["0"] > 0 and result["faults_at_end"] == []
    json.dumps(result)
    assert "## soak" in render("soak", result)
