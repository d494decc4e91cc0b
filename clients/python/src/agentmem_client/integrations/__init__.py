"""Framework integrations of the light client, each an optional extra with its own module:

- :mod:`.langgraph` (``agentmem-client[langgraph]``): a LangGraph ``BaseStore``;
- :mod:`.openai_agents` (``[openai-agents]``): an OpenAI Agents SDK ``Session``;
- :mod:`.strands` (``[strands]``): memory tools for Strands Agents.

Importing this package imports no framework; each module imports its own.
"""
