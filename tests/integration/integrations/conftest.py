"""One ``agentmem serve`` (its own process, hash embedder, temp data dir) for the framework
integration tests, which talk to it as a user's agent would: over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.live_server import agentmem_serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data: Path = tmp_path_factory.mktemp("served")
    with agentmem_serve(data) as url:
        yield url
