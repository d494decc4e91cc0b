"""The in-memory :class:`~agentmem.webhook_ports.WebhookRegistry`: each tenant's webhooks in the
order they were added; an id removes only its own tenant's webhook, once."""

from __future__ import annotations

from agentmem.webhook_ports import Webhook, WebhookRegistry
from support.fakes.memory import Switchable


class InMemoryWebhooks(Switchable, WebhookRegistry):
    """:class:`~agentmem.webhook_ports.WebhookRegistry` keyed by (tenant, webhook id)."""

    store_name = "webhooks"

    def __init__(self) -> None:
        super().__init__()
        self._hooks: dict[tuple[str, str], Webhook] = {}

    def add(self, hook: Webhook) -> None:
        with self._lock:
            self._enter("add")
            self._hooks[(hook.tenant_id, hook.webhook_id)] = hook

    def list_hooks(self, tenant_id: str) -> list[Webhook]:
        with self._lock:
            self._enter("list_hooks")
            mine = [h for (tenant, _), h in self._hooks.items() if tenant == tenant_id]
            return sorted(mine, key=lambda h: h.created_at)

    def remove(self, tenant_id: str, webhook_id: str) -> bool:
        with self._lock:
            self._enter("remove")
            return self._hooks.pop((tenant_id, webhook_id), None) is not None
