"""The api function can reach the ingest DLQ (the dead-letter routes): its URL in the settings and
exactly the three SQS actions a listing and a redrive use, on the DLQ only, for the api only."""

from __future__ import annotations

from typing import Any

import pytest
from test_infra_stack import FUNCTIONS, actions_on, fn_id, fn_statements

pytestmark = pytest.mark.xdist_group("cdk")

DLQ_ACTIONS = {"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage"}


def test_only_the_api_reads_and_redrives_the_ingest_dlq(synth: Any) -> None:
    s = synth("staging")
    dlq = s.logical_id(s.stack.queues.ingest_dlq)
    for name in FUNCTIONS:
        granted = actions_on(fn_statements(s, name), dlq)
        assert granted == (DLQ_ACTIONS if name == "api" else set()), name
    env = s.resources[fn_id(s, "api")]["Properties"]["Environment"]["Variables"]
    assert dlq in str(env["AGENTMEM_DLQ_URL"])  # a reference to the queue, not a fixed URL
