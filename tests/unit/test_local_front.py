"""The local server's front: per-request deadlines on one watcher thread, and metrics that stay
off (without retrying the import on every request) when prometheus-client is not installed."""

from __future__ import annotations

import builtins
import threading
import time
from typing import Any

import pytest

from agentmem_dev import observability
from agentmem_dev.emulator.deadlines import Deadlines


def test_a_deadline_fires_once_after_its_time() -> None:
    deadlines = Deadlines(tick=0.01)
    fired = threading.Event()
    calls: list[float] = []
    started = time.monotonic()

    def cut() -> None:
        calls.append(time.monotonic() - started)
        fired.set()

    deadlines.arm(1, 0.05, cut)
    assert fired.wait(2.0)
    time.sleep(0.05)
    assert len(calls) == 1
    assert calls[0] >= 0.05


def test_a_disarmed_deadline_never_fires_and_others_still_do() -> None:
    deadlines = Deadlines(tick=0.01)
    fired: list[int] = []
    done = threading.Event()
    deadlines.arm(1, 0.03, lambda: fired.append(1))
    deadlines.arm(2, 0.05, lambda: (fired.append(2), done.set()))
    deadlines.disarm(1)
    assert done.wait(2.0)
    assert fired == [2]


def test_a_failing_callback_does_not_stop_the_watcher() -> None:
    deadlines = Deadlines(tick=0.01)
    done = threading.Event()

    def boom() -> None:
        raise RuntimeError("socket already gone")

    deadlines.arm(1, 0.01, boom)
    deadlines.arm(2, 0.04, done.set)
    assert done.wait(2.0)


def test_metrics_without_prometheus_client_are_off_and_the_import_is_tried_once(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(observability.METRICS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(observability, "_state", {})
    attempts: list[str] = []
    real_import = builtins.__import__

    def no_prometheus(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("prometheus_client"):
            attempts.append(name)
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_prometheus)
    for _ in range(5):
        observability.record_request("GET", "/v1/health", 200, 0.001)
    assert observability._recording() is None
    assert len(attempts) == 1
