"""The benchmarks record how fast the machine ran (``common.speed_probe``) next to their figures,
and the report prints it, so that two runs' absolute figures can be compared: on a shared machine
the same code's context p50 moved from 3.4 to 12 ms between two days while a matrix-vector
product barely moved."""

from __future__ import annotations

from agentmem_dev.bench import report
from agentmem_dev.bench.common import machine, speed_probe


def test_the_probe_times_python_and_numpy_work() -> None:
    speed = speed_probe(repeat=2)
    assert set(speed) == {"python_ms", "numpy_ms"}
    assert speed["python_ms"] > 0 and speed["numpy_ms"] > 0


def test_every_benchmark_s_machine_carries_the_probe() -> None:
    assert set(machine()["speed"]) == {"python_ms", "numpy_ms"}


def test_the_report_prints_the_speed_of_the_run_and_of_each_section() -> None:
    speed = {"python_ms": 4.25, "numpy_ms": 0.41}
    projector = {
        "benchmark": "projector",
        "records": 10,
        "seconds": 1.0,
        "records_per_second": 10.0,
        "baseline": {"name": "Projector.apply directly", "seconds": 1.0, "records_per_second": 10.0},
        "ratio_records_per_second_vs_baseline": 1.0,
        "wall_seconds": 2.0,
        "repetitions": 1,
        "machine": {"speed": {"python_ms": 5.5, "numpy_ms": 0.5}},
    }
    text = report.markdown({"benchmarks": {"projector": projector}, "machine": {"speed": speed}})
    assert "Speed at the end of the run: Python probe 4.250 ms, numpy mat-vec probe 0.410 ms" in text
    assert "_projector: 2.0 s; repetitions 1; speed after it: Python probe 5.500 ms" in text


def test_a_report_written_before_the_probe_existed_still_renders() -> None:
    text = report.markdown({"benchmarks": {}, "machine": {"platform": "x"}})
    assert "probe" not in text
