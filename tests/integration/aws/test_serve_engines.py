"""``agentmem serve --backend engines``: the local server over the AWS adapters and the real
engines — a turn posted over HTTP goes SQS → ingest → DynamoDB → stream → projector →
OpenSearch + Gremlin Server, and recall over HTTP finds it."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agentmem_dev.engines.serve import engines_service
from support import engine_run


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Tenant-Id": "serve", "X-User-Id": "ana"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


@pytest.mark.skipif(
    engine_run.all_skip_reason() is not None, reason=f"engines: {engine_run.all_skip_reason()}"
)
def test_a_turn_posted_over_http_is_recalled_through_the_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, variable in engine_run.ENV_VARS.items():
        monkeypatch.setenv(variable, engine_run.engine_url(name))
    monkeypatch.setenv("AGENTMEM_EMBEDDER", "hash")
    with engines_service("127.0.0.1", 0, tmp_path) as service:
        service.start().serve_in_background()
        try:
            assert service.container is not None
            assert type(service.container.index).__name__ == "OpenSearchIndex"
            assert type(service.container.graph).__name__ == "NeptuneGraphStore"
            accepted = _post(
                f"{service.url}/v1/turns",
                {"session_id": "s1", "user": "I live in Valparaíso.", "assistant": "Noted."},
            )
            assert accepted["accepted"] == 1
            found: list[str] = []
            deadline = time.monotonic() + 60
            while not found and time.monotonic() < deadline:
                hits = _post(f"{service.url}/v1/recall", {"query": "Where do I live?", "k": 3})
                found = [m["content"] for m in hits["memories"] if "Valpara" in m["content"]]
                time.sleep(0.5)
            assert found, "the turn never reached recall"
        finally:
            service.stop()
