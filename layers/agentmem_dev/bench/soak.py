"""``agentmem bench soak``: does the local server's disk stay bounded under a steady load?

The real server (``agentmem serve`` with ``workers`` api worker processes and the event-source
process) over a fresh data directory on loopback, with short retention horizons so that a run of a
minute or two passes them (``retention_s`` for L0 turns, processed marks, ``context_injected``
audit lines and idempotency keys; a retention pass every ``retention_every_s``). Client threads
post turns that repeat each user's fixed set of facts (so the memories saturate — the write path
reinforces a duplicate instead of storing it again — and what keeps growing is what retention
must bound: the L0 log, the outbox, the audit trail), ask for context, and write a memory with an
``Idempotency-Key`` now and then. Bounded in time (``seconds``) and in turns (``max_turns``).

Every ``interval_s`` it samples the data directory's size (every file, WAL included), the turns
accepted so far (the database files alone too: the WAL files swing by megabytes with each
checkpoint), the rows retention bounds (:data:`RETAINED`) and the resident memory of the server's processes (front + children, from
``/proc``). Reported: the samples, the growth per 1,000 turns before the retention horizon and
after it, ``bounded`` (the retention-bound rows never more than twice their level at the horizon
after it: they plateau instead of following the turns), the rows
per table at the end, and RSS per minute (the largest sample
of each minute). ``--seconds 600`` for a longer run.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import sqlite3
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.settings import load_settings
from agentmem_dev.bench.common import machine, say, synthetic_facts, synthetic_queries
from agentmem_dev.emulator.service import LocalService

TENANT = "soak"
DAY_S = 86400.0


@dataclass
class _Counts:
    accepted: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, what: str, status: int, accepted: int = 0) -> None:
        with self.lock:
            self.statuses[f"{what}_{status}"] += 1
            self.accepted += accepted


def _post(port: int, path: str, body: dict[str, Any], user: str, key: str | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json", "X-Tenant-Id": TENANT, "X-User-Id": user}
    if key is not None:
        headers["Idempotency-Key"] = key
    try:
        conn.request("POST", path, body=json.dumps(body, ensure_ascii=False).encode(), headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def _client(
    port: int, index: int, users: int, stop: threading.Event, counts: _Counts, max_turns: int
) -> None:
    rng = random.Random(index)
    facts = {u: synthetic_facts(12, seed=1000 + u) for u in range(users)}  # each user's fixed facts
    queries = synthetic_queries(30, seed=300 + index)
    sequence = 0
    while not stop.is_set():
        user = rng.randrange(users)
        name = f"u{user}"
        roll = rng.random()
        try:
            if roll < 0.3:
                status, _ = _post(port, "/v1/context", {"query": rng.choice(queries), "mode": "chat"}, name)
                counts.add("context", status)
            elif roll < 0.33:
                body = {"content": rng.choice(facts[user])}
                key = f"soak-{index}-{sequence}"
                status, _ = _post(port, "/v1/memories", body, name, key)
                counts.add("memory", status)
                sequence += 1
            else:
                if counts.accepted >= max_turns:
                    stop.set()
                    return
                sequence += 1
                turn = {
                    "session_id": f"s{index}-{user}-{sequence // 200}",  # long chats
                    "user": rng.choice(facts[user]),
                    "assistant": "OK.",
                    "message_id": f"soak-{index}-{sequence}-{uuid.uuid4().hex[:6]}",
                }
                status, body = _post(port, "/v1/turns", turn, name)
                counts.add("turn", status, len((body or {}).get("message_ids", [])) if status == 202 else 0)
                if status == 429:
                    time.sleep(0.05)
        except (OSError, http.client.HTTPException) as exc:
            counts.add(type(exc).__name__, 0)


def _dir_bytes(path: Path, *, wal: bool = True) -> int:
    """Bytes of every file under ``path``; ``wal=False``: the database files alone (the ``-wal``
    files swing with each checkpoint, by megabytes, whatever the data)."""
    return sum(
        f.stat().st_size
        for f in path.rglob("*")
        if f.is_file() and (wal or not f.name.endswith(("-wal", "-shm")))
    )


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def _rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


# What retention bounds (rows that expire with the horizon or once applied), by file:table; the
# rest (memories, their projections and the audit lines of writes) grows with distinct memories,
# by design and as in AWS (consolidation dedups and evicts them, retention does not).
RETAINED = (
    "memory:raw_turns",
    "memory:processed_turns",
    "memory:outbox",
    "memory:scene_turns",
    "memory:idempotency_keys",
    "queue:messages",
)


def _retained_rows(data: Path) -> int:
    total = 0
    for name in RETAINED:
        stem, table = name.split(":")
        path = data / f"{stem}.db"
        if not path.exists():
            continue
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            total += int(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
            if name == "memory:outbox":  # and the context lines retention compacts
                total += int(
                    conn.execute(
                        "SELECT COUNT(*) FROM audit_events WHERE action = 'context_injected'"
                        " AND COALESCE(reason, '') != 'compacted'"
                    ).fetchone()[0]
                )
        except sqlite3.Error:  # not created yet
            pass
        finally:
            conn.close()
    return total


def _rows(data: Path) -> dict[str, int]:
    """Rows per ``file:table`` at the end (what the space holds)."""
    found: dict[str, int] = {}
    for path in sorted(data.glob("*.db")):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for name in names:
                if not name.startswith("sqlite_"):
                    found[f"{path.stem}:{name}"] = int(
                        conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
                    )
        finally:
            conn.close()
    return {k: v for k, v in found.items() if v}


def _sample(elapsed: float, turns: int, data: Path) -> dict[str, Any]:
    return {
        "t_s": round(elapsed, 1),
        "turns": turns,
        "data_bytes": _dir_bytes(data),
        "db_bytes": _dir_bytes(data, wal=False),
        "retained_rows": _retained_rows(data),
        "rss_bytes": _rss_bytes([os.getpid(), *_children(os.getpid())]),
    }


def _growth(samples: list[dict[str, Any]], start: int, end: int, what: str = "db_bytes") -> float | None:
    """Bytes of ``what`` per 1,000 accepted turns between two samples."""
    a, b = samples[start], samples[end]
    turns = b["turns"] - a["turns"]
    return round((b[what] - a[what]) / turns * 1000) if turns > 0 else None


def run(
    *,
    seconds: float = 90.0,
    clients: int = 3,
    users: int = 8,
    workers: int | None = 1,
    embedder: str = "hash",
    retention_s: float = 20.0,
    retention_every_s: float = 5.0,
    interval_s: float = 5.0,
    max_turns: int = 200_000,
    progress: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """Run the soak; returns the samples, growth per 1,000 turns before/after the retention
    horizon, whether the data dir stayed bounded, and RSS per minute."""
    workers = 1 if workers is None else workers
    with tempfile.TemporaryDirectory(prefix="agentmem-soak-") as tmp:
        data = Path(tmp) / "data"
        days = retention_s / DAY_S
        settings = load_settings(
            data_dir=data,
            embedder=embedder,
            turn_retention_days=days,
            audit_retention_days={"context_injected": days},
            idempotency_ttl_hours=retention_s / 3600,
            retention_every_s=retention_every_s,
        )
        say(progress, f"soak: starting the server ({workers} api worker processes) ...")
        service = LocalService(settings, workers=workers).start().serve_in_background()
        assert service.server is not None
        port = int(service.server.server_address[1])
        counts, stop = _Counts(), threading.Event()
        threads = [
            threading.Thread(target=_client, args=(port, i, users, stop, counts, max_turns), daemon=True)
            for i in range(clients)
        ]
        samples: list[dict[str, Any]] = []
        started = time.monotonic()
        try:
            for thread in threads:
                thread.start()
            while True:
                elapsed = time.monotonic() - started
                samples.append(_sample(elapsed, counts.accepted, data))
                say(
                    progress,
                    f"soak: {elapsed:5.0f} s  {counts.accepted:6d} turns  "
                    f"db {samples[-1]['db_bytes'] / 2**20:6.2f} MiB  dir {samples[-1]['data_bytes'] / 2**20:6.2f} MiB"
                    f"  rss {samples[-1]['rss_bytes'] / 2**20:6.0f} MiB",
                )
                if elapsed >= seconds or stop.is_set():
                    break
                stop.wait(min(interval_s, max(0.0, seconds - elapsed)))
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=60)
            if samples and samples[-1]["turns"] != counts.accepted:  # a turn answered after the last
                samples.append(_sample(time.monotonic() - started, counts.accepted, data))
            faults = service.faults()
            service.stop()
        rows = _rows(data)
    # the horizon: retention_s plus one pass after it; "before" is the first stretch up to it
    horizon = retention_s + retention_every_s
    at_horizon = next((i for i, s in enumerate(samples) if s["t_s"] >= horizon), len(samples) - 1)
    before = _growth(samples, 0, at_horizon) if at_horizon > 0 else None
    after = _growth(samples, at_horizon, len(samples) - 1) if at_horizon < len(samples) - 1 else None
    per_minute: dict[int, int] = {}
    for s in samples:
        minute = int(s["t_s"] // 60)
        per_minute[minute] = max(per_minute.get(minute, 0), s["rss_bytes"])
    return {
        "machine": machine(),
        "settings": {
            "seconds": seconds,
            "clients": clients,
            "users": users,
            "workers": workers,
            "embedder": embedder,
            "retention_s": retention_s,
            "retention_every_s": retention_every_s,
            "interval_s": interval_s,
            "max_turns": max_turns,
        },
        "turns_accepted": counts.accepted,
        "statuses": dict(counts.statuses),
        "errors_5xx": sum(n for k, n in counts.statuses.items() if k.rsplit("_", 1)[-1].startswith("5")),
        "samples": samples,
        "horizon_s": horizon,
        # of the database files (WAL apart: see _dir_bytes); the whole dir's at the horizon and end
        "growth_bytes_per_1000_turns_before_horizon": before,
        "growth_bytes_per_1000_turns_after_horizon": after,
        "db_bytes_at_horizon": samples[at_horizon]["db_bytes"],
        "db_bytes_at_end": samples[-1]["db_bytes"],
        "data_bytes_at_horizon": samples[at_horizon]["data_bytes"],
        "data_bytes_at_end": samples[-1]["data_bytes"],
        "data_bytes_max": max(s["data_bytes"] for s in samples),
        # what retention bounds: rows at the horizon (the plateau's height) and at the end
        "retained_rows_at_horizon": samples[at_horizon]["retained_rows"],
        "retained_rows_max_after_horizon": max(s["retained_rows"] for s in samples[at_horizon:]),
        "bounded": max(s["retained_rows"] for s in samples[at_horizon:])
        <= 2 * max(1, samples[at_horizon]["retained_rows"]),
        "rss_mib_per_minute": {str(m): round(v / 2**20, 1) for m, v in sorted(per_minute.items())},
        "faults_at_end": faults,
        "rows_at_end": rows,
    }
