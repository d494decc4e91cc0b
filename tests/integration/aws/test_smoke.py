"""``run_smoke`` (behind ``agentmem smoke --moto``): every sent turn accounted for, memories
written and projected, recall working, nothing created twice on replay."""

from __future__ import annotations

from agentmem_dev.smoke_moto import run_smoke


def test_smoke_accounts_for_every_turn() -> None:
    summary = run_smoke(8)
    assert summary["failures"] == []
    assert summary["turns_sent"] == summary["turns_accounted"] == 8
    assert summary["breakdown"]["rejected"] == 1 and summary["breakdown"]["dead_lettered"] == 1
    assert summary["memories_written"] >= summary["memories_active"] == summary["memories_projected"] > 0
    assert summary["recall_ok"] is True


def test_smoke_with_one_turn_has_no_deliberate_failures() -> None:
    summary = run_smoke(1)
    assert summary["failures"] == [] and summary["turns_accounted"] == 1
    assert summary["breakdown"]["dead_lettered"] == 0 and summary["recall_ok"] is True
