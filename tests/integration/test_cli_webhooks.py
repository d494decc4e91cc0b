"""``agentmem webhooks dead|redrive``: the operator's command for dead-lettered deliveries,
over the same service as the API routes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentmem.bootstrap import bootstrap
from agentmem.domain.events import Event, EventType
from agentmem.settings import load_settings
from agentmem_dev.cli import main


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTMEM_EMBEDDER", "hash")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return tmp_path / "data"


def run(data: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--data-dir", str(data)])
    out, _ = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None


def test_dead_deliveries_listed_and_redriven(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    container = bootstrap(load_settings(data_dir=data, webhook_max_attempts=1))
    now = container.clock.now()
    hook = container.webhooks.create("acme", "http://127.0.0.1:9/unreachable", ["*"], now=now)
    container.adapters.events.publish([Event(EventType.USER_ERASED, "acme", "alice", "alice", now)])  # type: ignore[union-attr]
    assert container.webhook_delivery is not None
    assert container.webhook_delivery.run(now).dead == 1  # refused: one attempt, dead

    code, dead = run(data, capsys, "webhooks", "dead", "--tenant", "acme")
    assert code == 0 and [(d["webhook_id"], d["event_type"]) for d in dead] == [
        (hook.webhook_id, "user.erased")
    ]
    assert run(data, capsys, "webhooks", "dead", "--tenant", "globex")[1] == []
    assert run(data, capsys, "webhooks", "redrive")[0] == 2  # neither ids nor --all
    assert run(data, capsys, "webhooks", "redrive", "nope") == (1, {"redriven": 0})
    assert run(data, capsys, "webhooks", "redrive", dead[0]["id"]) == (0, {"redriven": 1})
    assert run(data, capsys, "webhooks", "dead")[1] == []
