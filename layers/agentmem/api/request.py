"""The request in progress, as routes see it: the container it runs against (set by
:func:`agentmem.api.app.resolve`), the caller, the time and the request id. One instance per
route module, bound to that module's router."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from agentmem.api.auth import Principal, principal_from
from agentmem.bootstrap import Container


@dataclass(frozen=True)
class RequestContext:
    router: Router

    def container(self) -> Container:
        container: Container = self.router.context["container"]
        return container

    def event(self) -> APIGatewayProxyEvent:
        """The API Gateway REST proxy event in progress (the resolver is an APIGatewayRestResolver)."""
        event = self.router.current_event
        assert isinstance(event, APIGatewayProxyEvent)
        return event

    def principal(self, permission: str = "memory:read") -> Principal:
        """The caller, from the authorizer context only, holding ``permission`` (else 401/403)."""
        ctx = self.event().request_context
        p = principal_from(ctx.authorizer.raw_event if ctx.authorizer else None)
        p.require(permission)
        return p

    def now(self, at: datetime | None = None) -> datetime:
        return at or self.container().clock.now()

    def request_id(self) -> str:
        return self.event().request_context.request_id or uuid.uuid4().hex

    def body(self) -> str:
        return self.event().body or ""
