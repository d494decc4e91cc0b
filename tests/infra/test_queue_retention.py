"""The ingest queue keeps turn bodies no longer than its retries and an outage need (data at rest),
and long enough that a stopped consumer loses nothing before an operator can act."""

from __future__ import annotations

from agentmem_infra.data import Queues


def test_ingest_retention_covers_every_retry_and_no_more() -> None:
    for timeout in (10, 30, 60, 300, 900):
        retention = Queues.ingest_retention_s(timeout)
        retries = Queues.MAX_RECEIVE_COUNT * Queues.VISIBILITY_FACTOR * timeout
        assert retries <= retention <= max(Queues.MIN_INGEST_RETENTION_S, Queues.RETRY_HEADROOM * retries)
        assert 60 <= retention <= 14 * 86400
    assert Queues.DLQ_RETENTION.to_days() < 14
    # SQS expires a message whose retention runs out without moving it to the DLQ: a consumer
    # stopped overnight must not lose turns, and the DLQ (which keeps the original enqueue time
    # of a standard queue's message) must outlive the source queue's retention
    assert Queues.ingest_retention_s(60) >= 86400
    assert Queues.DLQ_RETENTION.to_seconds() > Queues.ingest_retention_s(900)
