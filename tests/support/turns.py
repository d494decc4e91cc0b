"""Test data of the session log shared by the TurnLog contract suite and adapter-specific tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentmem.ports import RawTurnRecord

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def raw(message_id: str, minute: int, session: str = "s1", **extra: object) -> RawTurnRecord:
    """An L0 line ``minute`` minutes after :data:`T0`; ``extra`` lands in its ``extra`` field."""
    return RawTurnRecord(
        message_id=message_id,
        session_id=session,
        at=T0 + timedelta(minutes=minute),
        user=f"user {message_id}",
        assistant=f"assistant {message_id}",
        trace_id=f"tr-{message_id}",
        extra=dict(extra),
    )
