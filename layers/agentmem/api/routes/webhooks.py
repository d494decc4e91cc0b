"""Webhook routes (docs/events.md), operator-scoped (``webhooks:manage``, or ``admin``): register,
list and delete the caller's tenant's webhooks; list and redrive its dead-lettered deliveries.
The logic is in :mod:`agentmem.services.webhooks`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from aws_lambda_powertools.event_handler.api_gateway import Response, Router

from agentmem.api.openapi import responses
from agentmem.api.params import Body, Query
from agentmem.api.request import RequestContext
from agentmem.wire.webhooks import (
    RedriveDeliveriesIn,
    RedrivenOut,
    WebhookDeliveriesOut,
    WebhookDeliveryOut,
    WebhookIn,
    WebhookOut,
    WebhooksOut,
)

if TYPE_CHECKING:
    from agentmem.webhook_ports import Delivery, Webhook

router = Router()
req = RequestContext(router)
PERMISSION = "webhooks:manage"


@router.post(
    "/v1/webhooks",
    summary="Register a webhook for the tenant's events (its secret is in this answer only)",
    responses=responses(201, WebhookOut, "Registered", 400, 403, 500, 503),
)
def create_webhook(body: Annotated[WebhookIn, Body()]) -> Response[str]:
    p = req.principal(PERMISSION)
    hook = req.container().webhooks.create(
        p.scope.tenant_id, body.url, body.events, now=req.now(), description=body.description
    )
    out = _hook(hook, with_secret=True)
    return Response(status_code=201, content_type="application/json", body=out.model_dump_json())


@router.get(
    "/v1/webhooks",
    summary="The tenant's webhooks (without their secrets)",
    responses=responses(200, WebhooksOut, "The webhooks", 403, 500, 503),
)
def list_webhooks() -> WebhooksOut:
    p = req.principal(PERMISSION)
    return WebhooksOut(webhooks=[_hook(h) for h in req.container().webhooks.hooks(p.scope.tenant_id)])


@router.delete(
    "/v1/webhooks/<webhook_id>",
    summary="Unregister a webhook (its pending deliveries are dropped)",
    responses=responses(204, None, "Deleted", 403, 404, 500, 503),
)
def delete_webhook(webhook_id: str) -> Response[str]:
    p = req.principal(PERMISSION)
    req.container().webhooks.delete(p.scope.tenant_id, webhook_id)
    return Response(status_code=204, content_type="application/json", body="")


@router.get(
    "/v1/webhooks/deliveries/dead",
    summary="The tenant's dead-lettered deliveries, newest first",
    responses=responses(200, WebhookDeliveriesOut, "Dead deliveries", 400, 403, 500, 503),
)
def dead_deliveries(limit: Annotated[int, Query(ge=1, le=500)] = 100) -> WebhookDeliveriesOut:
    p = req.principal(PERMISSION)
    dead = req.container().webhooks.dead(p.scope.tenant_id, limit)
    return WebhookDeliveriesOut(deliveries=[_delivery(d) for d in dead])


@router.post(
    "/v1/webhooks/deliveries/redrive",
    summary="Deliver dead-lettered deliveries again (the given ids, or all of the tenant's)",
    responses=responses(200, RedrivenOut, "Redriven", 400, 403, 500, 503),
)
def redrive_deliveries(body: Annotated[RedriveDeliveriesIn, Body()]) -> RedrivenOut:
    p = req.principal(PERMISSION)
    count = req.container().webhooks.redrive(p.scope.tenant_id, body.ids, now=req.now())
    return RedrivenOut(redriven=count)


def _hook(hook: Webhook, *, with_secret: bool = False) -> WebhookOut:
    return WebhookOut(
        id=hook.webhook_id,
        url=hook.url,
        events=list(hook.events),
        description=hook.description,
        created_at=hook.created_at,
        secret=hook.secret if with_secret else None,
    )


def _delivery(d: Delivery) -> WebhookDeliveryOut:
    return WebhookDeliveryOut(
        id=d.delivery_id,
        webhook_id=d.webhook_id,
        event_id=d.event_id,
        event_type=d.event_type,
        attempts=d.attempts,
        last_error=d.last_error,
        last_attempt_at=d.last_attempt_at,
    )
