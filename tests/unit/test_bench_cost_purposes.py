"""``agentmem bench cost`` splits a turn's DynamoDB write units and a context call's read units
by what they pay for (``by_purpose``, from the per-port-call ledger): the turn's bookkeeping,
written whether or not it yields a memory, apart from its memory writes; the context call's
newest-memories window apart from its reads by id. The report prints both
beside the targets."""

from __future__ import annotations

from typing import Any

from agentmem_dev.bench import report
from agentmem_dev.bench.dynamodb_cost import BOOKKEEPING, _by_purpose


def _row(call: str, read: float = 0.0, write: float = 0.0) -> dict[str, Any]:
    return {
        "port_call": call,
        "table": "t",
        "operation": "o",
        "calls": 1.0,
        "read_units": read,
        "write_units": write,
    }


TURN_ROWS = [
    _row("turn_log.append_raw", write=1.0),  # the item
    _row("turn_log.append_raw", write=1.0),  # its session-index entry (another operation row)
    _row("turn_log.mark_processed", write=1.0),
    _row("summaries.record_turn", read=1.0, write=1.05),
    _row("ledger.mark_pending", write=1.25),
    _row("store.transact", write=2.5),
    _row("store.update", write=1.4),
    _row("store.scan_active", read=4.0),
    _row("ledger.erase_barrier", read=2.0),
    _row("audit.append", write=0.2),
]
CONTEXT_ROWS = [
    _row("store.scan_active", read=4.0),
    _row("store.get_many", read=4.65),
    _row("audit.append", write=1.0),
]


def test_a_turns_bookkeeping_is_split_from_its_memory_writes() -> None:
    split = _by_purpose(TURN_ROWS)["write_units"]
    assert split["bookkeeping_items"] == {
        BOOKKEEPING["turn_log.append_raw"]: 2.0,
        BOOKKEEPING["turn_log.mark_processed"]: 1.0,
        BOOKKEEPING["summaries.record_turn"]: 1.05,
        BOOKKEEPING["ledger.mark_pending"]: 1.25,
    }
    assert split["bookkeeping"] == 5.3
    assert split["memories"] == 3.9  # the pending counter is bookkeeping, not a memory write
    assert split["audit"] == 0.2


def test_a_context_calls_reads_are_split_into_window_and_reads_by_id() -> None:
    split = _by_purpose(CONTEXT_ROWS, shown=9.25)
    assert split["read_units"] == {"newest_memories_window": 4.0, "reads_by_id": 4.65, "other": 0.0}
    assert split["memories_shown"] == 9.25
    assert _by_purpose(TURN_ROWS)["read_units"]["other"] == 3.0  # the scene log's and the barrier's reads


def test_the_report_prints_both_splits_against_the_targets() -> None:
    targets = {
        "turn_write_units": {"target": 5.0, "measured": 9.95, "met": False},
        "context_read_units": {"target": 5.0, "measured": 8.65, "met": False},
    }
    lines = report._where_units_go(
        {"by_purpose": _by_purpose(TURN_ROWS)}, {"by_purpose": _by_purpose(CONTEXT_ROWS, 9.25)}, targets
    )
    text = "\n".join(lines)
    assert (
        "bookkeeping 5.3 (L0 line and its session-index entry 2.0; processed mark 1.0; scene log 1.05;"
        in text
    )
    assert "memory writes 3.9; audit 0.2. Target <= 5.0." in text
    assert "read-your-writes, strongly consistent) 4.0;" in text
    assert "without a card) 4.65, at 0.5 a memory" in text and "9.25 memories shown a call" in text
    assert report._where_units_go({}, {}, targets) == []  # a run from before the split prints nothing
