"""How turns go to an SQS ingest queue in batches: one definition for the server's queue adapter
and the light client's ``TurnSender`` (which ships this package as ``agentmem_client.wire``).

Pure: the caller sends a batch (``send_batch`` returns the ids SQS accepted and its failure
entries) and maps errors to its own types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

MAX_BATCH_ENTRIES = 10
SENDER_RETRY_ROUNDS = 1  # re-sends of entries SQS failed on its side (SenderFault false)
OVER_LIMIT_CODES = frozenset({"OverLimit", "AWS.SimpleQueueService.OverLimit"})

Entry = dict[str, Any]
SendBatch = Callable[[list[Entry]], tuple[list[str], list[Entry]]]


def batches(entries: Sequence[Entry], max_bytes: int) -> list[list[Entry]]:
    """Consecutive groups of at most 10 entries and ``max_bytes`` of bodies."""
    out: list[list[Entry]] = []
    size = 0
    for entry in entries:
        body = len(entry["MessageBody"].encode("utf-8"))
        if not out or len(out[-1]) >= MAX_BATCH_ENTRIES or size + body > max_bytes:
            out.append([])
            size = 0
        out[-1].append(entry)
        size += body
    return out


def send_all(entries: Sequence[Entry], send_batch: SendBatch, max_bytes: int, sent: list[str]) -> list[Entry]:
    """Send ``entries`` batch by batch, re-sending once what SQS failed on its own side; each
    accepted id is appended to ``sent`` as it goes (so a caller whose later batch raised can say
    which went out). Returns the failure entries left."""
    by_id = {e["Id"]: e for e in entries}
    failed: list[Entry] = []
    for batch in batches(entries, max_bytes):
        ok, bad = send_batch(batch)
        sent.extend(ok)
        for _ in range(SENDER_RETRY_ROUNDS):
            retry = [by_id[str(f["Id"])] for f in bad if not f.get("SenderFault")]
            if not retry:
                break
            ok, again = send_batch(retry)
            sent.extend(ok)
            bad = [f for f in bad if f.get("SenderFault")] + again
        failed.extend(bad)
    return failed
