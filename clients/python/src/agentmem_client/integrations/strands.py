"""Memory tools for Strands Agents (``agentmem-client[strands]``; docs/integrations/strands.md):
``recall``, ``remember`` and ``forget`` as Strands ``@tool`` functions over one user's client.

    from strands import Agent
    from agentmem_client import AgentMemClient
    from agentmem_client.integrations.strands import memory_tools

    client = AgentMemClient("http://127.0.0.1:8080", tenant_id="acme", user_id="lin")
    agent = Agent(tools=memory_tools(client))

The tools answer the model in text (ids included, so it can forget what it recalled); what the
server refuses (a guard, a bad id) comes back as a sentence, not an exception in the loop.
"""

from __future__ import annotations

from strands import tool
from strands.tools.decorator import DecoratedFunctionTool

from agentmem_client.clients import AgentMemClient
from agentmem_client.errors import AgentMemHTTPError


def memory_tools(client: AgentMemClient, *, k: int = 5) -> list[DecoratedFunctionTool]:  # type: ignore[type-arg]
    """The three tools, bound to ``client`` (one tenant and user)."""

    @tool
    def recall(query: str) -> str:
        """Look up what is remembered about the user that is relevant to a question.

        Args:
            query: What to look for, in the user's words (any language).
        """
        try:
            memories = client.recall(query, k=k).memories
        except AgentMemHTTPError as exc:
            return f"recall failed: {exc}"
        if not memories:
            return "Nothing relevant is remembered."
        return "\n".join(f"- [{m.id}] {m.content}" for m in memories)

    @tool
    def remember(content: str, category: str = "fact") -> str:
        """Store one fact, preference or instruction about the user for later conversations.

        Args:
            content: One self-contained statement, e.g. "Prefers window seats".
            category: identity, preference, fact, episodic or general.
        """
        try:
            created = client.create_memory(content, category=category)
        except (AgentMemHTTPError, ValueError) as exc:  # refused by the server, or not a category
            return f"not stored: {exc}"
        return f"Remembered [{created.memory.id}]."

    @tool
    def forget(memory_id: str) -> str:
        """Delete a remembered item by the id that recall showed in brackets.

        Args:
            memory_id: The id, without the brackets.
        """
        try:
            deleted = client.delete_memory(memory_id).deleted
        except AgentMemHTTPError as exc:
            return f"not forgotten: {exc}"
        return "Forgotten." if deleted else "Nothing to forget under that id (unknown, or forgotten already)."

    return [recall, remember, forget]


__all__ = ["memory_tools"]
