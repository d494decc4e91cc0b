"""Who may turn a memory into an instruction (issue 9: poisoning, structurally).

A memory is data about the user; only a *policy* memory is an instruction to the agent, and the
Constraints slot shows nothing else. The rule is made by construction, at both ends:

- at write time, a policy memory exists only where an authorised caller wrote it outright: the
  memory API and the MCP ``remember`` tool refuse ``category=policy`` (and any change to or
  into a policy memory) without the :data:`POLICY_PERMISSION`; everything derived from a
  conversation (a user's or the assistant's words, the model's facts, consolidation) gets
  :func:`conversational_category`, which is never ``policy`` — a user's own standing wish
  ("always answer me in Chinese") is a preference, shown as what the user said;
- at read time, :func:`is_instruction` admits to the Constraints slot only active policy
  memories whose source is an explicit or operator write, so a record that reached the store some
  other way (older data, a bug) still never becomes an instruction.

Pure: no I/O.
"""

from __future__ import annotations

from agentmem.domain.models import Category, MemoryRecord, Source, Status

__all__ = [
    "AUTHORISED_SOURCES",
    "POLICY_PERMISSION",
    "conversational_category",
    "is_instruction",
    "touches_policy",
]

POLICY_PERMISSION = "memory:policy"
"""The permission a caller needs to write, change or re-categorise a policy memory."""

AUTHORISED_SOURCES = frozenset({Source.EXPLICIT, Source.ADMIN})
"""Sources of a write an authorised caller made outright (never derived from a conversation)."""


def conversational_category(category: Category) -> Category:
    """The category a memory derived from a conversation may have: ``policy`` becomes
    ``preference`` (the user's own standing wish is data about the user, not an instruction)."""
    return Category.PREFERENCE if category is Category.POLICY else category


def is_instruction(record: MemoryRecord) -> bool:
    """Whether ``record`` may sit in the Constraints slot: an active policy memory an authorised
    caller wrote outright."""
    return (
        record.category is Category.POLICY
        and record.source in AUTHORISED_SOURCES
        and record.status is Status.ACTIVE
    )


def touches_policy(current: Category | None, wanted: Category | None) -> bool:
    """Whether a write or change concerns a policy memory: it creates one, changes one, or
    moves a memory into or out of the policy category."""
    return current is Category.POLICY or wanted is Category.POLICY
