"""What eval, benchmarks and the demo share when they drive the service in one process."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class _DropEmfLines(io.TextIOBase):
    """A stdout stand-in that forwards everything except EMF metric lines (``{"_aws": ...``)."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._pending = ""
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            if line.startswith('{"_aws"'):
                self.dropped += 1
            else:
                self._target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending and not self._pending.startswith('{"_aws"'):
            self._target.write(self._pending)
            self._pending = ""
        self._target.flush()


@contextmanager
def quiet_metrics() -> Iterator[None]:
    """Keep Powertools' auto-flushed metric lines off stdout.

    With ``POWERTOOLS_METRICS_DISABLED=true`` Powertools 3.x never clears its metric set, so
    after 100 values of one metric ``add_metric`` prints the whole set to stdout regardless of
    the setting, which would corrupt a ``--json`` report. Other output passes through.
    """
    guard = _DropEmfLines(sys.stdout)
    saved = sys.stdout
    sys.stdout = guard
    try:
        yield
    finally:
        guard.flush()
        sys.stdout = saved


@contextmanager
def report_stdout() -> Iterator[None]:
    """While a ``--json`` command runs, stdout carries the report and nothing else.

    File descriptor 1 is pointed at stderr, so what a worker process, a server thread's
    subprocess or a C library writes to "stdout" lands on stderr; Python's ``sys.stdout`` writes
    to the real stdout (a duplicate of the original descriptor) with Powertools' EMF metric lines
    dropped (:func:`quiet_metrics`). ``make bench`` once failed on a report whose first line was
    a projector's auto-flushed metric set.
    """
    try:
        on_fd_1 = sys.stdout.fileno() == 1
    except (AttributeError, OSError, io.UnsupportedOperation):
        on_fd_1 = False
    if not on_fd_1:  # stdout is already redirected (a test's capture): leave descriptors alone
        with quiet_metrics():
            yield
        return
    sys.stdout.flush()
    saved_fd = os.dup(1)
    os.dup2(2, 1)
    saved = sys.stdout
    real = io.TextIOWrapper(os.fdopen(saved_fd, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    guard = _DropEmfLines(real)
    sys.stdout = guard
    try:
        yield
    finally:
        guard.flush()
        real.flush()
        sys.stdout = saved
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
