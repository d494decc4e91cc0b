"""``run_smoke`` (behind ``agentmem smoke --moto | --engines``): every sent turn accounted for,
memories written and projected, recall and context working, nothing created twice on replay, and
injected drift repaired by one reconcile run (a second finds nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from agentmem_dev.smoke import run_smoke
from support import engine_run


def _holds(summary: dict[str, Any], turns: int) -> None:
    assert summary["failures"] == []
    assert summary["turns_sent"] == summary["turns_accounted"] == turns
    assert summary["memories_written"] >= summary["memories_active"] == summary["memories_projected"] > 0
    assert summary["recall_ok"] is True and summary["context_ok"] is True


def test_smoke_accounts_for_every_turn() -> None:
    summary = run_smoke(8)
    _holds(summary, 8)
    assert summary["breakdown"]["rejected"] == 1 and summary["breakdown"]["dead_lettered"] == 1


def test_smoke_with_one_turn_has_no_deliberate_failures() -> None:
    summary = run_smoke(1)
    assert summary["failures"] == [] and summary["turns_accounted"] == 1
    assert summary["breakdown"]["dead_lettered"] == 0 and summary["recall_ok"] is True


def test_smoke_drift_is_found_and_repaired_once() -> None:
    reconcile = run_smoke(12)["reconcile"]
    first, second = reconcile["first"], reconcile["second"]
    assert first["missing"] >= 1 and first["stale"] >= 1 and first["orphan"] >= 1
    assert first["repaired"] >= 1 and first["failed"] == 0
    assert second["missing"] == second["stale"] == second["orphan"] == 0


@pytest.mark.skipif(
    engine_run.all_skip_reason() is not None, reason=f"engines: {engine_run.all_skip_reason()}"
)
def test_smoke_on_the_engines() -> None:
    """The whole path on moto's server, OpenSearch and the Gremlin server."""
    urls = {v: engine_run.engine_url(n) for n, v in engine_run.ENV_VARS.items()}
    summary = run_smoke(30, engines=urls)
    _holds(summary, 30)
    reconcile = summary["reconcile"]
    assert reconcile["edges"] and reconcile["edges"]["after"] >= reconcile["edges"]["before"]
    assert (
        reconcile["second"]["missing"] == reconcile["second"]["stale"] == reconcile["second"]["orphan"] == 0
    )
