"""Request and response models of the webhook routes (docs/events.md). The shared models are
:mod:`.models`."""

# No `from __future__ import annotations`: pydantic takes these annotations as objects.

from datetime import datetime

from pydantic import ConfigDict, Field

from .examples import EXAMPLES
from .models import ApiModel


class WebhookIn(ApiModel):
    """A receiver of the caller's tenant's events."""

    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["WebhookIn"]})

    url: str = Field(
        min_length=1, max_length=2048, description="http:// or https:// URL that receives POSTs."
    )
    events: list[str] = Field(
        default_factory=lambda: ["*"],
        min_length=1,
        max_length=20,
        description="Event types (turn.processed, memory.created ...), a family (memory.*) or * (all).",
    )
    description: str = Field("", max_length=200)


class WebhookOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["WebhookOut"]})

    id: str
    url: str
    events: list[str]
    description: str
    created_at: datetime
    secret: str | None = Field(
        None, description="The signing secret: in the answer to its creation only, never again."
    )


class WebhooksOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["WebhooksOut"]})

    webhooks: list[WebhookOut]


class WebhookDeliveryOut(ApiModel):
    """A dead-lettered delivery: ids, attempts and the last error (the event is content-free)."""

    id: str
    webhook_id: str
    event_id: str
    event_type: str
    attempts: int
    last_error: str
    last_attempt_at: datetime | None


class WebhookDeliveriesOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["WebhookDeliveriesOut"]})

    deliveries: list[WebhookDeliveryOut]


class RedriveDeliveriesIn(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["RedriveDeliveriesIn"]})

    ids: list[str] | None = Field(
        None, max_length=500, description="The deliveries to redrive; absent: all dead."
    )


class RedrivenOut(ApiModel):
    model_config = ConfigDict(json_schema_extra={"examples": EXAMPLES["RedrivenOut"]})

    redriven: int
