"""An OpenAI Agents SDK ``Session`` backed by agentmem (``agentmem-client[openai-agents]``;
docs/integrations/openai-agents.md).

What it keeps where:

- every finished exchange (a user message and the assistant's answer) is sent to agentmem as a
  turn of ``session_id``: the write path learns from it (long-term memory, the user's profile)
  and it enters the session window;
- ``get_items`` returns, first, one ``system`` item with agentmem's context for the latest user
  message (that session window, the relevant memories, the profile — redacted, within budgets),
  then the items added in this process (at most ``keep_items``). A new process over the same
  ``session_id`` starts from the context alone: agentmem does not hand raw turns back (its log is
  redacted and internal), so tool calls and reasoning items of an earlier process are not replayed;
- ``pop_item`` removes the newest item of this process; an exchange already sent stays a turn
  (use the memory API to delete what it wrote);
- ``clear_session`` forgets this process's items and the session's task state on the server;
  the user's memories are the user's, not the session's, and stay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agents.items import TResponseInputItem
from agents.memory.session import SessionABC

from agentmem_client.clients import AsyncAgentMemClient

CONTEXT_MARK = "agentmem context"


class AgentMemSession(SessionABC):
    def __init__(
        self,
        session_id: str,
        client: AsyncAgentMemClient,
        *,
        keep_items: int = 200,
        mode: str = "chat",
    ) -> None:
        self.session_id = session_id
        self.session_settings = None
        self._client = client
        self._items: list[TResponseInputItem] = []
        self._pending_user: str | None = None
        self._keep = keep_items
        self._mode = mode
        self._lock = asyncio.Lock()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        async with self._lock:
            items = list(self._items)
        query = next((t for t in reversed([_text(i) for i in items if _role(i) == "user"]) if t), None)
        context = await self._context(query or "What should I remember about this conversation?")
        head: list[TResponseInputItem] = []
        if context:
            head = [{"role": "system", "content": f"[{CONTEXT_MARK}]\n{context}"}]
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return head + items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        turns: list[tuple[str, str]] = []
        async with self._lock:
            for item in items:
                role, text = _role(item), _text(item)
                if role == "user" and text:
                    if self._pending_user is not None:
                        turns.append((self._pending_user, ""))  # a user message left unanswered
                    self._pending_user = text
                elif role == "assistant" and text and self._pending_user is not None:
                    turns.append((self._pending_user, text))
                    self._pending_user = None
                self._items.append(item)
            del self._items[: max(0, len(self._items) - self._keep)]
        for user, assistant in turns:
            await self._client.add_turn(self.session_id, user, assistant)

    async def pop_item(self) -> TResponseInputItem | None:
        async with self._lock:
            if not self._items:
                return None
            item = self._items.pop()
            if _role(item) == "user" and _text(item) == self._pending_user:
                self._pending_user = None
            return item

    async def clear_session(self) -> None:
        async with self._lock:
            self._items.clear()
            self._pending_user = None
        await self._client.put_session_state(self.session_id, {})

    async def _context(self, query: str) -> str:
        answer = await self._client.context(query[:4000], mode=self._mode, session_id=self.session_id)  # type: ignore[arg-type]
        return answer.context


def _role(item: Any) -> str | None:
    return item.get("role") if isinstance(item, Mapping) else getattr(item, "role", None)


def _text(item: Any) -> str:
    """The text of a message item: a plain string, or the text parts of its content list."""
    content = item.get("content") if isinstance(item, Mapping) else getattr(item, "content", None)
    if isinstance(content, str):
        return content.strip()
    parts: list[str] = []
    for part in content or []:
        text = part.get("text") if isinstance(part, Mapping) else getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts).strip()


__all__ = ["AgentMemSession"]
