"""The read path: ``POST /v1/context`` (the system-prompt prefix) and ``POST /v1/recall``, both
with an optional ``as_of`` (time travel: the memories valid then)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.metrics import MetricUnit

from agentmem.api import convert
from agentmem.api.openapi import responses
from agentmem.api.params import Body
from agentmem.api.request import RequestContext
from agentmem.wire.models import ContextIn, ContextOut, RecallIn, RecallOut, SlotOut

router = Router()
req = RequestContext(router)
# Shares Powertools' metric set with the api λ's Metrics (same namespace), flushed per invocation.
metrics = Metrics(namespace="agentmem", service="api")


def _count_degraded(degraded: list[str]) -> None:
    for component in degraded:
        metrics.add_metric(name=f"Degraded_{component}", unit=MetricUnit.Count, value=1)


@router.post(
    "/v1/context",
    summary="Assemble the memory context (system-prompt prefix) for a query",
    responses=responses(200, ContextOut, "The context and what it used", 400, 403, 413, 415, 422, 503),
)
def post_context(body: Annotated[ContextIn, Body()]) -> ContextOut:
    from agentmem.domain.context import Mode  # with the container: not a cold start's import

    p = req.principal()
    result = req.container().context.build(
        p.scope,
        body.query,
        mode=Mode(body.mode),
        now=req.now(body.at),
        session_id=body.session_id,
        as_of=body.as_of,
    )
    ctx = result.context
    _count_degraded(result.degraded)
    return ContextOut(
        context=ctx.text,
        mode=ctx.mode.value,
        memories=[convert.memory_out(s.record, s) for s in result.memories],
        slots={
            slot.name.value: SlotOut(
                items=[i.text for i in slot.items], chars=slot.chars, dropped=slot.dropped
            )
            for slot in ctx.slots
        },
        degraded=result.degraded,
        missing_required_slots=[name.value for name in ctx.missing_required],
    )


@router.post(
    "/v1/recall",
    summary="Recall the k best memories for a query",
    responses=responses(
        200, RecallOut, "The memories, best first, with score components", 400, 403, 413, 415, 422, 503
    ),
)
def post_recall(body: Annotated[RecallIn, Body()]) -> RecallOut:
    p = req.principal()
    result = req.container().recall.recall(
        p.scope, body.query, k=body.k, now=req.now(body.at), categories=body.categories, as_of=body.as_of
    )
    _count_degraded(result.degraded)
    return RecallOut(
        memories=[convert.memory_out(s.record, s) for s in result.memories], degraded=result.degraded
    )
