"""``agentmem serve`` as a user runs it, in its own process on a free loopback port, for the tests
that drive it from outside Python's process (the light client's fresh venv, Node's test runner):
started with the hash embedder over a temp data dir, found by the URL its banner prints, stopped
with SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LAYERS = Path(__file__).resolve().parents[2] / "layers"


@contextmanager
def agentmem_serve(data_dir: Path, *, token: str | None = None) -> Iterator[str]:
    """Yields the server's base URL (``http://127.0.0.1:<port>``)."""
    env = {**os.environ, "PYTHONPATH": str(LAYERS), "AGENTMEM_EMBEDDER": "hash"}
    if token:
        env["AGENTMEM_API_TOKEN"] = token
    command = [sys.executable, "-m", "agentmem_dev.cli", "serve", "--port", "0", "--workers", "0"]
    proc = subprocess.Popen(
        [*command, "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:  # the banner comes once the server is ready
            found = re.search(r"agentmem serving on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url, "agentmem serve printed no URL"
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
